// TLSWrap on the native transport: taking a TCP fd over, socket options,
// and the libuv callbacks (UvTransport::Owner), each an entry from the event
// loop with no JS frame below it.
#include <arpa/inet.h>

#include "addon.h"
#include "engine/events.h"
#include "errors.h"
#include "js_call.h"
#include "secure_context.h"
#include "tls_wrap.h"

namespace tlswrap {

Napi::Value TLSWrap::UseNativeTransport(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead() || native_ != nullptr) return Napi::Number::New(env, UV_EINVAL);
  // Not from JS that engine code called (a Duplex's write under Flush()):
  // the transport it is using would be freed under it.
  if (depth_ > 0) return Napi::Number::New(env, UV_EBUSY);
  int fd = info[0].As<Napi::Number>().Int32Value();
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) {
    return Napi::Number::New(env, UV_ENOTSUP);
  }
  auto native = std::make_unique<UvTransport>(static_cast<UvTransport::Owner*>(this),
                                              &engine_->enc_in(), AddonData::Get(env)->block_pool);
  int err = native->Open(loop, fd);
  if (err != 0) {
    // The JS transport stays in charge; the half-made handle closes itself.
    UvTransport::Abandon(std::move(native));
    return Napi::Number::New(env, err);
  }
  // Ciphertext the JS transport was given before the switch counts as
  // flushed: the Duplex has it.
  flushed_base_ = engine_->enc_out().committed();
  engine_->SetFlushed(flushed_base_);
  native_ = native.get();
  transport_ = std::move(native);
  // useNativeTransport(fd, true): node's handle still has bytes to write on
  // the connection; the engine reads, and writes once releaseTransport().
  if (info.Length() > 1 && info[1].ToBoolean().Value()) engine_->HoldTransport(true);
  // libuv calls in from now on with no JS holding this object: alive until
  // destroyed (or the environment goes away), whatever JS holds.
  Ref();
  self_ref_ = true;
  // Closing a libuv handle is asynchronous: at environment teardown node has
  // to wait for it, which only the async cleanup hook provides.
  if (cleanup_hook_) {
    napi_remove_env_cleanup_hook(env, CleanupHook, this);
    cleanup_hook_ = false;
  }
  napi_add_async_cleanup_hook(env, AsyncCleanupHook, this, &async_cleanup_);
  SyncReading();
  return Napi::Number::New(env, 0);
}

void TLSWrap::ReleaseTransport(const Napi::CallbackInfo& /*info*/) {
  if (dead() || !engine_->transport_held()) return;
  engine_->HoldTransport(false);
  Cycle();
}

// getAddress(peer, out): as node's TCP handle's getpeername/getsockname,
// fills out.address, out.family ('IPv4' or 'IPv6') and out.port.
Napi::Value TLSWrap::GetAddress(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (native_ == nullptr || info.Length() < 2 || !info[1].IsObject()) {
    return Napi::Number::New(env, UV_EBADF);
  }
  sockaddr_storage storage{};
  int err = native_->GetName(info[0].ToBoolean().Value(), &storage);
  if (err != 0) return Napi::Number::New(env, err);
  char ip[INET6_ADDRSTRLEN] = "";
  int port = 0;
  const char* family = nullptr;
  if (storage.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage);
    err = uv_ip4_name(in, ip, sizeof(ip));
    port = ntohs(in->sin_port);
    family = "IPv4";
  } else if (storage.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);
    err = uv_ip6_name(in6, ip, sizeof(ip));
    port = ntohs(in6->sin6_port);
    family = "IPv6";
  } else {
    err = UV_EAFNOSUPPORT;
  }
  if (err != 0) return Napi::Number::New(env, err);
  Napi::Object out = info[1].As<Napi::Object>();
  out.Set("address", Napi::String::New(env, ip));
  out.Set("family", Napi::String::New(env, family));
  out.Set("port", Napi::Number::New(env, port));
  return Napi::Number::New(env, 0);
}

void TLSWrap::SetNoDelay(const Napi::CallbackInfo& info) {
  if (native_ != nullptr) native_->SetNoDelay(info[0].ToBoolean().Value());
}

