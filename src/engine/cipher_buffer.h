// A FIFO of ciphertext bytes in fixed-size blocks, and the BIO that lets
// OpenSSL read and write it. Unlike BIO_s_mem it never moves data that is
// already buffered: consumed blocks go back to the environment's BlockPool,
// and an empty buffer holds no block at all.
#ifndef TLSWRAP_CIPHER_BUFFER_H_
#define TLSWRAP_CIPHER_BUFFER_H_

#include <openssl/bio.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "block_pool.h"
#include "fifo.h"

namespace tlswrap {

class CipherBuffer {
 public:
  static constexpr size_t kBlockSize = BlockPool::kBlockSize;

  explicit CipherBuffer(std::shared_ptr<BlockPool> pool) : pool_(std::move(pool)) {}
  CipherBuffer(const CipherBuffer&) = delete;
  CipherBuffer& operator=(const CipherBuffer&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes ever committed (appended), not counting blocks moved in whole.
  uint64_t committed() const { return committed_; }

  void Append(const char* data, size_t len);
  // Writable space at the tail (at least one byte); Commit() what was filled.
  char* Reserve(size_t* avail);
  // As Reserve(), but at least `min` bytes (a fresh block if the tail has less).
  char* ReserveAtLeast(size_t min, size_t* avail);
  void Commit(size_t n);

  // Contiguous readable bytes at the head (nullptr when empty).
  const char* Front(size_t* len) const;
  void Consume(size_t n);
  size_t Read(char* out, size_t len);
  // Copies everything out without consuming; `out` holds size() bytes.
  void CopyTo(char* out) const;
  // Drops every byte and returns every block to the pool.
  void Clear();
  // Returns the blocks at the tail that hold no bytes (reserved for a read
  // that brought nothing), also while a partial record waits at the head.
  void ReleaseUnused();
  // Moves every buffered block to the end of `dst` without copying bytes.
  void MoveAllTo(CipherBuffer* dst);
  // The readable bytes as up to `max` (pointer, length) segments, from the head.
  size_t Segments(const char** bases, size_t* lengths, size_t max) const;

  // A BIO over `buffer`, which must outlive it. Reads from an empty buffer
  // ask to be retried (SSL_ERROR_WANT_READ), they never report EOF: the
  // transport tells the engine about EOF itself.
  static BIO* NewBio(CipherBuffer* buffer);
  // While held, the BIO reads as empty whatever is buffered: OpenSSL stops
  // at the next record boundary (SSL_ERROR_WANT_READ).
  void set_reads_held(bool held) { reads_held_ = held; }
  bool reads_held() const { return reads_held_; }

 private:
  struct Block {
    std::unique_ptr<char[]> data;
    size_t begin = 0;
    size_t end = 0;
  };
  // The tail block, with at least `min` bytes free.
  Block& TailWithSpace(size_t min);
  void Retire(Block&& block);

  // Shared ownership: node tears down connections and the environment's
  // data in no guaranteed order.
  std::shared_ptr<BlockPool> pool_;
  Fifo<Block> blocks_;
  size_t size_ = 0;
  uint64_t committed_ = 0;
  bool reads_held_ = false;
};

}  // namespace tlswrap

#endif  // TLSWRAP_CIPHER_BUFFER_H_
