#include "tls_wrap.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "addon.h"
#include "errors.h"
#include "js_call.h"
#include "secure_context.h"
#include "transport_js.h"

namespace tlswrap {

namespace {

// Marks the engine as on the stack for the lifetime of the scope, so that a
// destroy() from any JS it calls is deferred until the outermost frame ends.
class BusyScope {
 public:
  explicit BusyScope(bool* flag) : flag_(flag), outer_(!*flag) { *flag_ = true; }
  ~BusyScope() {
    if (outer_) *flag_ = false;
  }
  bool outer() const { return outer_; }

 private:
  bool* flag_;
  bool outer_;
};

int ClampInt(size_t n) {
  return static_cast<int>(std::min<size_t>(n, INT_MAX));
}

// SSL_free_buffers() could free a buffer still in use before these releases
// (CVE-2024-4741); on older OpenSSL idle connections keep their buffers.
bool CanFreeRecordBuffers() {
  static const bool safe = [] {
    unsigned long v = OpenSSL_version_num();
    if (v < 0x30000000UL) return false;
    if (v < 0x30100000UL) return v >= 0x300000e0UL;  // 3.0.14
    if (v < 0x30200000UL) return v >= 0x30100060UL;  // 3.1.6
    if (v < 0x30300000UL) return v >= 0x30200020UL;  // 3.2.2
    if (v < 0x30400000UL) return v >= 0x30300010UL;  // 3.3.1
    return true;
  }();
  return safe;
}

}  // namespace

TLSWrap* TLSWrap::FromSSL(const SSL* ssl) {
  return static_cast<TLSWrap*>(SSL_get_app_data(ssl));
}

void TLSWrap::ConfigureContext(SSL_CTX* ctx) {
  SSL_CTX_set_info_callback(ctx, InfoCallback);
  SSL_CTX_sess_set_new_cb(ctx, NewSessionCallback);
  SSL_CTX_set_keylog_callback(ctx, KeylogCallback);
  SSL_CTX_set_alpn_select_cb(ctx, AlpnSelectCallback, nullptr);
  SSL_CTX_set_client_hello_cb(ctx, ClientHelloCallback, nullptr);
  SSL_CTX_sess_set_get_cb(ctx, GetSessionCallback);
}

TLSWrap::TLSWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<TLSWrap>(info),
      enc_in_(AddonData::Get(info.Env())->block_pool),
      enc_out_(AddonData::Get(info.Env())->block_pool) {
  Napi::Env env = info.Env();
  SecureContext* sc = SecureContext::FromValue(info[0]);
  context_ = Napi::Persistent(info[0].As<Napi::Object>());
  is_server_ = info[1].ToBoolean().Value();

  ErrorQueueGuard guard;
  ssl_.reset(SSL_new(sc->ctx()));
  if (!ssl_) ThrowCryptoError(env, "SSL_new failed");
  SSL_set_app_data(ssl(), this);
  BIO* in = CipherBuffer::NewBio(&enc_in_);
  BIO* out = CipherBuffer::NewBio(&enc_out_);
  if (in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    ThrowCryptoError(env, "BIO_new failed");
  }
  SSL_set_bio(ssl(), in, out);
  // Verification always runs to the end and its result is read afterwards
  // (verifyError()), so JS decides, as in node:tls, with rejectUnauthorized.
  if (is_server_) {
    SSL_set_accept_state(ssl());
    SSL_set_verify(ssl(), SSL_VERIFY_NONE, VerifyCallback);
  } else {
    SSL_set_connect_state(ssl());
    SSL_set_verify(ssl(), SSL_VERIFY_PEER, VerifyCallback);
  }
  async_context_ =
      std::make_unique<Napi::AsyncContext>(env, "TLSWRAP", info.This().As<Napi::Object>());

  // Alive until destroyed (or the environment goes away), whatever JS holds.
  Ref();
  self_ref_ = true;
  napi_add_env_cleanup_hook(env, CleanupHook, this);
  cleanup_hook_ = true;
}

TLSWrap::~TLSWrap() {
  if (cleanup_hook_) napi_remove_env_cleanup_hook(Env(), CleanupHook, this);
}

void TLSWrap::CleanupHook(void* arg) {
  auto* wrap = static_cast<TLSWrap*>(arg);
  wrap->cleanup_hook_ = false;
  wrap->destroyed_ = true;
  wrap->Release();
}

void TLSWrap::AsyncCleanupHook(napi_async_cleanup_hook_handle /*handle*/, void* arg) {
  // The environment is going away (a worker exiting with connections open):
  // close the TCP handle; FinishRelease() tells node when it is closed.
  auto* wrap = static_cast<TLSWrap*>(arg);
  wrap->destroyed_ = true;
  wrap->Release();
}

void TLSWrap::Release() {
  ssl_.reset();
  writes_.clear();
  events_.clear();
  completed_writes_.clear();
  on_data_.Reset();
  on_event_.Reset();
  on_write_done_.Reset();
  alpn_callback_.Reset();
  read_buffer_.Reset();
  sni_context_.Reset();
  context_.Reset();
  async_context_.reset();
  // A libuv handle is freed in its close callback, never before: the rest
  // waits for OnTransportClosed().
  if (native_ != nullptr && !native_closed_) {
    native_->Close();
    return;
  }
  FinishRelease();
}

void TLSWrap::FinishRelease() {
  enc_in_.Clear();
  enc_out_.Clear();
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

// ---- JS entry points ----

void TLSWrap::SetCallbacks(const Napi::CallbackInfo& info) {
  on_data_ = Napi::Persistent(info[0].As<Napi::Function>());
  on_event_ = Napi::Persistent(info[1].As<Napi::Function>());
  on_write_done_ = Napi::Persistent(info[2].As<Napi::Function>());
  transport_ = std::make_unique<JsTransport>(Value(), info[3].As<Napi::Function>(),
                                             static_cast<napi_async_context>(*async_context_));
}

void TLSWrap::Start(const Napi::CallbackInfo& /*info*/) {
  if (dead() || started_) return;
  started_ = true;
  Cycle();
}

void TLSWrap::Receive(const Napi::CallbackInfo& info) {
  if (dead()) return;
  auto chunk = info[0].As<Napi::Buffer<char>>();
  enc_in_.Append(chunk.Data(), chunk.Length());
  Cycle();
}

void TLSWrap::ReceiveEOF(const Napi::CallbackInfo& /*info*/) {
  if (dead()) return;
  transport_eof_ = true;
  Cycle();
}

void TLSWrap::TransportDrained(const Napi::CallbackInfo& /*info*/) {
  if (dead()) return;
  transport_blocked_ = false;
  Cycle();
}

void TLSWrap::Writev(const Napi::CallbackInfo& info) {
  if (dead()) return;
  Napi::Array chunks = info[0].As<Napi::Array>();
  WriteReq req;
  req.id = info[1].As<Napi::Number>().DoubleValue();
  uint32_t n = chunks.Length();
  req.pieces.reserve(n);
  for (uint32_t i = 0; i < n; i++) {
    auto buf = chunks.Get(i).As<Napi::Buffer<char>>();
    if (buf.Length() > 0) req.pieces.emplace_back(buf.Data(), buf.Length());
  }
  req.chunks = Napi::Persistent(chunks.As<Napi::Object>());
  writes_.push_back(std::move(req));
  Cycle();
}

void TLSWrap::Shutdown(const Napi::CallbackInfo& /*info*/) {
  if (dead() || shutdown_) return;
  shutdown_ = true;
  Cycle();
}

void TLSWrap::Destroy(const Napi::CallbackInfo& /*info*/) {
  if (destroyed_) return;
  destroyed_ = true;
  // From now on nothing leaves the engine: queued plaintext, events and
  // writes are dropped. OpenSSL state is freed once the engine is off the stack.
  writes_.clear();
  events_.clear();
  completed_writes_.clear();
  if (!cycling_) Release();
}

void TLSWrap::ReadStart(const Napi::CallbackInfo& /*info*/) {
  if (dead() || reading_) return;
  reading_ = true;
  if (native_ != nullptr) native_->ReadStart();
  Cycle();
}

void TLSWrap::ReadStop(const Napi::CallbackInfo& /*info*/) {
  reading_ = false;
  // Stop the socket too, or ciphertext would pile up in the engine.
  if (native_ != nullptr) native_->ReadStop();
}

Napi::Value TLSWrap::Renegotiate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return Napi::Boolean::New(env, false);
  if (!established_ || SSL_version(ssl()) >= TLS1_3_VERSION) {
    // Refused (TLS 1.3 has no renegotiation): OpenSSL's own error, now.
    ErrorQueueGuard guard;
    if (SSL_renegotiate(ssl()) != 1) throw TlsError(env, ERR_peek_error(), "renegotiation failed");
  } else {
    // Started after the writes already queued, as with a ticket: SSL_read
    // would otherwise send the ClientHello ahead of them.
    renegotiate_wanted_ = true;
  }
  kick_handshake_ = true;
  Cycle();
  return Napi::Boolean::New(env, true);
}

Napi::Value TLSWrap::NewSessionTicket(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead() || !is_server_ || SSL_version(ssl()) < TLS1_3_VERSION || !established_) {
    return Napi::Boolean::New(env, false);
  }
  // Asked for now, made after the writes already queued: SSL_read would
  // otherwise send it at once, ahead of them.
  ticket_wanted_ = true;
  kick_handshake_ = true;
  Cycle();
  return Napi::Boolean::New(env, true);
}

