// The engine's write side: what the embedder writes, queued, grouped into
// as few TLS records as possible (the chunks of one writev), encrypted in
// bounded slices where it lies, and reported done once its ciphertext is in
// the kernel. The pump that calls ClearIn is in engine.cc.
#include <algorithm>
#include <climits>

#include "engine.h"

namespace tlswrap {

namespace {

int ClampInt(size_t n) {
  return static_cast<int>(std::min<size_t>(n, INT_MAX));
}

}  // namespace

bool Engine::EncryptQueuedWrite() {
  if (dead() || phase_ == Phase::kNew) return false;
  Batch made;
  bool more = ClearIn(&made) && phase_ != Phase::kFailed;
  // What it found wrong (a write whose memory is gone, an error) is left for
  // the next Step(): the connection may not be on its way out.
  for (Event& e : made.events) QueueEvent(e.type, std::move(e.payload), e.value);
  return more;
}

bool Engine::TakeFlushedWrite(uint64_t id) {
  if (dead() || done_.empty() || done_.front().id != id ||
      done_.front().ciphertext_end > flushed_) {
    return false;
  }
  done_.pop_front();
  return true;
}

WriteSource* Engine::QueuedWrite(uint64_t id) {
  // Newest first: the embedder asks about the write it has just made.
  for (auto it = writes_.end(); it != writes_.begin();) {
    --it;
    if (it->id == id) return it->source.get();
  }
  return nullptr;
}

// The bytes ClearIn stages for `w`: the small pieces from where it stands, up
// to a slice or the first large piece after them, and as much of that large
// piece as fills the last record. Without that fill a frame header before each
// payload (HTTP/2's 9 bytes) went out as a record of its own; with it the
// records are full and the large piece goes on in place, so at most one
// record's worth of it is copied. From the lengths alone; a piece whose
// memory is gone only stops the copy early.
static_assert(Engine::kStageThreshold == SSL3_RT_MAX_PLAIN_LENGTH,
              "the fill rounds to whole records");
static_assert(Engine::kWriteSlice % Engine::kStageThreshold == 0, "a slice is whole records");
size_t Engine::StagedSize(const PendingWrite& w) {
  size_t total = 0;
  size_t off = w.offset;
  for (size_t p = w.piece; p < w.source->count() && total < kWriteSlice; p++) {
    size_t avail = w.source->size(p) - off;
    if (avail >= kStageThreshold && total > 0) {
      // avail >= kStageThreshold == one record, and a slice is whole records.
      size_t partial = total % kStageThreshold;
      if (partial != 0) total += kStageThreshold - partial;
      break;
    }
    total += std::min(avail, kWriteSlice - total);
    off = 0;
  }
  return total;
}

bool Engine::ClearIn(Batch* out) {
  size_t encrypted = 0;  // plaintext bytes SSL_write took in this call
  while (!writes_.empty() && established() && !transport_blocked_) {
    PendingWrite* w = &writes_.front();
    if (w->piece == w->source->count() && !retrying_) {
      done_.push_back(DoneMark{w->id, enc_out_.committed()});
      writes_.pop_front();
      continue;
    }
    // Written after a renegotiation or ticket was asked for: goes behind it.
    if (kick_handshake_ && w->seq > kick_seq_ && !retrying_) return encrypted > 0;
    if (!retrying_ && w->source->size(w->piece) == 0) {
      // Nothing to encrypt: SSL_write() of 0 bytes returns 0, which reads
      // as a failure with no error code (found by fuzz/pair_mutator).
      w->piece++;
      continue;
    }
    const char* data = retry_.data();
    size_t len = retry_.size();
    if (!retrying_) {
      const char* base;
      if (!w->source->Get(w->piece, &base)) {
        // The write's memory was taken away (a detached ArrayBuffer) while it
        // waited: what is left of the stream cannot be sent as written.
        QueueEvent(EventType::kWriteGone, std::string(), w->id);
        Fail(Failure());
        TakeEvents(out);
        return true;
      }
      size_t rest = w->source->size(w->piece) - w->offset;
      if (rest >= kStageThreshold || w->piece + 1 == w->source->count()) {
        // Large (or alone): encrypt in place, in slices.
        data = base + w->offset;
        len = std::min(rest, kWriteSlice);
      } else {
        // Small chunks share one staging block, so they share records too.
        staging_.clear();
        // Sized to what this slice stages, not to a whole slice: a 256 KiB
        // block made for a 1 KiB response and freed when the connection went
        // idle cost a large malloc and free per keep-alive request.
        const size_t want = StagedSize(*w);
        staging_.reserve(want);
        size_t p = w->piece;
        size_t off = w->offset;
        const char* next = base;
        while (true) {
          size_t take = std::min(w->source->size(p) - off, want - staging_.size());
          staging_.insert(staging_.end(), next + off, next + off + take);
          if (staging_.size() == want) break;
          off = 0;
          // A later piece that is gone is found when it comes first.
          if (++p == w->source->count() || !w->source->Get(p, &next)) break;
        }
        data = staging_.data();
        len = staging_.size();
      }
    }

    if (!retrying_ && RenegotiationUnderway()) {
      // SSL_write drives the handshake, and its ALPN or PSK callback runs
      // JS, which may detach the memory `data` points into (or write, and
      // restage): OpenSSL gets a copy, kept as for a retry.
      retry_.assign(data, data + len);
      retrying_ = true;
      data = retry_.data();
    }
    int ret;
    int err = SSL_ERROR_NONE;
    Failure failure;
    {
      ErrorQueueGuard guard;
      ret = SSL_write(ssl(), data, ClampInt(len));
      if (ret <= 0) {
        err = SSL_get_error(ssl(), ret);
        failure = FailureOf(err);
      }
    }
    if (dead()) return false;
    // A Delegate call under SSL_write (an ALPN or PSK callback in a
    // renegotiation) may have queued a write: writes_ may have moved.
    w = &writes_.front();
    if (ret <= 0) {
      if (err == SSL_ERROR_WANT_READ && read_closed_) {
        // The handshake this write waits behind needs the peer's answer, and
        // the peer has closed (close_notify, EOF): it would wait for ever.
        // node:tls's SSL_write fails here too.
        failure.code = ERR_PACK(ERR_LIB_SSL, 0, SSL_R_PROTOCOL_IS_SHUTDOWN);
        Fail(std::move(failure));
        TakeEvents(out);
        return true;
      }
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        // Mid-renegotiation: the same bytes must be offered again later.
        if (!retrying_) {
          retry_.assign(data, data + len);
          retrying_ = true;
        }
        return encrypted > 0;
      }
      Fail(std::move(failure));
      TakeEvents(out);
      return true;
    }
    retrying_ = false;
    retry_.clear();
    size_t done = static_cast<size_t>(ret);
    encrypted += done;
    while (done > 0) {
      size_t size = w->source->size(w->piece);
      size_t take = std::min(done, size - w->offset);
      w->offset += take;
      done -= take;
      if (w->offset == size) {
        w->piece++;
        w->offset = 0;
      }
    }
    // A slice's worth of ciphertext goes to the transport before more is
    // made, so a big write never turns into a big ciphertext buffer; smaller
    // SSL_writes (staged pieces, one record each) go on up to that, so
    // they still leave in one transport write.
    if (encrypted >= kWriteSlice) return true;
  }
  return encrypted > 0;
}

bool Engine::CollectFlushedWrites(Batch* out) {
  bool any = false;
  // A write is done once its ciphertext is in the kernel, as with node:tls.
  while (!done_.empty() && done_.front().ciphertext_end <= flushed_) {
    out->events.push_back(Event{EventType::kWriteDone, 0, std::string(), done_.front().id});
    done_.pop_front();
    any = true;
  }
  return any;
}

}  // namespace tlswrap