void TLSWrap::SetKeepAlive(const Napi::CallbackInfo& info) {
  if (native_ != nullptr) {
    native_->SetKeepAlive(info[0].ToBoolean().Value(), info[1].As<Napi::Number>().Uint32Value());
  }
}

void TLSWrap::RefHandle(const Napi::CallbackInfo& /*info*/) {
  if (native_ != nullptr) native_->Ref();
}

void TLSWrap::UnrefHandle(const Napi::CallbackInfo& /*info*/) {
  if (native_ != nullptr) native_->Unref();
}

// resetAndDestroy() of the net.Socket whose fd the engine took over.
void TLSWrap::ResetOnClose(const Napi::CallbackInfo& /*info*/) {
  if (native_ != nullptr) native_->ResetOnClose();
}

template <typename F>
void TLSWrap::FromLoop(F&& f) {
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  try {
    f();
  } catch (const Napi::Error& e) {
    ReportUncaught(env, e.Value());
  }
}

void TLSWrap::OnTransportRead() {
  FromLoop([this] {
    ReportInputBeforeStart();
    Cycle();
  });
}

void TLSWrap::OnTransportEOF() {
  FromLoop([this] {
    if (dead()) return;
    engine_->ReceiveEOF();
    ReportInputBeforeStart(true);
    if (dead() || ReportEOFBeforeStart()) return;
    Cycle();
  });
}

bool TLSWrap::ReportEOFBeforeStart() {
  if (engine_->started()) return false;
  // An unstarted engine pumps nothing, so the EOF would wait for a start
  // that may never come (a client made by hand that never writes): JS hears
  // of it now, as from node:tls's socket, which reads. The engine keeps it
  // for after a start; JS reports it only once.
  Call(on_event_, {Napi::Number::New(Env(), static_cast<int>(EventType::kEnd)), Env().Undefined()});
  return true;
}

void TLSWrap::ReportInputBeforeStart(bool eof) {
  // node:tls's SSL_read of what arrived runs the handshake of a client's SSL
  // (in connect state from its birth), so a client made by hand that never
  // writes still answers a peer that speaks first: with its ClientHello, or
  // an error for bytes that are not TLS. So does its SSL_read of an EOF,
  // but nothing flushes that ClientHello until its end() (the `eof` JS is
  // given). A server's SSL waits for its start. JS starts the engine, or
  // keeps the start for later, so it is told once; until the start, what is
  // read ahead stays bounded (see SyncReading).
  if (input_reported_ || dead() || engine_->is_server() || engine_->started()) return;
  if (!eof && engine_->enc_in().empty()) return;
  input_reported_ = true;
  Call(on_event_, {Napi::Number::New(Env(), static_cast<int>(EventType::kInputBeforeStart)),
                   Napi::Boolean::New(Env(), eof)});
}

void TLSWrap::OnTransportReadError(int uv_error) {
  FromLoop([this, uv_error] {
    if (dead()) return;
    engine_->TransportError(-uv_error, "read");
    Cycle();
  });
}

void TLSWrap::OnTransportWriteError(int uv_error) {
  // Also from inside Flush(), under a cycle: then the cycle delivers it.
  FromLoop([this, uv_error] {
    if (dead()) return;
    engine_->TransportWriteError(-uv_error);
    Cycle();
  });
}

void TLSWrap::OnTransportDrain() {
  FromLoop([this] {
    if (dead()) return;
    engine_->SetTransportBlocked(native_->blocked());
    engine_->SetFlushed(FlushedTotal());
    Cycle();
  });
}

void TLSWrap::OnTransportShutdown() {
  // The close_notify is out and the write side half-closed: JS may end.
  FromLoop([this] {
    if (dead()) return;
    Call(on_event_,
         {Napi::Number::New(Env(), static_cast<int>(EventType::kShutdown)), Env().Undefined()});
  });
}

void TLSWrap::OnTransportClosed() {
  native_closed_ = true;
  if (!engine_) FinishRelease();
}

}  // namespace tlswrap
