// A write's chunks as the engine sees them: JS Buffers. Each chunk's memory
// is read once, when the write is made, and used as read only while no
// JavaScript has run since: JS can detach an ArrayBuffer (a transfer to a
// worker, structuredClone, ArrayBuffer.prototype.transfer) and free the
// memory under a pointer kept across calls. After that each chunk is looked
// up again each time the engine reads it, and one whose length is no longer
// what it was when written is reported gone. A chunk the engine itself may
// overwrite before it is encrypted (onread's buffer) is copied instead.
#ifndef TLSWRAP_BINDING_JS_WRITE_SOURCE_H_
#define TLSWRAP_BINDING_JS_WRITE_SOURCE_H_

#include <napi.h>

#include <cstdint>
#include <deque>
#include <string>
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

  // Copies the chunks that lie in [base, base + size) (onread's buffer,
  // which the engine decrypts into again, perhaps before this write is
  // encrypted). Only before JS runs again: the pointers read above are used.
  void CopyWithin(const char* base, size_t size) {
    if (base == nullptr || entries_ != js_entries) return;
    // As addresses: the pointers are into unrelated objects.
    auto begin = reinterpret_cast<uintptr_t>(base);
    for (Piece& piece : pieces_) {
      auto at = reinterpret_cast<uintptr_t>(piece.data);
      if (piece.copied || at >= begin + size || at + piece.length <= begin) continue;
      copies_.emplace_back(piece.data, piece.length);
      piece.data = copies_.back().data();
      piece.copied = true;
    }
  }

  // The chunks' handles are the call's: before the call that made this write
  // returns, a write the engine still holds keeps its chunks by reference.
  // From then on every read looks its chunk up again.
  void Pin() {
    if (pinned_) return;
    pinned_ = true;
    if (array_ != nullptr) {
      // JS's own Array (lib/socket.js): its elements are its own.
      array_ref_ = Napi::Persistent(Napi::Object(env_, array_));
      return;
    }
    // One reference a chunk: filling an Array here would run any setter a
    // program put on Array.prototype, JS in the middle of the engine.
    refs_.reserve(pieces_.size());
    for (const Piece& piece : pieces_) {
      refs_.push_back(piece.copied ? Napi::ObjectReference()
                                   : Napi::Persistent(Napi::Object(env_, piece.value)));
    }
  }

  size_t count() const override { return pieces_.size(); }
  size_t size(size_t i) const override { return pieces_[i].length; }
  bool Get(size_t i, const char** data) override {
    const Piece& piece = pieces_[i];
    if (piece.copied || (!pinned_ && entries_ == js_entries)) {
      *data = piece.data;
      return true;
    }
    napi_value chunk = piece.value;
    if (pinned_) {
      if (array_ != nullptr) {
        if (array_ref_.IsEmpty() ||
            napi_get_element(env_, array_ref_.Value(), piece.index, &chunk) != napi_ok) {
          return false;
        }
      } else {
        if (refs_[i].IsEmpty()) return false;
        chunk = refs_[i].Value();
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
    uint32_t index;  // in the Array the chunks came in
    bool copied;     // data is in copies_
  };

  void Add(napi_value chunk, uint32_t index) {
    Piece piece;
    piece.value = chunk;
    piece.index = index;
    piece.copied = false;
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
  napi_value array_ = nullptr;               // the Array the chunks came in, if they did
  Napi::ObjectReference array_ref_;          // array_, once pinned
  std::vector<Napi::ObjectReference> refs_;  // else one a piece, once pinned
  std::deque<std::string> copies_;           // a deque: the strings stay put
  std::vector<Piece> pieces_;
};

}  // namespace tlswrap

#endif  // TLSWRAP_BINDING_JS_WRITE_SOURCE_H_
