// The engine's OpenSSL callbacks. The informative ones only queue events
// stamped with the plaintext offset they happened at (delivery keeps wire
// order); SNI and resumption pause the handshake instead of asking anyone;
// only ALPN selection and PSK ask the Delegate while OpenSSL is on the stack.
#include <cstring>
#include <string_view>

#include "engine.h"

namespace tlswrap {

namespace {

// What a server seals into each of its tickets (the ticket's app data, which
// only the keys that seal tickets can write): whether the client of the
// handshake that made it proved itself with a pre-shared key. A TLS 1.3
// resumption is a PSK handshake too, so without it a ticket from a client
// that proved nothing would look like the client's own key.
constexpr unsigned char kTicketProvedByPsk[] = {'t', 'l', 's', 'w', 'r', 'a',
                                                'p', ':', 'p', 's', 'k'};
constexpr unsigned char kTicketNotByPsk[] = {'t', 'l', 's', 'w', 'r', 'a', 'p', ':', '-'};

}  // namespace

Engine* Engine::FromSSL(const SSL* ssl) {
  return static_cast<Engine*>(SSL_get_app_data(ssl));
}

void Engine::ConfigureContext(SSL_CTX* ctx) {
  SSL_CTX_set_info_callback(ctx, InfoCallback);
  SSL_CTX_sess_set_new_cb(ctx, NewSessionCallback);
  SSL_CTX_set_alpn_select_cb(ctx, AlpnSelectCallback, nullptr);
  SSL_CTX_set_client_hello_cb(ctx, ClientHelloCallback, nullptr);
  SSL_CTX_sess_set_get_cb(ctx, GetSessionCallback);
  // OpenSSL calls it only where status was asked for: a client that set
  // requestOCSP, a server whose client sent status_request.
  SSL_CTX_set_tlsext_status_cb(ctx, StatusCallback);
  SSL_CTX_set_session_ticket_cb(ctx, GenerateTicketCallback, nullptr, nullptr);
}

// Called for every ticket (and TLS 1.3 stateful session) a server makes, on
// the session it is made from: a copy of the resumed one on a resumption,
// tag included, so the tag is written again each time from what this
// connection proved.
int Engine::GenerateTicketCallback(SSL* ssl, void* /*arg*/) {
  SSL_SESSION* session = SSL_get_session(ssl);
  if (session == nullptr) return 1;
  Engine* engine = FromSSL(ssl);
  if (engine != nullptr && engine->PeerProvedByPsk()) {
    return SSL_SESSION_set1_ticket_appdata(session, kTicketProvedByPsk, sizeof(kTicketProvedByPsk));
  }
  // Failing (0) fails the handshake rather than send an untagged ticket.
  return SSL_SESSION_set1_ticket_appdata(session, kTicketNotByPsk, sizeof(kTicketNotByPsk));
}

bool Engine::PeerProvedByPsk() const {
  if (!is_server_ || !psk_ || dead()) return false;
  SSL* s = ssl_.get();
  if (SSL_version(s) != TLS1_3_VERSION || SSL_session_reused(s) != 1 ||
      SSL_get0_peer_certificate(s) != nullptr) {
    return false;
  }
  SSL_SESSION* session = SSL_get_session(s);
  if (session == nullptr) return false;
  void* tag = nullptr;
  size_t tag_len = 0;
  if (SSL_SESSION_get0_ticket_appdata(session, &tag, &tag_len) != 1) return false;
  // No tag: the session OpenSSL made from the key pskCallback gave if it
  // kept one (after the first ticket, the copy it was made from carries the
  // tag that ticket got), else a ticket sealed elsewhere with our keys.
  if (tag == nullptr) return psk_key_given_;
  return tag_len == sizeof(kTicketProvedByPsk) &&
         std::memcmp(tag, kTicketProvedByPsk, tag_len) == 0;
}

void Engine::InfoCallback(const SSL* ssl, int where, int /*ret*/) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr) return;
  // TLS 1.3 post-handshake messages (tickets, KeyUpdate) are not handshakes
  // in node:tls's sense; only TLS 1.2 renegotiation repeats these.
  if (engine->established() && SSL_version(ssl) >= TLS1_3_VERSION) return;
  // A server's HelloRequest is a "handshake" of its own to OpenSSL (START,
  // DONE) while the renegotiation it asks for is still pending: that DONE
  // must not complete renegotiate(); the client's handshake that follows does.
  if (engine->is_server_ && SSL_renegotiate_pending(const_cast<SSL*>(ssl))) return;
  if (where & SSL_CB_HANDSHAKE_START) engine->QueueEvent(EventType::kHandshakeStart);
  if (where & SSL_CB_HANDSHAKE_DONE) {
    if (engine->phase_ == Phase::kHandshake) engine->phase_ = Phase::kOpen;
    engine->QueueEvent(EventType::kHandshakeDone);
    if (!engine->is_server_ && SSL_version(ssl) < TLS1_3_VERSION) {
      // A TLS 1.2 server may send a HelloRequest right behind its Finished
      // (renegotiate() in 'secureConnection'). node:tls runs 'secureConnect'
      // from this callback, before OpenSSL reads on, so what the client
      // writes there goes out ahead of the renegotiation; read now, the
      // HelloRequest would hold those writes behind a handshake the server
      // may close on. The next read waits for the event's delivery and for
      // the writes made there.
      engine->enc_in_.set_reads_held(true);
      engine->writes_first_ = true;
    }
  }
}

