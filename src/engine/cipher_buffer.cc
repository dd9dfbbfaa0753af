#include "cipher_buffer.h"

#include <algorithm>
#include <cstring>

namespace tlswrap {

CipherBuffer::Block& CipherBuffer::TailWithSpace(size_t min) {
  if (blocks_.empty() || kBlockSize - blocks_.back().end < min) {
    if (!blocks_.empty() && blocks_.back().begin == blocks_.back().end) {
      // A drained tail is rewound rather than left stranded.
      blocks_.back().begin = blocks_.back().end = 0;
    } else {
      Block block;
      block.data = pool_->Take();
      blocks_.push_back(std::move(block));
    }
  }
  return blocks_.back();
}

void CipherBuffer::Retire(Block&& block) {
  pool_->Give(std::move(block.data));
}

void CipherBuffer::Append(const char* data, size_t len) {
  while (len > 0) {
    size_t avail;
    char* dst = Reserve(&avail);
    size_t n = std::min(avail, len);
    std::memcpy(dst, data, n);
    Commit(n);
    data += n;
    len -= n;
  }
}

char* CipherBuffer::Reserve(size_t* avail) {
  return ReserveAtLeast(1, avail);
}

char* CipherBuffer::ReserveAtLeast(size_t min, size_t* avail) {
  Block& tail = TailWithSpace(min);
  *avail = kBlockSize - tail.end;
  return tail.data.get() + tail.end;
}

void CipherBuffer::MoveAllTo(CipherBuffer* dst) {
  for (Block& block : blocks_) {
    if (block.end > block.begin) {
      dst->blocks_.push_back(std::move(block));
    } else {
      Retire(std::move(block));
    }
  }
  dst->size_ += size_;
  blocks_.clear();
  size_ = 0;
}

size_t CipherBuffer::Segments(const char** bases, size_t* lengths, size_t max) const {
  size_t n = 0;
  for (const Block& block : blocks_) {
    if (n == max) break;
    if (block.end == block.begin) continue;
    bases[n] = block.data.get() + block.begin;
    lengths[n] = block.end - block.begin;
    n++;
  }
  return n;
}

void CipherBuffer::Commit(size_t n) {
  blocks_.back().end += n;
  size_ += n;
  committed_ += n;
}

const char* CipherBuffer::Front(size_t* len) const {
  if (size_ == 0) {
    *len = 0;
    return nullptr;
  }
  const Block& head = blocks_.front();
  *len = head.end - head.begin;
  return head.data.get() + head.begin;
}

void CipherBuffer::Consume(size_t n) {
  size_ -= n;
  while (n > 0) {
    Block& head = blocks_.front();
    size_t take = std::min(n, head.end - head.begin);
    head.begin += take;
    n -= take;
    if (head.begin == head.end) {
      Retire(std::move(head));
      blocks_.pop_front();
    }
  }
  // Drained: an idle connection keeps no block.
  if (size_ == 0) Clear();
}

size_t CipherBuffer::Read(char* out, size_t len) {
  size_t total = 0;
  while (total < len && size_ > 0) {
    size_t avail;
    const char* src = Front(&avail);
    size_t n = std::min(avail, len - total);
    std::memcpy(out + total, src, n);
    Consume(n);
    total += n;
  }
  return total;
}

void CipherBuffer::CopyTo(char* out) const {
  for (const Block& block : blocks_) {
    size_t n = block.end - block.begin;
    std::memcpy(out, block.data.get() + block.begin, n);
    out += n;
  }
}

void CipherBuffer::ReleaseUnused() {
  while (!blocks_.empty() && blocks_.back().begin == blocks_.back().end) {
    Retire(std::move(blocks_.back()));
    blocks_.pop_back();
  }
}

void CipherBuffer::Clear() {
  while (!blocks_.empty()) {
    Retire(std::move(blocks_.front()));
    blocks_.pop_front();
  }
  size_ = 0;
}

namespace {

CipherBuffer* BufferOf(BIO* bio) {
  return static_cast<CipherBuffer*>(BIO_get_data(bio));
}

int BioWrite(BIO* bio, const char* data, int len) {
  BIO_clear_retry_flags(bio);
  if (len <= 0) return 0;
  BufferOf(bio)->Append(data, static_cast<size_t>(len));
  return len;
}

int BioRead(BIO* bio, char* out, int len) {
  BIO_clear_retry_flags(bio);
  CipherBuffer* buffer = BufferOf(bio);
  if (buffer->empty() || buffer->reads_held()) {
    BIO_set_retry_read(bio);
    return -1;
  }
  return static_cast<int>(buffer->Read(out, static_cast<size_t>(len)));
}

long BioCtrl(BIO* bio, int cmd, long num, void* ptr) {
  (void)num;
  (void)ptr;
  switch (cmd) {
    case BIO_CTRL_PENDING:
      return BufferOf(bio)->reads_held() ? 0 : static_cast<long>(BufferOf(bio)->size());
    case BIO_CTRL_WPENDING:
      return 0;
    case BIO_CTRL_FLUSH:
    case BIO_CTRL_DUP:
      return 1;
    case BIO_CTRL_EOF:
      return 0;
    default:
      return 0;
  }
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// The method table is immutable once built, so one per process is safe to
// share between worker threads; it is deliberately never freed.
const BIO_METHOD* CipherBioMethod() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tlswrap ciphertext");
    BIO_meth_set_write(m, BioWrite);
    BIO_meth_set_read(m, BioRead);
    BIO_meth_set_ctrl(m, BioCtrl);
    BIO_meth_set_create(m, BioCreate);
    return m;
  }();
  return method;
}

}  // namespace

BIO* CipherBuffer::NewBio(CipherBuffer* buffer) {
  BIO* bio = BIO_new(CipherBioMethod());
  if (bio != nullptr) BIO_set_data(bio, buffer);
  return bio;
}

}  // namespace tlswrap