// ---- The engine ----

void TLSWrap::Cycle() {
  if (dead() || !started_) return;
  if (cycling_) {
    // Reentered from JS we called (a write from a 'data' handler, say): the
    // outer cycle picks the new work up before it returns, keeping order.
    cycle_again_ = true;
    return;
  }
  {
    BusyScope busy(&cycling_);
    do {
      cycle_again_ = false;
      ClearOut();
      if (dead()) break;
      ClearIn();
      if (dead()) break;
      // A renegotiation or ticket asked for now goes out behind the data
      // written before it was asked for.
      if (kick_handshake_) KickHandshake();
      if (dead()) break;
      if (shutdown_ && !shutdown_sent_ && writes_.empty() && retry_data_ == nullptr) {
        shutdown_sent_ = true;
        if (SSL_is_init_finished(ssl()) && !fatal_) {
          ErrorQueueGuard guard;
          SSL_shutdown(ssl());
        }
        EncOut();
        if (dead()) break;
        // The native transport half-closes itself once the close_notify is
        // written and reports back (OnTransportShutdown); JS ends its own.
        if (!transport_->Shutdown()) {
          QueueEvent(EventType::kShutdown);
          if (!Deliver(nullptr, 0, Napi::Object(), false)) break;
        }
      }
      EncOut();
      if (dead()) break;
      CompleteWrites();
    } while (cycle_again_ && !dead());
    // Idle: OpenSSL's record buffers (about 34 KiB) go back to malloc and are
    // made again for the next record. Not per record (SSL_MODE_RELEASE_BUFFERS
    // measured 10-15% slower at 1 KiB records), only once nothing is queued.
    if (!dead() && enc_in_.empty() && writes_.empty() && retry_data_ == nullptr &&
        CanFreeRecordBuffers()) {
      SSL_free_buffers(ssl());
    }
  }
  if (destroyed_ && ssl_) Release();
}

