// The native transport: the connection's own libuv TCP handle, opened on a
// duplicate of the socket's fd, so ciphertext never enters JavaScript. Reads
// land directly in the engine's input buffer; writes go out from the
// engine's ciphertext blocks, uv_try_write first, uv_write for the rest.
#ifndef TLSWRAP_TRANSPORT_UV_H_
#define TLSWRAP_TRANSPORT_UV_H_

#include <napi.h>
#include <uv.h>

#include <memory>

#include "transport.h"

namespace tlswrap {

class UvTransport : public Transport {
 public:
  // What the engine hears from the transport, always from a libuv callback.
  class Owner {
   public:
    virtual void OnTransportRead() = 0;  // new bytes are in the input buffer
    virtual void OnTransportEOF() = 0;
    virtual void OnTransportReadError(int uv_error) = 0;
    // What was pending is dropped; a shutdown asked for still happens.
    virtual void OnTransportWriteError(int uv_error) = 0;
    // A write completed (flushed() grew); blocked() may have changed.
    virtual void OnTransportDrain() = 0;
    virtual void OnTransportShutdown() = 0;
    virtual void OnTransportClosed() = 0;

   protected:
    ~Owner() = default;
  };

  // Ciphertext pending beyond this makes Write() ask the engine to wait. One
  // write slice (Engine::kWriteSlice): lower, the engine stops after every
  // slice the kernel takes only part of, and the saving of larger slices
  // is lost.
  static constexpr size_t kHighWater = 1024 * 1024;

  UvTransport(Owner* owner, CipherBuffer* input, std::shared_ptr<BlockPool> pool);
  ~UvTransport() override;
  UvTransport(const UvTransport&) = delete;
  UvTransport& operator=(const UvTransport&) = delete;

  // Opens the handle on a dup of `fd` and starts reading. A libuv error code.
  int Open(uv_loop_t* loop, int fd);

  bool Write(Napi::Env env, CipherBuffer* out) override;
  bool Shutdown() override;
  uint64_t flushed() const override { return flushed_; }
  // Over the high-water mark: the engine should wait for OnTransportDrain().
  bool blocked() const { return pending_.size() >= kHighWater; }

  void ReadStart();
  void ReadStop();
  int SetNoDelay(bool enable);
  int SetKeepAlive(bool enable, unsigned int delay_seconds);
  // The connection's peer (or local) address, asked of the kernel when
  // wanted: most connections are never asked. A libuv error code.
  int GetName(bool peer, sockaddr_storage* out) const;
  void Ref();
  void Unref();
  // Starts closing; OnTransportClosed() follows (also if it never opened).
  void Close();
  // Close() then ends the connection with a RST instead of a FIN.
  void ResetOnClose() { reset_on_close_ = true; }
  // Closes a transport whose Open() failed, freeing it in its close callback
  // without telling any owner.
  static void Abandon(std::unique_ptr<UvTransport> transport);
  bool open() const { return open_; }
  // The socket's fd (the dup Open() made) while open, else -1.
  int fd() const;

 private:
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* req, int status);
  static void OnShutdown(uv_shutdown_t* req, int status);
  static void OnClose(uv_handle_t* handle);
  static void OnAbandonedClose(uv_handle_t* handle);
  void Flush();
  void WriteFailed(int err);
  void MaybeShutdown();
  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }

  // Every read gets a whole block (a partial record stays behind in the
  // previous one): fewer, larger reads measured 5-13% faster at 4 and 16 KiB
  // records than reads into whatever a block had left (>= 16 KiB).
  static constexpr size_t kMinRead = CipherBuffer::kBlockSize;
  static constexpr size_t kMaxSegments = 16;

  Owner* owner_;
  CipherBuffer* input_;   // the engine's enc_in_: reads land here
  CipherBuffer pending_;  // ciphertext taken from the engine, not yet written
  uv_tcp_t tcp_{};
  uv_write_t write_req_{};
  uv_shutdown_t shutdown_req_{};
  size_t in_flight_ = 0;  // bytes at the head of pending_ that uv_write holds
  uint64_t flushed_ = 0;  // bytes the kernel has taken
  bool open_ = false;
  bool reading_ = false;
  // EOF or a read error came: reading again would only report it again, at
  // once and for ever (a busy loop while a half-open socket lives).
  bool read_done_ = false;
  bool shutdown_wanted_ = false;
  bool shutdown_started_ = false;
  bool closing_ = false;
  bool reset_on_close_ = false;
};

}  // namespace tlswrap

#endif  // TLSWRAP_TRANSPORT_UV_H_
