#include "buffer_release.h"

#include "errors.h"

namespace tlswrap {

namespace {

constexpr char kExpected[] = "expected an Array of ArrayBuffers";

}  // namespace

Napi::Value ReleaseArrayBuffers(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray())
    ThrowCodedTypeError(env, "ERR_INVALID_ARG_TYPE", kExpected);
  Napi::Array list = info[0].As<Napi::Array>();
  const uint32_t count = list.Length();
  // Checked before any is detached: a bad entry leaves every buffer as it was.
  for (uint32_t i = 0; i < count; i++) {
    if (!list.Get(i).IsArrayBuffer()) ThrowCodedTypeError(env, "ERR_INVALID_ARG_TYPE", kExpected);
  }
  for (uint32_t i = 0; i < count; i++) {
    Napi::ArrayBuffer buffer = list.Get(i).As<Napi::ArrayBuffer>();
    if (!buffer.IsDetached()) buffer.Detach();
  }
  return env.Undefined();
}

}  // namespace tlswrap
