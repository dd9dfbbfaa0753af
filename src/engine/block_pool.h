// Free ciphertext blocks shared by every connection of one environment, so
// an idle connection holds none and a busy one allocates none in steady
// state. One per environment (thread): no locking.
#ifndef TLSWRAP_BLOCK_POOL_H_
#define TLSWRAP_BLOCK_POOL_H_

#include <cstddef>
#include <memory>
#include <vector>

namespace tlswrap {

class BlockPool {
 public:
  static constexpr size_t kBlockSize = 64 * 1024;
  // Free blocks kept for reuse; beyond this they go back to malloc. Enough
  // for a few connections' bursts and writes in flight, small next to the
  // memory of the connections that need them.
  static constexpr size_t kMaxFree = 16;

  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  std::unique_ptr<char[]> Take() {
    if (free_.empty()) {
      // Uninitialised on purpose: a block is always written before it is read.
      return std::unique_ptr<char[]>(new char[kBlockSize]);
    }
    std::unique_ptr<char[]> block = std::move(free_.back());
    free_.pop_back();
    return block;
  }

  void Give(std::unique_ptr<char[]> block) {
    if (free_.size() < kMaxFree) free_.push_back(std::move(block));
  }

 private:
  std::vector<std::unique_ptr<char[]>> free_;
};

}  // namespace tlswrap

#endif  // TLSWRAP_BLOCK_POOL_H_