int Engine::NewSessionCallback(SSL* ssl, SSL_SESSION* session) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr || engine->dead()) return 0;
  // Nobody listens (node:tls, too, asks for sessions only then): no DER
  // encoding, no event, and the reads after it are not held.
  if (!engine->new_session_events_) return 0;
  int len = i2d_SSL_SESSION(session, nullptr);
  if (len <= 0) return 0;
  std::string der(static_cast<size_t>(len), '\0');
  auto* p = reinterpret_cast<unsigned char*>(&der[0]);
  i2d_SSL_SESSION(session, &p);
  if (engine->is_server_) {
    unsigned int id_len = 0;
    const unsigned char* id = SSL_SESSION_get_id(session, &id_len);
    std::string payload(1, static_cast<char>(id_len));
    payload.append(reinterpret_cast<const char*>(id), id_len);
    payload.append(der);
    engine->new_sessions_pending_++;
    engine->QueueEvent(EventType::kNewSession, std::move(payload));
  } else {
    engine->QueueEvent(EventType::kSession, std::move(der));
    // No record after this one is read until the event is handed over:
    // getSession()/getTLSTicket() in a 'session' listener read the live SSL,
    // which a second ticket in the same read would already have replaced.
    engine->enc_in_.set_reads_held(true);
  }
  return 0;  // we keep no reference to `session`
}

// The keylog callback goes on the context only once a connection wants the
// lines (as node:tls does): while one is set, OpenSSL hex-formats every
// secret of every connection of that context, wanted or not (OpenSSL 3.0:
// about 80 sprintf calls a line, 8% of a resumed TLS 1.3 connection's
// instructions).
// SNI never swaps the SSL_CTX (UseKeyCert), so this one stays in force.
void Engine::EnableKeylog() {
  keylog_ = true;
  if (!ssl_) return;
  SSL_CTX* ctx = SSL_get_SSL_CTX(ssl_.get());
  if (SSL_CTX_get_keylog_callback(ctx) != KeylogCallback) {
    SSL_CTX_set_keylog_callback(ctx, KeylogCallback);
  }
}

void Engine::KeylogCallback(const SSL* ssl, const char* line) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr || !engine->keylog_ || engine->dead()) return;
  std::string entry(line);
  entry.push_back('\n');
  engine->QueueEvent(EventType::kKeylog, std::move(entry));
}

