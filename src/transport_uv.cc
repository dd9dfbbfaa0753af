#include "transport_uv.h"

#ifndef _WIN32
#include <fcntl.h>
#include <unistd.h>
#endif

namespace tlswrap {

UvTransport::UvTransport(Owner* owner, CipherBuffer* input, std::shared_ptr<BlockPool> pool)
    : owner_(owner), input_(input), pending_(std::move(pool)) {
  tcp_.data = this;
}

UvTransport::~UvTransport() = default;

int UvTransport::Open(uv_loop_t* loop, int fd) {
#ifdef _WIN32
  (void)loop;
  (void)fd;
  return UV_ENOTSUP;
#else
  // A duplicate, so node may close its own handle (and fd) without ending
  // the connection.
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return uv_translate_sys_error(errno);
  int err = uv_tcp_init(loop, &tcp_);
  if (err != 0) {
    close(own);
    return err;
  }
  err = uv_tcp_open(&tcp_, own);
  if (err != 0) {
    close(own);
    // The handle is initialised: it has to be closed like an open one.
    open_ = true;
    return err;
  }
  open_ = true;
  ReadStart();
  return 0;
#endif
}

void UvTransport::ReadStart() {
  if (!open_ || closing_ || reading_ || read_done_) return;
  if (uv_read_start(stream(), OnAlloc, OnRead) == 0) reading_ = true;
}

void UvTransport::ReadStop() {
  if (!open_ || closing_ || !reading_) return;
  uv_read_stop(stream());
  reading_ = false;
}

void UvTransport::OnAlloc(uv_handle_t* handle, size_t /*suggested*/, uv_buf_t* buf) {
  auto* self = static_cast<UvTransport*>(handle->data);
  // Straight into the engine's input: no copy between socket and OpenSSL's BIO.
  size_t avail;
  char* base = self->input_->ReserveAtLeast(kMinRead, &avail);
  *buf = uv_buf_init(base, static_cast<unsigned int>(avail));
}

void UvTransport::OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* /*buf*/) {
  auto* self = static_cast<UvTransport*>(stream->data);
  if (nread > 0) {
    self->input_->Commit(static_cast<size_t>(nread));
    self->owner_->OnTransportRead();
    return;
  }
  // Nothing came (EAGAIN, EOF, an error): the block reserved for this read
  // goes back to the pool.
  self->input_->ReleaseUnused();
  if (nread < 0) self->read_done_ = true;
  if (nread == UV_EOF) {
    self->ReadStop();
    self->owner_->OnTransportEOF();
  } else if (nread < 0) {
    self->ReadStop();
    self->owner_->OnTransportReadError(static_cast<int>(nread));
  }
}

bool UvTransport::Write(Napi::Env /*env*/, CipherBuffer* out) {
  out->MoveAllTo(&pending_);
  if (!open_ || closing_) {
    pending_.Clear();
    return true;
  }
  if (in_flight_ == 0) Flush();
  return pending_.size() < kHighWater;
}

void UvTransport::Flush() {
  const char* bases[kMaxSegments];
  size_t lengths[kMaxSegments];
  while (!pending_.empty() && in_flight_ == 0 && !closing_) {
    size_t n = pending_.Segments(bases, lengths, kMaxSegments);
    uv_buf_t bufs[kMaxSegments];
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
      bufs[i] = uv_buf_init(const_cast<char*>(bases[i]), static_cast<unsigned int>(lengths[i]));
      total += lengths[i];
    }
    int written = uv_try_write(stream(), bufs, static_cast<unsigned int>(n));
    if (written == UV_EAGAIN || written == UV_ENOSYS) written = 0;
    if (written < 0) {
      WriteFailed(written);
      return;
    }
    pending_.Consume(static_cast<size_t>(written));
    flushed_ += static_cast<size_t>(written);
    if (static_cast<size_t>(written) == total) continue;
    // The kernel is full: hand libuv what is left of these segments. The
    // blocks stay where they are (only the tail of pending_ grows) until
    // OnWrite consumes them.
    size_t skip = static_cast<size_t>(written);
    size_t first = 0;
    while (skip >= bufs[first].len) skip -= bufs[first++].len;
    bufs[first].base += skip;
    bufs[first].len -= static_cast<unsigned int>(skip);
    in_flight_ = total - static_cast<size_t>(written);
    int err = uv_write(&write_req_, stream(), bufs + first, static_cast<unsigned int>(n - first),
                       OnWrite);
    if (err != 0) {
      in_flight_ = 0;
      WriteFailed(err);
    }
    return;
  }
  MaybeShutdown();
}

