#include "tls_wrap.h"

#include <algorithm>
#include <cstring>

#include "addon.h"
#include "errors.h"
#include "js_call.h"
#include "js_write_source.h"
#include "secure_context.h"
#include "transport_js.h"
#include "wire_string.h"

namespace tlswrap {

TLSWrap::TLSWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TLSWrap>(info) {
  Napi::Env env = info.Env();
  SecureContext* sc = SecureContext::FromValue(info[0]);
  context_ = Napi::Persistent(info[0].As<Napi::Object>());
  engine_ = std::make_unique<Engine>(sc->ctx(), info[1].ToBoolean().Value(),
                                     AddonData::Get(env)->block_pool,
                                     static_cast<Engine::Delegate*>(this));
  if (!engine_->ok()) ThrowCryptoError(env, "SSL_new failed");
  engine_->SetSessionIdContext(sc->session_id_context(),
                               AddonData::Get(env)->bind_unnamed_sessions);
  idle_sweep_ = AddonData::Get(env)->idle_sweep;
  engine_->SetFreeBuffersWhenIdle(false);
  idle_entry_.engine = engine_.get();
  // No resource object of ours: Node 26 holds an async context's resource
  // strongly until napi_async_destroy, and this object as its own resource
  // would never be collected without destroy() (node makes an empty one).
  async_context_ = std::make_unique<Napi::AsyncContext>(env, "TLSWRAP");

  // No strong reference to ourselves yet: until the native transport takes
  // the connection (see UseNativeTransport), everything that can call in is
  // JS (the socket, its Duplex's listeners), which holds this object, so a
  // socket JS has dropped is collected with it, as node:tls's is.
  napi_add_env_cleanup_hook(env, CleanupHook, this);
  cleanup_hook_ = true;
}

TLSWrap::~TLSWrap() {
  // Collected without destroy(): nothing in JS can reach the connection any
  // more, so it goes now, sending nothing (no JS runs from here).
  if (engine_) {
    MarkDestroyed();
    Release();
  }
  if (idle_sweep_) idle_sweep_->Remove(&idle_entry_);
  if (cleanup_hook_) napi_remove_env_cleanup_hook(Env(), CleanupHook, this);
}

// ---- Lifetime ----

void TLSWrap::MarkDestroyed() {
  destroyed_ = true;
  // From now on nothing leaves the engine. Its memory goes once no engine
  // call is on the stack (OpenSSL may be, under the ALPN callback).
  if (engine_) engine_->Destroy();
}

void TLSWrap::CleanupHook(void* arg) {
  auto* wrap = static_cast<TLSWrap*>(arg);
  wrap->cleanup_hook_ = false;
  wrap->MarkDestroyed();
  wrap->Release();
}

void TLSWrap::AsyncCleanupHook(napi_async_cleanup_hook_handle /*handle*/, void* arg) {
  // The environment is going away (a worker exiting with connections open):
  // close the TCP handle; FinishRelease() tells node when it is closed.
  auto* wrap = static_cast<TLSWrap*>(arg);
  wrap->MarkDestroyed();
  wrap->Release();
}

void TLSWrap::Release() {
  rest_.reset();
  // The libuv handle stops calling back (no more reads into enc_in_) before
  // the engine that owns the buffers goes; it is freed in its close callback.
  if (native_ != nullptr && !native_closed_) native_->Close();
  idle_sweep_->Remove(&idle_entry_);
  engine_.reset();
  on_data_.Reset();
  on_event_.Reset();
  alpn_callback_.Reset();
  psk_callback_.Reset();
  read_buffer_.Reset();
  sni_context_.Reset();
  context_.Reset();
  async_context_.reset();
  retired_async_context_.reset();
  if (native_ == nullptr || native_closed_) FinishRelease();
}

void TLSWrap::FinishRelease() {
  transport_.reset();
  native_ = nullptr;
  if (async_cleanup_ != nullptr) {
    napi_remove_async_cleanup_hook(async_cleanup_);
    async_cleanup_ = nullptr;
  }
  if (cleanup_hook_) {
    napi_remove_env_cleanup_hook(Env(), CleanupHook, this);
    cleanup_hook_ = false;
  }
  if (self_ref_) {
    self_ref_ = false;
    Unref();
  }
}

// ---- JS entry points that feed the engine ----

void TLSWrap::SetCallbacks(const Napi::CallbackInfo& info) {
  // Once: the JS transport may be on the stack (Flush() calls into JS).
  if (transport_) {
    Napi::Error::New(info.Env(), "setCallbacks: already set").ThrowAsJavaScriptException();
    return;
  }
  on_data_ = Napi::Persistent(info[0].As<Napi::Function>());
  on_event_ = Napi::Persistent(info[1].As<Napi::Function>());
  transport_ = std::make_unique<JsTransport>(Value(), info[2].As<Napi::Function>(),
                                             static_cast<napi_async_context>(*async_context_));
}

void TLSWrap::Start(const Napi::CallbackInfo& /*info*/) {
  if (dead()) return;
  engine_->Start();
  Cycle();
}

void TLSWrap::Receive(const Napi::CallbackInfo& info) {
  if (dead()) return;
  auto chunk = BufferArg(info, 0, "chunk");
  engine_->enc_in().Append(reinterpret_cast<const char*>(chunk.Data()), chunk.Length());
  ReportInputBeforeStart();
  CycleForCaller();
}

void TLSWrap::ReceiveEOF(const Napi::CallbackInfo& /*info*/) {
  if (dead()) return;
  engine_->ReceiveEOF();
  ReportInputBeforeStart(true);
  if (dead() || ReportEOFBeforeStart()) return;
  CycleForCaller();
}

void TLSWrap::FinishBatch(const Napi::CallbackInfo& /*info*/) {
  Cycle();
}

void TLSWrap::TransportDrained(const Napi::CallbackInfo& /*info*/) {
  if (dead() || native_ != nullptr) return;
  engine_->SetTransportBlocked(false);
  Cycle();
}

void TLSWrap::CiphertextFlushed(const Napi::CallbackInfo& /*info*/) {
  if (dead() || native_ != nullptr) return;
  auto* js = static_cast<JsTransport*>(transport_.get());
  js->Flushed();
  // All written has called back: no need to wait for a 'drain' (see Write).
  if (js->idle()) engine_->SetTransportBlocked(false);
  engine_->SetFlushed(FlushedTotal());
  Cycle();
}

// True if the write is complete (its ciphertext in the kernel) on return:
// JS then calls its callback itself, as net.Socket does for a write that
// completed synchronously, and no kWriteDone event is delivered for it.
Napi::Value TLSWrap::Writev(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return Napi::Boolean::New(env, false);
  auto id = static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value());
  if (transport_) progress_mark_ = FlushedTotal();
  auto source = std::make_unique<JsWriteSource>(info, 1);
  CopyOnreadBytes(source.get());
  engine_->Write(std::move(source), id);
  // However this call ends, a write the engine still holds keeps its chunks
  // from here on: the pointers read above die with the call. (The engine
  // may be gone by then, destroyed from a callback.)
  struct PinOnReturn {
    const std::unique_ptr<Engine>& engine;
    uint64_t id;
    ~PinOnReturn() {
      WriteSource* left = engine ? engine->QueuedWrite(id) : nullptr;
      if (left != nullptr) static_cast<JsWriteSource*>(left)->Pin();
    }
  } pin{engine_, id};
  if (depth_ > 0) {
    // The outer cycle picks the write up, unless it can go now: from the
    // handler of a batch of plaintext alone (a request's response), with
    // nothing queued that must go out first, as the outer cycle would send it.
    cycle_again_ = true;
    if (!delivering_ || !quiet_batch_ || under_openssl_ > 0 || engine_->control_pending()) {
      return Napi::Boolean::New(env, false);
    }
    SendQueuedWrites();
    return Napi::Boolean::New(env, !dead() && engine_->TakeFlushedWrite(id));
  }
  sync_write_id_ = id;
  sync_write_done_ = false;
  Cycle();
  sync_write_id_ = 0;
  return Napi::Boolean::New(env, sync_write_done_);
}

