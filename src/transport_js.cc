#include "transport_js.h"

#include "binding/js_call.h"

namespace tlswrap {

JsTransport::JsTransport(Napi::Object receiver, Napi::Function write,
                         napi_async_context async_context)
    : receiver_(Napi::Weak(receiver)),
      write_(Napi::Persistent(write)),
      async_context_(async_context) {}

bool JsTransport::Write(Napi::Env env, CipherBuffer* out) {
  Napi::HandleScope scope(env);
  // One Buffer per flush; the engine gathers all the records it has before
  // calling here, so a flush is one write() on the Duplex.
  size_t len = out->size();
  Napi::Buffer<char> chunk = Napi::Buffer<char>::New(env, len);
  out->CopyTo(chunk.Data());
  out->Clear();
  in_flight_.push_back(len);
  Napi::Value more;
  if (CallJs(env, receiver_.Value(), write_, {chunk}, async_context_, &more) != JsCallResult::kOk) {
    return false;
  }
  // Backpressure is the callbacks': node's JS stream waits for them, not for
  // 'drain'. A write that called back before returning false leaves nothing
  // to wait for, and a Duplex that never emits 'drain' must not stall us.
  if (idle()) return true;
  return !more.IsBoolean() || more.As<Napi::Boolean>().Value();
}

void JsTransport::Flushed() {
  if (in_flight_.empty()) return;
  flushed_ += in_flight_.front();
  in_flight_.pop_front();
}

}  // namespace tlswrap
