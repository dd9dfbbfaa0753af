#include "engine.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace tlswrap {

namespace {

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

// Ciphertext that surely holds one whole record, wherever a record OpenSSL
// already pulled in part begins: with less buffered, a read may decrypt
// nothing, so no chunk memory is asked for before it has.
constexpr size_t kWholeRecord = SSL3_RT_HEADER_LENGTH + SSL3_RT_MAX_ENCRYPTED_LENGTH;

// Mid-handshake and trickled plaintext is decrypted into a stack buffer this
// big and copied out: a connection keeps no memory for it.
constexpr size_t kScratchSize = 16 * 1024;

}  // namespace

// The error to report for a failed SSL_get_error() result: the queued one,
// or, where OpenSSL queued none, one that says what happened (our BIOs never
// fail, so SSL_ERROR_SYSCALL means the peer's EOF cut the connection short),
// so that every error has a code. No code for the results that are no
// failure. `text` is the oldest queued error as ERR_print_errors() prints it
// (thread, code, library, function, reason, file, line), the message
// node:tls gives its TLS errors; empty where OpenSSL queued nothing. What
// printing takes off the queue, the caller's ErrorQueueGuard would clear.
Engine::Failure Engine::FailureOf(int err) {
  Failure failure;
  if (err == SSL_ERROR_NONE || err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
    return failure;
  failure.code = ERR_peek_error();
  if (failure.code != 0) {
    // Only the first, as node:tls: OpenSSL 3.2+ queues a generic "record
    // layer failure" behind each of its record layer's own errors.
    ERR_print_errors_cb(
        [](const char* str, size_t len, void* text) {
          static_cast<std::string*>(text)->assign(str, len);
          return 0;
        },
        &failure.text);
    return failure;
  }
  switch (err) {
    case SSL_ERROR_SYSCALL:
      failure.code = ERR_PACK(ERR_LIB_SSL, 0, SSL_R_UNEXPECTED_EOF_WHILE_READING);
      break;
    case SSL_ERROR_ZERO_RETURN:
      failure.code = ERR_PACK(ERR_LIB_SSL, 0, SSL_R_PROTOCOL_IS_SHUTDOWN);
      break;
    default:
      failure.code = ERR_PACK(ERR_LIB_SSL, 0, ERR_R_INTERNAL_ERROR);
  }
  return failure;
}

Engine::Engine(SSL_CTX* ctx, bool is_server, std::shared_ptr<BlockPool> pool, Delegate* delegate)
    : is_server_(is_server), delegate_(delegate), enc_in_(pool), enc_out_(std::move(pool)) {
  ErrorQueueGuard guard;
  ssl_.reset(SSL_new(ctx));
  if (!ssl_) return;
  SSL_set_app_data(ssl(), this);
  BIO* in = CipherBuffer::NewBio(&enc_in_);
  BIO* out = CipherBuffer::NewBio(&enc_out_);
  if (in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    ssl_.reset();
    return;
  }
  SSL_set_bio(ssl(), in, out);
  // Verification always runs to the end and its result is read afterwards,
  // so the embedder decides, as node:tls does with rejectUnauthorized.
  if (is_server_) {
    SSL_set_accept_state(ssl());
    SSL_set_verify(ssl(), SSL_VERIFY_NONE, VerifyCallback);
    // A server with no certificate callback is judged by OpenSSL on its
    // certificate alone: one TLS 1.3 cannot sign with (a curve or `sigalgs`
    // it does not allow) makes it offer TLS 1.2 instead. node:tls always has
    // one, so it picks TLS 1.3 and fails there; one that does nothing keeps
    // that choice (EnableCertCb() replaces it).
    SSL_set_cert_cb(ssl(), NoopCertCallback, nullptr);
  } else {
    SSL_set_connect_state(ssl());
    SSL_set_verify(ssl(), SSL_VERIFY_PEER, VerifyCallback);
  }
}

Engine::~Engine() {
  if (!ssl_) return;
  // OpenSSL's callbacks may run from SSL_free (a session leaving the cache):
  // they must not find this half-destroyed engine. The SSL goes before the
  // buffers its BIOs point into.
  SSL_set_app_data(ssl(), nullptr);
  ssl_.reset();
}

// ---- Input ----

void Engine::Start() {
  if (phase_ == Phase::kNew) phase_ = Phase::kHandshake;
}

void Engine::Write(std::unique_ptr<WriteSource> source, uint64_t id) {
  if (dead()) return;
  PendingWrite w;
  w.source = std::move(source);
  w.id = id;
  w.seq = ++write_seq_;
  writes_.push_back(std::move(w));
}

void Engine::Shutdown() {
  if (shutdown_ == CloseState::kNone) shutdown_ = CloseState::kWanted;
}

void Engine::ReceiveEOF() {
  transport_eof_ = true;
}

void Engine::TransportError(int error, const char* syscall) {
  if (dead() || phase_ == Phase::kFailed) return;
  // Whatever was decrypted before the error goes first.
  transport_eof_ = true;
  read_closed_ = true;
  phase_ = Phase::kFailed;
  QueueEvent(EventType::kTransportError, syscall, static_cast<uint64_t>(error));
}

void Engine::TransportWriteError(int error) {
  if (shutdown_ != CloseState::kNone && writes_.empty() && done_.empty() && !retrying_) return;
  TransportError(error, "write");
}

void Engine::Destroy() {
  phase_ = Phase::kDestroyed;
  writes_.clear();
  done_.clear();
  events_.clear();
  enc_out_.Clear();
}

bool Engine::WantsInput() const {
  return !dead() && reading_ && !replies_blocked();
}

// ---- The pump ----

bool Engine::Step(Batch* out) {
  bool more = Pump(out);
  if (phase_ == Phase::kDestroyed) {
    // Destroyed by a Delegate call while OpenSSL was on the stack (ALPN
    // selection): OpenSSL went on to write its fatal alert after Destroy()
    // had emptied enc_out_. That must not leave either.
    enc_out_.Clear();
    out->data = nullptr;
    out->len = 0;
    out->in_target = false;
    out->events.clear();
    return false;
  }
  return more;
}

bool Engine::Pump(Batch* out) {
  if (dead() || phase_ == Phase::kNew) return false;
  record_buffers_held_ = true;
  // Events OpenSSL produced outside SSL_read (a ClientHello's keylog lines,
  // a renegotiation start) come before anything read now.
  if (!events_.empty()) {
    TakeEvents(out);
    return true;
  }
  if (writes_first_) {
    // What the embedder wrote when it was told of the handshake goes before
    // the records read behind it (see InfoCallback).
    writes_first_ = false;
    if (ClearIn(out)) return true;
    if (dead()) return false;
  }
  if (ClearOut(out)) return true;
  if (dead()) return false;
  if (ClearIn(out)) return true;
  if (dead()) return false;
  // A renegotiation or ticket asked for now goes out behind the data
  // written before it was asked for.
  if (kick_handshake_ && KickHandshake()) {
    TakeEvents(out);
    return true;
  }
  // close_notify waits for held output: the embedder ends its transport
  // once it is out.
  if (shutdown_ == CloseState::kWanted && writes_.empty() && !retrying_ && !output_held() &&
      !transport_held_) {
    shutdown_ = CloseState::kSent;
    if (SSL_is_init_finished(ssl()) && phase_ != Phase::kFailed) {
      ErrorQueueGuard guard;
      SSL_shutdown(ssl());
    }
    // The embedder half-closes its transport once this close_notify is out.
    QueueEvent(EventType::kShutdown);
    TakeEvents(out);
    return true;
  }
  if (CollectFlushedWrites(out)) return true;
  if (free_buffers_when_idle_) FreeIdleBuffers();
  return false;
}

void Engine::TakeEvents(Batch* out) {
  if (out->events.empty()) {
    out->events.swap(events_);
  } else {
    for (Event& e : events_) out->events.push_back(std::move(e));
    events_.clear();
  }
  read_fill_ = 0;
  enc_in_.set_reads_held(false);
}

bool Engine::ClearOut(Batch* out) {
  if (read_closed_) {
    // Nothing after close_notify, EOF or a fatal error is ever read, but the
    // transport goes on reading (to see the peer's FIN): what the peer sends
    // now is dropped, or it would pile up here for as long as a half-open
    // socket lives (found by fuzz/pair_mutator).
    enc_in_.Clear();
    return false;
  }
  const bool paused = cert_cb_ == Pause::kWaiting || resume_ == Pause::kWaiting;
  if (reading_ && paused && transport_eof_) {
    // The client left while the handshake waits for JS (an SNICallback, an
    // OCSP or resumeSession listener): as node:tls, that is the end now,
    // not when (or if) the callback answers.
    read_closed_ = true;
    QueueEvent(EventType::kEnd);
    TakeEvents(out);
    return true;
  }
  if (!reading_ || paused || replies_blocked()) return false;
  // Nothing to read and no handshake to drive: SSL_read could only say
  // WANT_READ, and the pump asks several times per request.
  if (enc_in_.empty() && established() && !transport_eof_ && !SSL_has_pending(ssl()) &&
      !SSL_in_init(ssl())) {
    return false;
  }
  size_t buffered = enc_in_.size() + static_cast<size_t>(SSL_pending(ssl()));
  char scratch[kScratchSize];
  char* dst = scratch;
  size_t cap = kScratchSize;
  bool direct = false;
  if (user_buffers_ || (established() && buffered >= kWholeRecord)) {
    // Decrypt straight into the memory the embedder hands over: no copy.
    size_t want = std::min(buffered, kMaxClearChunk);
    if (want == 0 && SSL_has_pending(ssl())) want = SSL3_RT_MAX_PLAIN_LENGTH;
    if (want > 0 || user_buffers_) {
      size_t given = 0;
      char* target = delegate_->ClearBuffer(std::max<size_t>(want, 1), &given);
      if (dead()) return false;
      if (target != nullptr && given > 0) {
        dst = target;
        cap = given;
        direct = true;
      }
    }
  }

  size_t fill = 0;
  int err = SSL_ERROR_NONE;
  Failure failure;
  uint64_t produced = enc_out_.committed();
  {
    ErrorQueueGuard guard;
    read_fill_ = 0;
    // Everything already buffered, up to the chunk size; never wait for more.
    // Not after a destroy() from a callback under the last call: `dst` may
    // be memory that JS took away.
    while (fill < cap && !dead()) {
      int n = SSL_read(ssl(), dst + fill, ClampInt(cap - fill));
      if (n <= 0) {
        err = SSL_get_error(ssl(), n);
        failure = FailureOf(err);
        break;
      }
      fill += static_cast<size_t>(n);
      read_fill_ = fill;
    }
  }
  if (dead()) return false;
  // The embedder's memory reaches JS whole (a chunk's `.buffer`), sized to
  // the ciphertext: what no plaintext landed in is zeroed, not left as old
  // heap bytes. (onread's buffers are the user's own.)
  if (direct && !user_buffers_) std::memset(dst + fill, 0, cap - fill);
  if (transport_blocked_) reply_backlog_ += enc_out_.committed() - produced;
  bool full = fill == cap;
  if (err == SSL_ERROR_ZERO_RETURN) {
    read_closed_ = true;
    QueueEvent(EventType::kEnd);
  } else if (err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) {
    Fail(std::move(failure));
  } else if (err == SSL_ERROR_WANT_READ && transport_eof_ && !full && !enc_in_.reads_held()) {
    // The peer closed TCP without close_notify: node:tls treats it as EOF.
    // (Not while reads are held: what is buffered behind them comes first.)
    read_closed_ = true;
    QueueEvent(EventType::kEnd);
  }
  if (fill > 0) {
    if (direct) {
      out->data = dst;
      out->in_target = true;
    } else {
      // A chunk sized to what came, asked for only now that it is known.
      size_t given = 0;
      char* target = user_buffers_ ? nullptr : delegate_->ClearBuffer(fill, &given);
      if (dead()) return false;
      if (target != nullptr && given >= fill) {
        std::memcpy(target, dst, fill);
        out->data = target;
        out->in_target = true;
      } else {
        out->owned.assign(dst, fill);
        out->data = &out->owned[0];
      }
    }
    out->len = fill;
  }
  TakeEvents(out);
  return !out->empty();
}

bool Engine::KickHandshake() {
  if (renegotiate_wanted_ && phase_ != Phase::kFailed && !is_server() && !SSL_in_init(ssl()) &&
      !SSL_renegotiate_pending(ssl()) && SSL_has_pending(ssl())) {
    // A client whose OpenSSL holds input (part of a record; or, while
    // reading is paused, data not yet read). SSL_renegotiate() now would only
    // be marked pending until its read buffer is empty; a HelloRequest read
    // meanwhile then starts a handshake that rejects the application data
    // behind it as an unexpected record (found by fuzz/pair_mutator). Tried
    // again after the next input or read. A server reads no HelloRequest,
    // and OpenSSL lets its peer's data through until it sends its
    // ServerHello: pending, its HelloRequest goes out at the next record
    // boundary, as with node:tls. Waiting for an empty buffer instead put it
    // off for as long as the client kept sending.
    return false;
  }
  kick_handshake_ = false;
  if (phase_ == Phase::kFailed) {
    // Asked for before a fatal error came in: OpenSSL would only fail again,
    // a second kError with no code (found by fuzz/pair_mutator).
    ticket_wanted_ = false;
    renegotiate_wanted_ = false;
    return true;
  }
  int err = SSL_ERROR_NONE;
  Failure failure;
  {
    ErrorQueueGuard guard;
    if (ticket_wanted_) {
      ticket_wanted_ = false;
      SSL_new_session_ticket(ssl());
    }
    int ret = 1;
    if (renegotiate_wanted_) {
      renegotiate_wanted_ = false;
      // The peer may have started one since it was asked for (a HelloRequest
      // or ClientHello read just now): that one serves, and SSL_renegotiate()
      // on top of it would leave OpenSSL in init afterwards with no
      // ClientHello sent (found by fuzz/pair_mutator).
      if (!SSL_in_init(ssl()) && !SSL_renegotiate_pending(ssl())) {
        ret = SSL_renegotiate(ssl()) == 1 ? 1 : -1;
      }
    }
    if (ret == 1) ret = SSL_do_handshake(ssl());
    if (ret <= 0) {
      err = SSL_get_error(ssl(), ret);
      failure = FailureOf(err);
    }
  }
  if (err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) Fail(std::move(failure));
  return true;
}

void Engine::Fail(Failure failure) {
  // The alert OpenSSL queued is flushed by the embedder before it delivers
  // the error (it flushes after every Step, then delivers).
  read_closed_ = true;
  if (phase_ != Phase::kDestroyed) phase_ = Phase::kFailed;
  QueueEvent(EventType::kError, std::move(failure.text), failure.code);
}

bool Engine::RenegotiationUnderway() const {
  // TLS 1.3 has none, and runs no callback of the embedder's after the
  // first handshake; its tickets alone put it in init again.
  return SSL_version(ssl()) < TLS1_3_VERSION &&
         (SSL_in_init(ssl()) || SSL_renegotiate_pending(ssl()));
}

void Engine::FreeIdleBuffers() {
  // Not per record (SSL_MODE_RELEASE_BUFFERS measured 10-15% slower at 1 KiB
  // records), only once nothing is queued.
  if (dead() || !record_buffers_held_) return;
  if (enc_in_.empty() && writes_.empty() && !retrying_ && CanFreeRecordBuffers()) {
    SSL_free_buffers(ssl());
    record_buffers_held_ = false;
    // The staging block for small writes (up to one slice) goes too.
    std::vector<char>().swap(staging_);
    std::vector<char>().swap(retry_);
  }
}

void Engine::QueueEvent(EventType type, std::string payload, uint64_t value) {
  if (phase_ == Phase::kDestroyed) return;
  events_.push_back(Event{type, read_fill_, std::move(payload), value});
}

}  // namespace tlswrap