int Engine::AlpnSelectCallback(SSL* ssl, const unsigned char** out, unsigned char* outlen,
                               const unsigned char* in, unsigned int inlen, void* /*arg*/) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr || engine->dead()) return SSL_TLSEXT_ERR_ALERT_FATAL;
  if (engine->alpn_callback_) {
    // The Delegate may run JS here; a destroy() it asks for only marks the
    // engine (the embedder frees it once OpenSSL has returned).
    int at = engine->delegate_->SelectAlpn(in, inlen);
    if (engine->dead() || at < 0 || static_cast<unsigned int>(at) >= inlen ||
        at + 1u + in[at] > inlen) {
      return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = in + at + 1;
    *outlen = in[at];
    return SSL_TLSEXT_ERR_OK;
  }
  if (engine->alpn_protos_.empty()) return SSL_TLSEXT_ERR_NOACK;
  unsigned char* selected = nullptr;
  int status =
      SSL_select_next_proto(&selected, outlen, engine->alpn_protos_.data(),
                            static_cast<unsigned int>(engine->alpn_protos_.size()), in, inlen);
  *out = selected;
  // node:tls answers a client with no protocol in common with a fatal
  // no_application_protocol alert.
  return status == OPENSSL_NPN_NEGOTIATED ? SSL_TLSEXT_ERR_OK : SSL_TLSEXT_ERR_ALERT_FATAL;
}

// The Delegate may run JS in the PSK callbacks too: a destroy() it asks for
// refuses the key whatever it answered, so nothing more is negotiated.
unsigned int Engine::PskServerCallback(SSL* ssl, const char* identity, unsigned char* psk,
                                       unsigned int max_psk) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr || engine->dead() || identity == nullptr) return 0;
  unsigned int len = engine->delegate_->PskServer(identity, psk, max_psk);
  if (engine->dead() || len > max_psk) len = 0;
  if (len == 0) OPENSSL_cleanse(psk, max_psk);
  // What proves a certificate-less TLS 1.3 client (PeerProvedByPsk): OpenSSL
  // also asks here with a ticket as the identity, which gets no key. A ticket
  // of ours carries its own tag, which decides; an untagged one (another
  // server's sharing the ticket keys) leaves it to this key, so a key OpenSSL
  // drops unchecked may not count.
  if (len > 0 && KeyKeptByOpenSsl(ssl)) engine->psk_key_given_ = true;
  return len;
}

// OpenSSL makes the TLS 1.3 session of a key from this old-style callback
// with TLS_AES_128_GCM_SHA256, and when the suite it chose (before reading
// the PSK extension) hashes with anything but SHA-256, it drops that session
// without checking its binder and takes the client's next identity, a ticket
// perhaps. A key it keeps is the PSK of the handshake, its binder checked.
bool Engine::KeyKeptByOpenSsl(const SSL* ssl) {
  if (SSL_version(ssl) != TLS1_3_VERSION) return true;
  const SSL_CIPHER* suite = SSL_get_pending_cipher(ssl);
  if (suite == nullptr) return false;
  const EVP_MD* hash = SSL_CIPHER_get_handshake_digest(suite);
  return hash != nullptr && EVP_MD_get_type(hash) == NID_sha256;
}

unsigned int Engine::PskClientCallback(SSL* ssl, const char* hint, char* identity,
                                       unsigned int max_identity, unsigned char* psk,
                                       unsigned int max_psk) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr || engine->dead()) return 0;
  unsigned int len = engine->delegate_->PskClient(hint, identity, max_identity, psk, max_psk);
  if (engine->dead() || len > max_psk) len = 0;
  if (len == 0) OPENSSL_cleanse(psk, max_psk);
  return len;
}

int Engine::CertCallback(SSL* ssl, void* /*arg*/) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr) return 0;
  switch (engine->cert_cb_) {
    case Pause::kDone:
      return 1;
    case Pause::kWaiting:
      return -1;
    case Pause::kNone:
      break;
  }
  // Pause the handshake (SSL_ERROR_WANT_X509_LOOKUP) while the embedder
  // picks a context for the server name; CertCbDone() resumes it.
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  bool ocsp = SSL_get_tlsext_status_type(ssl) == TLSEXT_STATUSTYPE_ocsp;
  engine->cert_cb_ = Pause::kWaiting;
  engine->QueueEvent(EventType::kCertCb, name != nullptr ? name : "", ocsp ? 1 : 0);
  return -1;
}

