#include "buffer_release.h"

namespace tlswrap {

namespace {

[[noreturn]] void ThrowArgType(Napi::Env env, const char* message) {
  Napi::Error err = Napi::TypeError::New(env, message);
  err.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  throw err;
}

}  // namespace

Napi::Value ReleaseArrayBuffers(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray())
    ThrowArgType(env, "expected an Array of ArrayBuffers");
  Napi::Array list = info[0].As<Napi::Array>();
  const uint32_t count = list.Length();
  // Checked before any is detached: a bad entry leaves every buffer as it was.
  for (uint32_t i = 0; i < count; i++) {
    if (!list.Get(i).IsArrayBuffer()) ThrowArgType(env, "expected an Array of ArrayBuffers");
  }
  for (uint32_t i = 0; i < count; i++) {
    Napi::ArrayBuffer buffer = list.Get(i).As<Napi::ArrayBuffer>();
    if (!buffer.IsDetached()) buffer.Detach();
  }
  return env.Undefined();
}

}  // namespace tlswrap