void TLSWrap::Shutdown(const Napi::CallbackInfo& /*info*/) {
  if (dead() || engine_->shutdown_wanted()) return;
  engine_->Shutdown();
  Cycle();
}

// destroy(flush, writeId): true if the write `writeId` (JS's write in
// flight, 0 if none) went out whole on the way: JS then completes it rather
// than failing it.
Napi::Value TLSWrap::Destroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (destroyed_) return Napi::Boolean::New(env, false);
  bool flushed = false;
  // Writes made from a 'data' (or other) handler wait for the cycle to
  // resume; written before destroy(), they go out first, as they do outside
  // a handler and with node:tls. JS asks for it only once the connection
  // was verified and handed over.
  if (delivering_ && under_openssl_ == 0 && info[0].ToBoolean().Value()) {
    SendQueuedWrites();
    if (destroyed_) return Napi::Boolean::New(env, false);
    // Its ciphertext is in the kernel, so the peer gets it: as with node:tls,
    // whose write completed inside write(), its callback reports success.
    // (Its kWriteDone event would have come with the next Step().)
    if (info.Length() > 1 && info[1].IsNumber()) {
      auto id = static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value());
      flushed = id != 0 && engine_->TakeFlushedWrite(id);
    }
  }
  MarkDestroyed();
  if (depth_ == 0) Release();
  return Napi::Boolean::New(env, flushed);
}

