// The engine's Delegate: where OpenSSL, mid-call, asks the binding for
// something (memory to decrypt into, an ALPN choice, a pre-shared key). The
// JS callbacks run here with OpenSSL on the stack, so a destroy() from them
// only marks the connection (see CallUnderOpenSSL), and an exception they
// throw is reported as uncaught at once: nothing may wait for it to surface
// while the engine call goes on.
#include <cstring>

#include "addon.h"
#include "errors.h"
#include "js_call.h"
#include "js_write_source.h"
#include "tls_wrap.h"
#include "wire_string.h"

namespace tlswrap {

namespace {

constexpr size_t kSlabSize = 16 * 1024;
// Chunks up to this size come from the slab. The engine asks for exactly the
// decrypted size below a whole record, so nothing of the slab is wasted.
constexpr size_t kSlabChunk = 2 * 1024;

}  // namespace

char* TLSWrap::ClearBuffer(size_t want, size_t* cap) {
  Napi::Env env = Env();
  *cap = 0;
  if (read_buffer_.IsEmpty() && want <= kSlabChunk) {
    AddonData* data = AddonData::Get(env);
    Napi::Uint8Array slab;
    char* base = nullptr;
    if (!data->clear_slab.IsEmpty() && data->clear_slab_used + want <= kSlabSize) {
      // Looked up each time: JS holding a slice could have detached it.
      slab = data->clear_slab.Value().As<Napi::Uint8Array>();
      if (slab.ByteLength() == kSlabSize) base = reinterpret_cast<char*>(slab.Data());
    }
    if (base == nullptr) {
      slab = Napi::Buffer<char>::New(env, kSlabSize);
      data->clear_slab = Napi::Persistent(slab.As<Napi::Object>());
      data->clear_slab_used = 0;
      base = reinterpret_cast<char*>(slab.Data());
      // Every chunk's `.buffer` is the whole slab, as small Buffers share
      // node's pool: the part not yet filled must not show old heap bytes.
      std::memset(base, 0, kSlabSize);
      if (!data->slab_marker.IsEmpty()) {
        // node's own C++ (a private flag on the ArrayBuffer): no user JS.
        try {
          data->slab_marker.Call({slab.ArrayBuffer()});
        } catch (const Napi::Error&) {
          // Only a terminating worker fails here; its chunks go nowhere.
        }
      }
    }
    clear_target_ = slab;
    target_base_ = base;
    target_size_ = kSlabSize;
    char* out = base + data->clear_slab_used;
    data->clear_slab_used += want;
    *cap = want;
    return out;
  }
  if (read_buffer_.IsEmpty()) {
    auto out = Napi::Buffer<char>::New(env, want);
    clear_target_ = out;
    target_base_ = out.Data();
    target_size_ = want;
    *cap = want;
    return out.Data();
  }
  // onread: decrypt straight into the user's buffer.
  return OnreadBuffer(cap);
}

char* TLSWrap::OnreadBuffer(size_t* cap) {
  Napi::Env env = Env();
  *cap = 0;
  try {
    Napi::Value given = read_buffer_.Value();
    if (given.IsFunction()) {
      NoteJsEntry();
      given = given.As<Napi::Function>().Call({});
    }
    if (!given.IsTypedArray()) {
      throw Napi::TypeError::New(env, "onread.buffer must be a Buffer or a function returning one");
    }
    auto view = given.As<Napi::Uint8Array>();
    if (view.ByteLength() == 0) {
      throw Napi::RangeError::New(env, "onread.buffer must not be empty");
    }
    clear_target_ = given.As<Napi::Object>();
    target_base_ = reinterpret_cast<const char*>(view.Data());
    target_size_ = view.ByteLength();
    *cap = view.ByteLength();
    return reinterpret_cast<char*>(view.Data());
  } catch (const Napi::Error& e) {
    ReportUncaught(env, e.Value());
    return nullptr;
  }
}

// onread's buffers are the engine's to decrypt into again (the next read,
// the rest of a burst), perhaps before a write made now is encrypted; node:tls
// encrypts inside write(). So a write of their bytes (an echo) gets a copy.
void TLSWrap::CopyOnreadBytes(JsWriteSource* source) {
  if (read_buffer_.IsEmpty()) return;
  source->CopyWithin(target_base_, target_size_);
  Napi::Value next = read_buffer_.Value();
  if (next.IsTypedArray()) {
    auto view = next.As<Napi::TypedArray>();
    source->CopyWithin(static_cast<const char*>(view.ArrayBuffer().Data()) + view.ByteOffset(),
                       view.ByteLength());
  }
}

// onread: as with node:tls, which reads each part of a burst on its own, a
// callback owns the buffer it was given until the next read: it may keep it
// (a function's buffers), reuse it, or move it away. The engine decrypted
// the whole burst into one buffer and an event split it: what follows the
// first part leaves that buffer before the first callback, and each later
// part is copied into the buffer onread gives at its turn.
void TLSWrap::DeliverOnread(const Batch& batch, size_t from, size_t to, size_t* byte) {
  Napi::Env env = Env();
  bool later = onread_rest_batch_ == batch.data && from >= onread_rest_from_;
  if (!later) {
    if (!TargetIntact()) {
      ReadGone();
      return;
    }
    char* base = const_cast<char*>(target_base_);
    // The first part starts the buffer; only a batch resumed after an
    // exception could start further in.
    if (batch.data + from != base) std::memmove(base, batch.data + from, to - from);
    if (to < batch.len) {
      onread_rest_.assign(batch.data + to, batch.len - to);
      onread_rest_batch_ = batch.data;
      onread_rest_from_ = to;
    }
    Call(on_data_, {clear_target_, Napi::Number::New(env, static_cast<double>(to - from))});
    return;
  }
  const char* data = onread_rest_.data() + (from - onread_rest_from_);
  size_t left = to - from;
  while (left > 0 && !dead() && !thrown_) {
    size_t cap = 0;
    char* dest = OnreadBuffer(&cap);
    if (dest == nullptr) {
      // Reported; the bytes still go, in a chunk of their own.
      Call(on_data_, {Napi::Buffer<char>::Copy(env, data, left),
                      Napi::Number::New(env, static_cast<double>(left))});
      break;
    }
    size_t n = std::min(left, cap);
    std::memcpy(dest, data, n);
    data += n;
    left -= n;
    *byte = to - left;  // as Deliver's: moved on before the call
    Call(on_data_, {clear_target_, Napi::Number::New(env, static_cast<double>(n))});
  }
  if (to == batch.len && left == 0) {
    onread_rest_batch_ = nullptr;
    std::string().swap(onread_rest_);
  }
}

// JS that runs while OpenSSL is on the stack (ALPN, PSK): the answer is
// needed now. A destroy() from inside only marks the connection (depth_ > 0);
// no C++ exception may cross OpenSSL's frames, so a throw marks it destroyed
// and fails the handshake. True while the connection is still alive.
bool TLSWrap::CallUnderOpenSSL(const Napi::FunctionReference& fn,
                               std::initializer_list<napi_value> args, Napi::Value* answer) {
  under_openssl_++;
  JsCallResult result = CallJs(Env(), Value(), fn, args, *async_context_, answer);
  under_openssl_--;
  if (result != JsCallResult::kOk) MarkDestroyed();
  // SSL_read may be decrypting into JS memory (a TLS 1.2 renegotiation under
  // way): if that JS detached it, OpenSSL must write nothing more there. The
  // failed callback ends the handshake, and SSL_read with it.
  if (!destroyed_ && !TargetIntact()) ReadGone();
  return !destroyed_;
}

int TLSWrap::SelectAlpn(const unsigned char* offer, unsigned int len) {
  Napi::Env env = Env();
  if (destroyed_) return -1;
  try {
    Napi::HandleScope scope(env);
    const char* name = SSL_get_servername(ssl(), TLSEXT_NAMETYPE_host_name);
    // No SNI: false, as node:tls passes it.
    Napi::Value servername =
        name != nullptr ? Napi::Value(WireString(env, name)) : Napi::Boolean::New(env, false);
    auto offered = Napi::Buffer<unsigned char>::Copy(env, offer, len);
    Napi::Value answer;
    if (!CallUnderOpenSSL(alpn_callback_, {servername, offered}, &answer) || !answer.IsNumber()) {
      return -1;
    }
    // JS answers with the offset of the chosen entry in the client's list.
    int64_t at = answer.As<Napi::Number>().Int64Value();
    return at >= 0 && at < static_cast<int64_t>(len) ? static_cast<int>(at) : -1;
  } catch (const Napi::Error& e) {
    ReportUncaught(env, e.Value());
    return -1;
  }
}

namespace {

// A view's bytes if `value` is an ArrayBufferView no longer than `max`.
bool ViewBytes(Napi::Value value, size_t max, const uint8_t** data, size_t* len) {
  if (value.IsTypedArray()) {
    auto view = value.As<Napi::TypedArray>();
    *data = static_cast<const uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
    *len = view.ByteLength();
  } else if (value.IsDataView()) {
    auto view = value.As<Napi::DataView>();
    *data = static_cast<const uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
    *len = view.ByteLength();
  } else {
    return false;
  }
  return *len <= max && (*len == 0 || *data != nullptr);
}

}  // namespace

// As node:tls: JS (lib/psk.js) is called with (identity, maxPskLen) and
// answers with the key, anything else refusing it; lib/psk.js turns a throw
// or a bad answer into destroy(err), so what reaches here is only the key or
// nothing. An identity that is not valid UTF-8 is refused without asking, as
// node does.
unsigned int TLSWrap::PskServer(const char* identity, unsigned char* psk, unsigned int max_psk) {
  Napi::Env env = Env();
  if (destroyed_ || psk_callback_.IsEmpty()) return 0;
  try {
    Napi::HandleScope scope(env);
    Napi::String id = Napi::String::New(env, identity);
    if (id.Utf8Value() != identity) return 0;
    Napi::Value answer;
    if (!CallUnderOpenSSL(psk_callback_, {id, Napi::Number::New(env, max_psk)}, &answer)) return 0;
    const uint8_t* data = nullptr;
    size_t len = 0;
    // An empty key is none (OpenSSL reads 0 so); its view may have no
    // memory at all, which memcpy must not be given even for 0 bytes.
    if (!ViewBytes(answer, max_psk, &data, &len) || len == 0) return 0;
    std::memcpy(psk, data, len);
    return static_cast<unsigned int>(len);
  } catch (const Napi::Error& e) {
    ReportUncaught(env, e.Value());
    return 0;
  }
}

// JS is called with (hint or null, maxPskLen, maxIdentityLen) and answers
// with { psk, identity }; anything else offers no key.
unsigned int TLSWrap::PskClient(const char* hint, char* identity, unsigned int max_identity,
                                unsigned char* psk, unsigned int max_psk) {
  Napi::Env env = Env();
  if (destroyed_ || psk_callback_.IsEmpty()) return 0;
  try {
    Napi::HandleScope scope(env);
    Napi::Value given = hint != nullptr ? Napi::String::New(env, hint) : env.Null();
    Napi::Value answer;
    if (!CallUnderOpenSSL(
            psk_callback_,
            {given, Napi::Number::New(env, max_psk), Napi::Number::New(env, max_identity)},
            &answer) ||
        !answer.IsObject()) {
      return 0;
    }
    Napi::Object obj = answer.As<Napi::Object>();
    const uint8_t* data = nullptr;
    size_t len = 0;
    Napi::Value name = obj.Get("identity");
    // An empty key offers none (see PskServer), nor is its null memory copied.
    if (!ViewBytes(obj.Get("psk"), max_psk, &data, &len) || len == 0 || !name.IsString()) return 0;
    std::string id = name.As<Napi::String>().Utf8Value();
    if (id.size() > max_identity) return 0;
    std::memcpy(identity, id.data(), id.size());
    std::memcpy(psk, data, len);
    return static_cast<unsigned int>(len);
  } catch (const Napi::Error& e) {
    ReportUncaught(env, e.Value());
    return 0;
  }
}

}  // namespace tlswrap
