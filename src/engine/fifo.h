// A first-in first-out queue over a vector. It replaces std::deque for the
// per-connection queues: libstdc++'s deque allocates a map and a 512-byte
// node as soon as it is constructed, so five of them cost an idle connection
// about 3 KiB. An empty Fifo holds no memory.
#ifndef TLSWRAP_FIFO_H_
#define TLSWRAP_FIFO_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace tlswrap {

template <typename T>
class Fifo {
 public:
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;

  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  // Slots held, popped ones included (what the queue costs in memory).
  size_t capacity() const { return items_.capacity(); }

  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  T& back() { return items_.back(); }
  const T& back() const { return items_.back(); }

  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return items_.end(); }

  void push_back(T&& item) { items_.push_back(std::move(item)); }
  void push_back(const T& item) { items_.push_back(item); }

  void pop_front() {
    // What the element owns goes now, not when the slot is reused.
    { [[maybe_unused]] T gone = std::move(items_[head_]); }
    head_++;
    if (empty()) {
      clear();
    } else if (head_ >= kCompactAt && head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), begin());
      head_ = 0;
    }
  }

  void pop_back() {
    items_.pop_back();
    if (empty()) clear();
  }

  // A burst's capacity is not kept by a connection that goes quiet.
  void clear() {
    if (items_.capacity() > kKeepCapacity) {
      std::vector<T>().swap(items_);
    } else {
      items_.clear();
    }
    head_ = 0;
  }

 private:
  static constexpr size_t kCompactAt = 32;
  static constexpr size_t kKeepCapacity = 8;

  std::vector<T> items_;
  size_t head_ = 0;  // items_[0, head_) are popped, moved-from slots
};

}  // namespace tlswrap

#endif  // TLSWRAP_FIFO_H_