void TLSWrap::ReadStart(const Napi::CallbackInfo& /*info*/) {
  if (dead()) return;
  engine_->SetReading(true);
  Cycle();
}

void TLSWrap::ReadStop(const Napi::CallbackInfo& /*info*/) {
  if (dead()) return;
  engine_->SetReading(false);
  // Stop the socket too, or ciphertext would pile up in the engine.
  SyncReading();
}

Napi::Value TLSWrap::Renegotiate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return Napi::Boolean::New(env, false);
  unsigned long err = 0;
  if (!engine_->Renegotiate(&err)) throw TlsError(env, err, "renegotiation failed");
  Cycle();
  return Napi::Boolean::New(env, true);
}

Napi::Value TLSWrap::NewSessionTicket(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead() || !engine_->NewSessionTicket()) return Napi::Boolean::New(env, false);
  Cycle();
  return Napi::Boolean::New(env, true);
}

void TLSWrap::CertCbDone(const Napi::CallbackInfo& info) {
  if (dead()) return;
  SSL_CTX* ctx = nullptr;
  if (info.Length() > 0 && info[0].IsObject()) {
    ctx = SecureContext::FromValue(info[0])->ctx();
    sni_context_ = Napi::Persistent(info[0].As<Napi::Object>());
  }
  if (!engine_->CertCbDone(ctx)) ThrowCryptoError(info.Env(), "SSL_set_SSL_CTX failed");
  Cycle();
}

void TLSWrap::SetKeyCert(const Napi::CallbackInfo& info) {
  if (dead()) return;
  if (!engine_->UseKeyCert(SecureContext::FromValue(info[0])->ctx())) {
    ThrowCryptoError(info.Env(), "SetKeyCert");
  }
}

void TLSWrap::LoadSession(const Napi::CallbackInfo& info) {
  if (dead()) return;
  if (info[0].IsBuffer()) {
    auto buf = info[0].As<Napi::Buffer<unsigned char>>();
    engine_->LoadSession(buf.Data(), buf.Length());
  } else {
    engine_->LoadSession(nullptr, 0);
  }
  Cycle();
}

void TLSWrap::NewSessionDone(const Napi::CallbackInfo& /*info*/) {
  if (dead()) return;
  engine_->NewSessionDone();
  Cycle();
}

}  // namespace tlswrap