int Engine::NoopCertCallback(SSL* /*ssl*/, void* /*arg*/) {
  return 1;
}

int Engine::StatusCallback(SSL* ssl, void* /*arg*/) {
  Engine* engine = FromSSL(ssl);
  if (engine == nullptr) return SSL_TLSEXT_ERR_NOACK;  // also a client's "accept"
  if (!engine->is_server_) {
    // Reported, never judged here: as with node:tls, an 'OCSPResponse'
    // listener that dislikes it destroys the socket.
    const unsigned char* resp = nullptr;
    long len = SSL_get_tlsext_status_ocsp_resp(ssl, &resp);
    bool stapled = resp != nullptr && len >= 0;
    engine->QueueEvent(
        EventType::kOCSPResponse,
        stapled ? std::string(reinterpret_cast<const char*>(resp), static_cast<size_t>(len))
                : std::string(),
        stapled ? 1 : 0);
    return 1;
  }
  if (!engine->has_ocsp_response_) return SSL_TLSEXT_ERR_NOACK;
  engine->has_ocsp_response_ = false;
  std::string response;
  response.swap(engine->ocsp_response_);
  // An empty answer staples nothing, as in node:tls. Handed to OpenSSL, it
  // would send an empty CertificateStatus, which clients reject as an error.
  if (response.empty()) return SSL_TLSEXT_ERR_NOACK;
  // OpenSSL takes the memory over (and frees it with OPENSSL_free).
  auto* copy = static_cast<unsigned char*>(OPENSSL_malloc(response.size()));
  if (copy == nullptr) return SSL_TLSEXT_ERR_NOACK;
  std::memcpy(copy, response.data(), response.size());
  if (SSL_set_tlsext_status_ocsp_resp(ssl, copy, static_cast<long>(response.size())) != 1) {
    OPENSSL_free(copy);
    return SSL_TLSEXT_ERR_NOACK;
  }
  return SSL_TLSEXT_ERR_OK;
}

namespace {

// Reads the host_name of a ClientHello's server_name extension into `name`
// (left empty without the extension); false for anything but one host_name
// of 1 to 255 bytes without a NUL, which fails the handshake with
// decode_error, as node:tls 22 and 24 do (OpenSSL alone takes an empty name).
bool ClientHelloServerName(SSL* ssl, std::string_view* name) {
  const unsigned char* p = nullptr;
  size_t len = 0;
  if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p, &len) != 1) return true;
  if (len < 5) return false;
  size_t list_len = (size_t{p[0]} << 8) | p[1];
  size_t name_len = (size_t{p[3]} << 8) | p[4];
  if (list_len != len - 2 || p[2] != TLSEXT_NAMETYPE_host_name || name_len != len - 5 ||
      name_len == 0 || name_len > TLSEXT_MAXLEN_host_name ||
      std::memchr(p + 5, 0, name_len) != nullptr) {
    return false;
  }
  *name = std::string_view(reinterpret_cast<const char*>(p + 5), name_len);
  return true;
}

}  // namespace

