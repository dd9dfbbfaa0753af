// A write's chunks as the engine sees them: JS Buffers. Each chunk's memory
// is read once, when the write is made, and used as read only while no
// JavaScript has run since: JS can detach an ArrayBuffer (a transfer to a
// worker, structuredClone, ArrayBuffer.prototype.transfer) and free the
// memory under a pointer kept across calls. After that each chunk is looked
// up again each time the engine reads it, and one whose length is no longer
// what it was when written is reported gone.
#ifndef TLSWRAP_BINDING_JS_WRITE_SOURCE_H_
#define TLSWRAP_BINDING_JS_WRITE_SOURCE_H_

#include <napi.h>

#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "js_call.h"

namespace tlswrap {

class JsWriteSource : public WriteSource {
 public:
  // The chunks are info[first..], or the elements of one Array there. JS
  // passes a few as arguments: reading an Array's elements through N-API
  // costs more than the rest of a small write. Empty chunks are skipped.
  JsWriteSource(const Napi::CallbackInfo& info, size_t first)
      : env_(info.Env()), entries_(js_entries) {
    if (info.Length() == first + 1 && info[first].IsArray()) {
      array_ = info[first];
      uint32_t n = info[first].As<Napi::Array>().Length();
      pieces_.reserve(n);
      for (uint32_t i = 0; i < n; i++) {
        napi_value chunk = nullptr;
        if (napi_get_element(env_, array_, i, &chunk) != napi_ok) throw Napi::Error::New(env_);
        Add(chunk, i);
      }
      return;
    }
    pieces_.reserve(info.Length() - first);
    for (size_t i = first; i < info.Length(); i++) {
      Add(info[i], static_cast<uint32_t>(pieces_.size()));
    }
  }

  // The chunks' handles are the call's: before the call that made this write
  // returns, a write the engine still holds keeps its chunks by reference.
  // From then on every read looks its chunk up again.
  void Pin() {
    if (pinned_) return;
    pinned_ = true;
    napi_value kept = array_;
    if (kept == nullptr && pieces_.size() == 1) {
      kept = pieces_[0].value;
    } else if (kept == nullptr) {
      napi_create_array_with_length(env_, pieces_.size(), &kept);
      for (const Piece& piece : pieces_) napi_set_element(env_, kept, piece.index, piece.value);
    }
    if (kept != nullptr) chunks_ = Napi::Persistent(Napi::Object(env_, kept));
  }

  size_t count() const override { return pieces_.size(); }
  size_t size(size_t i) const override { return pieces_[i].length; }

  bool Get(size_t i, const char** data) override {
    const Piece& piece = pieces_[i];
    if (!pinned_ && entries_ == js_entries) {
      *data = piece.data;
      return true;
    }
    napi_value chunk = piece.value;
    if (pinned_) {
      if (chunks_.IsEmpty()) return false;
      chunk = chunks_.Value();
      if ((array_ != nullptr || pieces_.size() > 1) &&
          napi_get_element(env_, chunk, piece.index, &chunk) != napi_ok) {
        return false;
      }
    }
    size_t length = 0;
    return Read(chunk, data, &length) && length == piece.length;
  }

 private:
  struct Piece {
    napi_value value;  // the call's handle: valid until it returns
    const char* data;  // valid while entries_ == js_entries, before Pin()
    size_t length;
    uint32_t index;  // in the Array Pin() keeps
  };

  void Add(napi_value chunk, uint32_t index) {
    Piece piece;
    piece.value = chunk;
    piece.index = index;
    if (!Read(chunk, &piece.data, &piece.length)) {
      throw Napi::TypeError::New(env_, "writev() takes Uint8Arrays");
    }
    if (piece.length > 0) pieces_.push_back(piece);
  }

  bool Read(napi_value chunk, const char** data, size_t* length) const {
    napi_typedarray_type type;
    void* base = nullptr;
    if (napi_get_typedarray_info(env_, chunk, &type, length, &base, nullptr, nullptr) != napi_ok ||
        type != napi_uint8_array || (base == nullptr && *length > 0)) {
      return false;
    }
    *data = static_cast<const char*>(base);
    return true;
  }

  napi_env env_;
  uint64_t entries_;  // js_entries when the chunks were read
  bool pinned_ = false;
  napi_value array_ = nullptr;  // the Array the chunks came in, if they did
  Napi::ObjectReference chunks_;
  std::vector<Piece> pieces_;
};

}  // namespace tlswrap

#endif  // TLSWRAP_BINDING_JS_WRITE_SOURCE_H_
