// A write's chunks as the engine sees them: JS Buffers, looked up again each
// time the engine reads one. A raw pointer kept across calls would outlive
// the memory when JS detaches the ArrayBuffer (a transfer to a worker,
// structuredClone, ArrayBuffer.prototype.transfer); a chunk whose length is
// no longer what it was when written is reported gone instead.
#ifndef TLSWRAP_BINDING_JS_WRITE_SOURCE_H_
#define TLSWRAP_BINDING_JS_WRITE_SOURCE_H_

#include <napi.h>

#include <utility>
#include <vector>

#include "engine/engine.h"

namespace tlswrap {

class JsWriteSource : public WriteSource {
 public:
  // `chunks` is an Array of Buffers, or one Buffer (no Array to make and
  // index for the common single write); empty ones are skipped.
  explicit JsWriteSource(Napi::Value chunks) : env_(chunks.Env()) {
    if (chunks.IsTypedArray()) {
      single_ = true;
      size_t len = chunks.As<Napi::Uint8Array>().ByteLength();
      if (len > 0) pieces_.emplace_back(0, len);
    } else {
      auto array = chunks.As<Napi::Array>();
      uint32_t n = array.Length();
      pieces_.reserve(n);
      for (uint32_t i = 0; i < n; i++) {
        size_t len = array.Get(i).As<Napi::Uint8Array>().ByteLength();
        if (len > 0) pieces_.emplace_back(i, len);
      }
    }
    chunks_ = Napi::Persistent(chunks.As<Napi::Object>());
  }

  size_t count() const override { return pieces_.size(); }
  size_t size(size_t i) const override { return pieces_[i].second; }

  bool Get(size_t i, const char** data) override {
    napi_value chunk = chunks_.Value();
    if (!single_ && napi_get_element(env_, chunk, pieces_[i].first, &chunk) != napi_ok) {
      return false;
    }
    napi_typedarray_type type;
    size_t length = 0;
    void* base = nullptr;
    if (napi_get_typedarray_info(env_, chunk, &type, &length, &base, nullptr, nullptr) != napi_ok ||
        type != napi_uint8_array || base == nullptr || length != pieces_[i].second) {
      return false;
    }
    *data = static_cast<const char*>(base);
    return true;
  }

 private:
  napi_env env_;
  bool single_ = false;
  Napi::ObjectReference chunks_;
  std::vector<std::pair<uint32_t, size_t>> pieces_;  // (index in chunks_, length)
};

}  // namespace tlswrap

#endif  // TLSWRAP_BINDING_JS_WRITE_SOURCE_H_