void TLSWrap::ClearOut() {
  // Events OpenSSL produced outside SSL_read (a ClientHello's keylog lines,
  // a renegotiation start) come before anything read now.
  if (!events_.empty() && !Deliver(nullptr, 0, Napi::Object(), false)) return;
  while (reading_ && !read_closed_ && !dead() && cert_cb_state_ != CertCbState::kWaiting &&
         resume_state_ != CertCbState::kWaiting) {
    Napi::HandleScope scope(Env());
    Napi::Object target;
    bool user_buffer = false;
    char scratch[kScratchSize];
    char* dst = scratch;
    size_t cap = kScratchSize;
    // Plaintext is never longer than the ciphertext it came from, so this
    // bounds what can be decrypted now without more input; OpenSSL may also
    // hold part of a record it already pulled from enc_in_ (at most one).
    size_t available = enc_in_.size() + static_cast<size_t>(SSL_pending(ssl()));
    if (SSL_has_pending(ssl())) available += SSL3_RT_MAX_PLAIN_LENGTH;
    // (Mid-handshake the input is mostly handshake messages: use the scratch
    // block and copy what plaintext comes, rather than allocate for nothing.)
    if (read_buffer_.IsEmpty() && available > 0 && established_) {
      // Decrypt straight into the Buffer JS will get: no copy out afterwards.
      cap = std::min(available, kMaxClearChunk);
      auto out = Napi::Buffer<char>::New(Env(), cap);
      target = out;
      dst = out.Data();
    } else if (!read_buffer_.IsEmpty()) {
      // onread: decrypt straight into the user's buffer.
      Napi::Value given = read_buffer_.Value();
      if (given.IsFunction()) given = given.As<Napi::Function>().Call({});
      if (dead()) return;
      if (!given.IsTypedArray())
        throw Napi::TypeError::New(Env(),
                                   "onread.buffer must be a Buffer or a function returning one");
      auto view = given.As<Napi::Uint8Array>();
      target = given.As<Napi::Object>();
      user_buffer = true;
      dst = reinterpret_cast<char*>(view.Data());
      cap = view.ByteLength();
      if (cap == 0) throw Napi::RangeError::New(Env(), "onread.buffer must not be empty");
    }

    size_t fill = 0;
    int err = SSL_ERROR_NONE;
    unsigned long err_code = 0;
    {
      ErrorQueueGuard guard;
      read_fill_ = 0;
      // Everything already buffered, up to the chunk size; never wait for more.
      while (fill < cap) {
        int n = SSL_read(ssl(), dst + fill, ClampInt(cap - fill));
        if (n <= 0) {
          err = SSL_get_error(ssl(), n);
          if (err == SSL_ERROR_SSL) err_code = ERR_peek_error();
          break;
        }
        fill += static_cast<size_t>(n);
        read_fill_ = fill;
      }
    }
    bool full = fill == cap;
    if (err == SSL_ERROR_ZERO_RETURN) {
      read_closed_ = true;
      QueueEvent(EventType::kEnd);
    } else if (err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) {
      if (!Fail(err_code)) return;
    } else if (err == SSL_ERROR_WANT_READ && transport_eof_ && !full) {
      // The peer closed TCP without close_notify: node:tls treats it as EOF.
      read_closed_ = true;
      QueueEvent(EventType::kEnd);
    }
    if (!Deliver(dst, fill, target, user_buffer)) return;
    if (!full) return;
  }
}