// A session resumes only under the server name it was made for, as with
// node:tls 22.23.5 and 24.22.3: the session id context is derived from the
// name before OpenSSL looks the offered session (ticket or id) up, in
// node's form, so a fleet of both shares sessions. Derived from the
// context's own value each time, so a ClientHello seen twice (a retried
// callback, a HelloRetryRequest) binds the same way.
void Engine::BindSessionsToServerName(std::string_view name) {
  std::string id = sid_ctx_;
  // No sessionIdContext, and client certificates asked for: left unset, so
  // OpenSSL refuses to resume (as with node:tls). A context made from the
  // name alone would let a session verified under another context's `ca`
  // (or with no certificate at all) resume here as it was.
  if (id.empty() && (SSL_get_verify_mode(ssl()) & SSL_VERIFY_PEER) != 0) return;
  // No server name: node:tls 22.23.5 and 24.22.3 bind to the empty name
  // (an empty context they leave as it is), 20 and 26 to the context as
  // given. Neither can pass for a named session's context, a digest over a
  // name that is not empty. A named session under an empty context stays
  // bound here, where node:tls would resume it under any name.
  if (!name.empty() || (bind_unnamed_ && !id.empty())) {
    std::string input = id;
    input.push_back('\0');
    input.append(name);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    if (EVP_Digest(input.data(), input.size(), digest, &digest_len, EVP_sha256(), nullptr) != 1) {
      return;
    }
    static_assert(SSL_MAX_SID_CTX_LENGTH >= 32, "a SHA-256 digest fits a session id context");
    id.assign(reinterpret_cast<const char*>(digest), digest_len);
  }
  SSL_set_session_id_context(ssl(), reinterpret_cast<const unsigned char*>(id.data()),
                             static_cast<unsigned int>(id.size()));
}

int Engine::ClientHelloCallback(SSL* ssl, int* alert, void* /*arg*/) {
  Engine* engine = FromSSL(ssl);
  if (engine != nullptr && engine->is_server_) {
    std::string_view name;
    if (!ClientHelloServerName(ssl, &name)) {
      *alert = SSL_AD_DECODE_ERROR;
      return SSL_CLIENT_HELLO_ERROR;
    }
    if (engine->phase_ == Phase::kHandshake) {
      // The ClientHello after a HelloRetryRequest must name the server the
      // first one named (RFC 8446 4.1.2): the context, its certificate and
      // its trust for client certificates were chosen by the first, and a
      // session bound to another name would carry that verification there.
      if (!engine->hello_name_) {
        engine->hello_name_.emplace(name);
      } else if (*engine->hello_name_ != name) {
        *alert = SSL_AD_ILLEGAL_PARAMETER;
        return SSL_CLIENT_HELLO_ERROR;
      }
      engine->BindSessionsToServerName(name);
    }
  }
  if (engine == nullptr || !engine->is_server_ || engine->resume_ == Pause::kDone) {
    return SSL_CLIENT_HELLO_SUCCESS;
  }
  if (engine->resume_ == Pause::kWaiting) return SSL_CLIENT_HELLO_RETRY;
  const unsigned char* id = nullptr;
  size_t len = SSL_client_hello_get0_session_id(ssl, &id);
  // As node:tls: a non-empty session_ticket extension resumes on its own, so
  // the application's store is not asked. Only that extension counts: a TLS
  // 1.3 hello resuming by PSK carries an empty one (and a legacy session id
  // for middlebox compatibility), and node:tls asks for that id.
  const unsigned char* ticket = nullptr;
  size_t ticket_len = 0;
  bool has_ticket =
      SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_session_ticket, &ticket, &ticket_len) == 1 &&
      ticket_len > 0;
  if (len == 0 || has_ticket || SSL_client_hello_isv2(ssl)) {
    engine->resume_ = Pause::kDone;
    return SSL_CLIENT_HELLO_SUCCESS;
  }
  engine->resume_ = Pause::kWaiting;
  engine->QueueEvent(EventType::kResumeSession,
                     std::string(reinterpret_cast<const char*>(id), len));
  return SSL_CLIENT_HELLO_RETRY;
}

SSL_SESSION* Engine::GetSessionCallback(SSL* ssl, const unsigned char* /*id*/, int /*len*/,
                                        int* copy) {
  Engine* engine = FromSSL(ssl);
  *copy = 0;  // OpenSSL takes over our reference
  return engine != nullptr ? engine->loaded_session_.release() : nullptr;
}

int Engine::VerifyCallback(int /*preverify_ok*/, X509_STORE_CTX* /*ctx*/) {
  return 1;
}

}  // namespace tlswrap
