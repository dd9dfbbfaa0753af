// TLSWrap on the native transport: taking a TCP fd over, socket options,
// and the libuv callbacks (UvTransport::Owner), each an entry from the event
// loop with no JS frame below it.
#include "addon.h"
#include "errors.h"
#include "js_call.h"
#include "secure_context.h"
#include "tls_wrap.h"

namespace tlswrap {

Napi::Value TLSWrap::UseNativeTransport(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead() || native_ != nullptr) return Napi::Number::New(env, UV_EINVAL);
  int fd = info[0].As<Napi::Number>().Int32Value();
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) {
    return Napi::Number::New(env, UV_ENOTSUP);
  }
  auto native = std::make_unique<UvTransport>(static_cast<UvTransport::Owner*>(this), &enc_in_,
                                              AddonData::Get(env)->block_pool);
  int err = native->Open(loop, fd);
  if (err != 0) {
    // The JS transport stays in charge; the half-made handle closes itself.
    UvTransport::Abandon(std::move(native));
    return Napi::Number::New(env, err);
  }
  native_ = native.get();
  transport_ = std::move(native);
  // Closing a libuv handle is asynchronous: at environment teardown node has
  // to wait for it, which only the async cleanup hook provides.
  if (cleanup_hook_) {
    napi_remove_env_cleanup_hook(env, CleanupHook, this);
    cleanup_hook_ = false;
  }
  napi_add_async_cleanup_hook(env, AsyncCleanupHook, this, &async_cleanup_);
  if (!reading_) native_->ReadStop();
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

template <typename F>
void TLSWrap::FromLoop(F&& f) {
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  try {
    f();
  } catch (const Napi::Error& e) {
    napi_fatal_exception(env, e.Value());
  }
}

void TLSWrap::StopForTeardown() {
  // JS can no longer run here: behave as destroyed; the environment's
  // cleanup hook closes what is left.
  destroyed_ = true;
  writes_.clear();
  events_.clear();
  completed_writes_.clear();
}

void TLSWrap::OnTransportRead() {
  FromLoop([this] { Cycle(); });
}

void TLSWrap::OnTransportEOF() {
  FromLoop([this] {
    transport_eof_ = true;
    Cycle();
  });
}

void TLSWrap::OnTransportError(int uv_error, const char* syscall) {
  FromLoop([this, uv_error, syscall] {
    if (dead()) return;
    // Whatever was decrypted before the error goes first.
    transport_eof_ = true;
    read_closed_ = true;
    fatal_ = true;
    QueueEvent(EventType::kTransportError, syscall, static_cast<unsigned long>(-uv_error));
    Cycle();
  });
}

void TLSWrap::OnTransportDrain() {
  FromLoop([this] {
    transport_blocked_ = false;
    Cycle();
  });
}

void TLSWrap::OnTransportShutdown() {
  FromLoop([this] {
    if (dead()) return;
    QueueEvent(EventType::kShutdown);
    Cycle();
  });
}

void TLSWrap::OnTransportClosed() {
  native_closed_ = true;
  if (!ssl_) FinishRelease();
}

}  // namespace tlswrap