void UvTransport::OnWrite(uv_write_t* req, int status) {
  auto* self = static_cast<UvTransport*>(req->handle->data);
  self->pending_.Consume(self->in_flight_);
  if (status == 0) self->flushed_ += self->in_flight_;
  self->in_flight_ = 0;
  if (status == UV_ECANCELED || self->closing_) return;
  if (status < 0) {
    self->WriteFailed(status);
    return;
  }
  self->Flush();
  if (!self->closing_) self->owner_->OnTransportDrain();
}

void UvTransport::WriteFailed(int err) {
  pending_.Clear();
  owner_->OnTransportWriteError(err);
  // The owner may ignore it (after its close_notify, as node:tls does): the
  // half-close it asked for must still come, or it would wait for ever.
  MaybeShutdown();
}

bool UvTransport::Shutdown() {
  shutdown_wanted_ = true;
  MaybeShutdown();
  return true;
}

void UvTransport::MaybeShutdown() {
  if (!shutdown_wanted_ || shutdown_started_ || closing_ || !pending_.empty() || in_flight_ != 0) {
    return;
  }
  shutdown_started_ = true;
  if (!open_ || uv_shutdown(&shutdown_req_, stream(), OnShutdown) != 0) {
    owner_->OnTransportShutdown();
  }
}

void UvTransport::OnShutdown(uv_shutdown_t* req, int /*status*/) {
  auto* self = static_cast<UvTransport*>(req->handle->data);
  if (self->closing_) return;
  // A failed shutdown (the peer reset first) changes nothing for the caller:
  // the read side reports what happened.
  self->owner_->OnTransportShutdown();
}

int UvTransport::fd() const {
  uv_os_fd_t fd = -1;
  if (!open_ || closing_ || uv_fileno(reinterpret_cast<const uv_handle_t*>(&tcp_), &fd) != 0)
    return -1;
  return fd;
}

int UvTransport::GetName(bool peer, sockaddr_storage* out) const {
  if (!open_ || closing_) return UV_EBADF;
  auto* addr = reinterpret_cast<sockaddr*>(out);
  int len = sizeof(*out);
  return peer ? uv_tcp_getpeername(&tcp_, addr, &len) : uv_tcp_getsockname(&tcp_, addr, &len);
}

int UvTransport::SetNoDelay(bool enable) {
  return open_ && !closing_ ? uv_tcp_nodelay(&tcp_, enable ? 1 : 0) : 0;
}

int UvTransport::SetKeepAlive(bool enable, unsigned int delay_seconds) {
  return open_ && !closing_ ? uv_tcp_keepalive(&tcp_, enable ? 1 : 0, delay_seconds) : 0;
}

void UvTransport::Ref() {
  if (open_ && !closing_) uv_ref(reinterpret_cast<uv_handle_t*>(&tcp_));
}

void UvTransport::Unref() {
  if (open_ && !closing_) uv_unref(reinterpret_cast<uv_handle_t*>(&tcp_));
}

void UvTransport::Close() {
  if (closing_) return;
  closing_ = true;
  if (!open_) {
    owner_->OnTransportClosed();
    return;
  }
  // (libuv refuses a reset once a shutdown has started: the FIN is out.)
  if (reset_on_close_ && uv_tcp_close_reset(&tcp_, OnClose) == 0) return;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), OnClose);
}

void UvTransport::Abandon(std::unique_ptr<UvTransport> transport) {
  if (!transport->open_) return;  // never initialised: plain destruction
  UvTransport* raw = transport.release();
  raw->closing_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&raw->tcp_), OnAbandonedClose);
}

void UvTransport::OnAbandonedClose(uv_handle_t* handle) {
  // Owned again only to be freed, now that libuv is done with the handle.
  std::unique_ptr<UvTransport> owned(static_cast<UvTransport*>(handle->data));
}

void UvTransport::OnClose(uv_handle_t* handle) {
  auto* self = static_cast<UvTransport*>(handle->data);
  self->pending_.Clear();
  self->owner_->OnTransportClosed();
}

}  // namespace tlswrap