void TLSWrap::KickHandshake() {
  kick_handshake_ = false;
  int err = SSL_ERROR_NONE;
  unsigned long err_code = 0;
  {
    ErrorQueueGuard guard;
    if (ticket_wanted_) {
      ticket_wanted_ = false;
      SSL_new_session_ticket(ssl());
    }
    int ret = 1;
    if (renegotiate_wanted_) {
      renegotiate_wanted_ = false;
      ret = SSL_renegotiate(ssl()) == 1 ? 1 : -1;
    }
    if (ret == 1) ret = SSL_do_handshake(ssl());
    if (ret <= 0) {
      err = SSL_get_error(ssl(), ret);
      if (err == SSL_ERROR_SSL) err_code = ERR_peek_error();
    }
  }
  if ((err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) && Fail(err_code)) {
    Deliver(nullptr, 0, Napi::Object(), false);
  }
}

bool TLSWrap::Fail(unsigned long err_code) {
  // The alert OpenSSL queued goes out before JS hears of the error.
  EncOut();
  if (dead()) return false;
  read_closed_ = true;
  fatal_ = true;
  QueueEvent(EventType::kError, std::string(), err_code);
  return true;
}

void TLSWrap::ClearIn() {
  while (!writes_.empty() && established_ && !fatal_ && !transport_blocked_ && !dead()) {
    WriteReq& req = writes_.front();
    if (req.piece == req.pieces.size() && retry_data_ == nullptr) {
      completed_writes_.push_back(req.id);
      writes_.pop_front();
      continue;
    }
    const char* data = retry_data_;
    size_t len = retry_len_;
    if (data == nullptr) {
      const auto& piece = req.pieces[req.piece];
      size_t rest = piece.second - req.offset;
      if (rest >= kStageThreshold || req.piece + 1 == req.pieces.size()) {
        // Large (or alone): encrypt in place from the JS buffer, in slices.
        data = piece.first + req.offset;
        len = std::min(rest, kWriteSlice);
      } else {
        // Small chunks share one staging block, so they share records too.
        staging_.clear();
        size_t p = req.piece;
        size_t off = req.offset;
        while (p < req.pieces.size() && staging_.size() < kWriteSlice) {
          const auto& next = req.pieces[p];
          size_t avail = next.second - off;
          if (avail >= kStageThreshold && !staging_.empty()) break;
          size_t take = std::min(avail, kWriteSlice - staging_.size());
          staging_.insert(staging_.end(), next.first + off, next.first + off + take);
          off += take;
          if (off == next.second) {
            p++;
            off = 0;
          }
        }
        data = staging_.data();
        len = staging_.size();
      }
    }

    int ret;
    int err = SSL_ERROR_NONE;
    unsigned long err_code = 0;
    {
      ErrorQueueGuard guard;
      ret = SSL_write(ssl(), data, ClampInt(len));
      if (ret <= 0) {
        err = SSL_get_error(ssl(), ret);
        if (err == SSL_ERROR_SSL) err_code = ERR_peek_error();
      }
    }
    if (ret <= 0) {
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        // Mid-renegotiation: the same bytes must be offered again later.
        retry_data_ = data;
        retry_len_ = len;
        return;
      }
      if (Fail(err_code)) Deliver(nullptr, 0, Napi::Object(), false);
      return;
    }
    retry_data_ = nullptr;
    retry_len_ = 0;
    size_t done = static_cast<size_t>(ret);
    while (done > 0) {
      const auto& piece = req.pieces[req.piece];
      size_t take = std::min(done, piece.second - req.offset);
      req.offset += take;
      done -= take;
      if (req.offset == piece.second) {
        req.piece++;
        req.offset = 0;
      }
    }
    // Hand this slice's ciphertext over before encrypting the next, so a big
    // write never turns into a big ciphertext buffer.
    EncOut();
  }
}

void TLSWrap::EncOut() {
  if (enc_out_.empty() || !transport_ || dead()) return;
  if (!transport_->Write(Env(), &enc_out_)) transport_blocked_ = true;
}

void TLSWrap::CompleteWrites() {
  if (completed_writes_.empty()) return;
  std::vector<double> done;
  done.swap(completed_writes_);
  Napi::Env env = Env();
  for (double id : done) {
    if (dead()) return;
    Napi::HandleScope scope(env);
    if (CallJs(env, Value(), on_write_done_, {Napi::Number::New(env, id)}, *async_context_) !=
        JsCallResult::kOk) {
      StopForTeardown();
    }
  }
}

bool TLSWrap::Deliver(char* data, size_t len, Napi::Object target, bool user_buffer) {
  std::vector<Event> events;
  events.swap(events_);
  read_fill_ = 0;
  size_t pos = 0;
  for (const Event& event : events) {
    size_t at = std::min(event.offset, len);
    if (at > pos) {
      if (!DeliverData(data + pos, at - pos, target, user_buffer)) return false;
      pos = at;
    }
    if (!DeliverEvent(event)) return false;
  }
  if (len > pos && !DeliverData(data + pos, len - pos, target, user_buffer)) return false;
  return !dead();
}

bool TLSWrap::DeliverData(const char* data, size_t len, Napi::Object target, bool user_buffer) {
  if (dead()) return false;
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  auto length = Napi::Number::New(env, static_cast<double>(len));
  if (target.IsEmpty()) {
    if (CallJs(env, Value(), on_data_, {Napi::Buffer<char>::Copy(env, data, len)},
               *async_context_) != JsCallResult::kOk) {
      StopForTeardown();
    }
    return !dead();
  }
  char* base = reinterpret_cast<char*>(target.As<Napi::Uint8Array>().Data());
  if (user_buffer) {
    // onread callbacks see their bytes at the start of the buffer; an event
    // that split the burst leaves the rest further in, so move it down.
    if (data != base) std::memmove(base, data, len);
    if (CallJs(env, Value(), on_data_, {target, length}, *async_context_) != JsCallResult::kOk) {
      StopForTeardown();
    }
  } else {
    auto offset = Napi::Number::New(env, static_cast<double>(data - base));
    if (CallJs(env, Value(), on_data_, {target, offset, length}, *async_context_) !=
        JsCallResult::kOk) {
      StopForTeardown();
    }
  }
  return !dead();
}

bool TLSWrap::DeliverEvent(const Event& event) {
  if (dead()) return false;
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  Napi::Value arg = env.Undefined();
  switch (event.type) {
    case EventType::kSession:
    case EventType::kKeylog:
    case EventType::kNewSession:
    case EventType::kResumeSession:
      arg = Napi::Buffer<char>::Copy(env, event.payload.data(), event.payload.size());
      break;
    case EventType::kCertCb:
      arg = Napi::String::New(env, event.payload);
      break;
    case EventType::kError:
      arg = TlsError(env, event.error, "TLS connection failed").Value();
      break;
    case EventType::kTransportError: {
      Napi::Object info = Napi::Object::New(env);
      info.Set("errno", -static_cast<double>(event.error));
      info.Set("syscall", event.payload);
      arg = info;
      break;
    }
    default:
      break;
  }
  if (CallJs(env, Value(), on_event_, {Napi::Number::New(env, static_cast<int>(event.type)), arg},
             *async_context_) != JsCallResult::kOk) {
    StopForTeardown();
  }
  return !dead();
}

}  // namespace tlswrap
