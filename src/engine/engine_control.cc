// The engine's controls: what the embedder sets or asks for on a connection
// (renegotiation, tickets, ALPN, verification, PSK, the certificate pause,
// OCSP, tracing, sessions). Each takes effect from the next Step(); the
// pump is in engine.cc.
#include <openssl/ec.h>
#include <openssl/objects.h>
#include <strings.h>

#include <iterator>
#include <string>
#include <vector>

#include "cert_compression.h"
#include "engine.h"

namespace tlswrap {

namespace {

// OpenSSL 3.5's default groups (SSL_CTX_set1_groups_list(3)), in order. A
// context given none uses them, and SSL_get1_groups() does not list them.
// test/key-share.test.js checks that a predicted ClientHello offers the same
// supported_groups as an unpredicted one.
constexpr const char* kDefaultGroups35[] = {
    "X25519MLKEM768", "X25519",    "secp256r1", "X448",
    "secp384r1",      "secp521r1", "ffdhe2048", "ffdhe3072",
};

// Whether `name`, as a group list spells it ("P-256", "prime256v1",
// "secp256r1", "X25519MLKEM768"), is `group` (a NID, or TLSEXT_nid_unknown |
// IANA id for groups without one), whose TLS name is `tls_name`.
bool NamesGroup(const std::string& name, int group, const char* tls_name) {
  if (strcasecmp(name.c_str(), tls_name) == 0) return true;
  int nid = EC_curve_nist2nid(name.c_str());
  if (nid == NID_undef) nid = OBJ_sn2nid(name.c_str());
  if (nid == NID_undef) nid = OBJ_ln2nid(name.c_str());
  return nid != NID_undef && nid == group;
}

}  // namespace

bool Engine::Renegotiate(unsigned long* err) {
  *err = 0;
  if (dead()) return false;
  // Until the version is negotiated SSL_version() is the highest offered
  // (a client) or TLS_ANY_VERSION (a server), and the method is still the
  // version-flexible one: only then is TLS 1.3 known.
  const SSL_METHOD* method = SSL_get_ssl_method(ssl());
  const bool flexible =
      method == TLS_method() || method == TLS_server_method() || method == TLS_client_method();
  const bool tls13 = !flexible && SSL_version(ssl()) >= TLS1_3_VERSION;
  if (phase_ == Phase::kHandshake && !tls13) {
    // The first handshake is under way and serves, as below: a client's
    // SSL_renegotiate() now would leave it in init, its writes stuck.
    return true;
  }
  if (!established() || tls13) {
    // Refused (TLS 1.3 has no renegotiation): OpenSSL's own error, now.
    ErrorQueueGuard guard;
    if (SSL_renegotiate(ssl()) != 1) {
      *err = ERR_peek_error();
      return false;
    }
  } else if (renegotiate_wanted_ || SSL_in_init(ssl()) || SSL_renegotiate_pending(ssl())) {
    // One is already under way and serves as this one too: SSL_renegotiate()
    // mid-handshake leaves OpenSSL in init once that handshake is over, with
    // no ClientHello sent, and every write waits forever (found by
    // fuzz/pair_mutator).
    return true;
  } else {
    // Started after the writes already queued: SSL_read would otherwise
    // send the ClientHello ahead of them.
    renegotiate_wanted_ = true;
  }
  kick_handshake_ = true;
  kick_seq_ = write_seq_;
  return true;
}

bool Engine::NewSessionTicket() {
  if (!is_server_ || !established() || SSL_version(ssl()) < TLS1_3_VERSION) return false;
  // Made after the writes already queued, like a renegotiation.
  ticket_wanted_ = true;
  kick_handshake_ = true;
  kick_seq_ = write_seq_;
  return true;
}

void Engine::SetAlpnProtocols(const unsigned char* wire, size_t len) {
  if (dead()) return;
  if (is_server_) {
    alpn_protos_.assign(wire, wire + len);
  } else {
    ErrorQueueGuard guard;
    SSL_set_alpn_protos(ssl(), wire, static_cast<unsigned int>(len));
  }
}

void Engine::SetVerifyMode(bool request_cert, bool reject_unauthorized) {
  if (dead()) return;
  int mode = SSL_VERIFY_PEER;
  if (is_server_) {
    mode = request_cert ? SSL_VERIFY_PEER : SSL_VERIFY_NONE;
    if (request_cert && reject_unauthorized) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  }
  SSL_set_verify(ssl(), mode, VerifyCallback);
}

void Engine::EnablePsk() {
  if (dead()) return;
  psk_ = true;
  SSL_set_psk_server_callback(ssl(), PskServerCallback);
  SSL_set_psk_client_callback(ssl(), PskClientCallback);
}

bool Engine::SetPskIdentityHint(const std::string& hint) {
  if (dead()) return false;
  ErrorQueueGuard guard;
  return SSL_use_psk_identity_hint(ssl(), hint.c_str()) == 1;
}

void Engine::EnableCertCb() {
  if (!dead() && is_server_) SSL_set_cert_cb(ssl(), CertCallback, nullptr);
}

bool Engine::CertCbDone(SSL_CTX* ctx) {
  if (dead() || cert_cb_ != Pause::kWaiting) return true;
  cert_cb_ = Pause::kDone;
  if (ctx == nullptr) return true;
  return UseKeyCert(ctx);
}

bool Engine::UseKeyCert(SSL_CTX* ctx) {
  if (dead() || !is_server_) return true;
  // Only the chosen context's certificate, key and chain move onto the SSL,
  // as in node:tls. Its SSL_CTX stays the server's, so tickets are sealed and
  // opened with the server's keys: a ClientHello is read before any SNI
  // choice, so tickets sealed with the SNI context's keys would never open.
  // A context with no certificate leaves the server's in place.
  X509* cert = SSL_CTX_get0_certificate(ctx);
  EVP_PKEY* key = SSL_CTX_get0_privatekey(ctx);
  STACK_OF(X509)* chain = nullptr;
  if (cert == nullptr || key == nullptr || SSL_CTX_get0_chain_certs(ctx, &chain) != 1) {
    return true;
  }
  ErrorQueueGuard guard;
  SSL_certs_clear(ssl());
  if (SSL_use_certificate(ssl(), cert) != 1 || SSL_use_PrivateKey(ssl(), key) != 1 ||
      SSL_set1_chain(ssl(), chain) != 1 || !cert_compression::CopyCompressed(ctx, ssl())) {
    return false;
  }
  // Client certificates are checked against the chosen context's CAs, and a
  // chain left to OpenSSL is built from them too.
  SSL_set1_verify_cert_store(ssl(), SSL_CTX_get_cert_store(ctx));
  SSL_set1_chain_cert_store(ssl(), SSL_CTX_get_cert_store(ctx));
  STACK_OF(X509_NAME)* names = SSL_CTX_get_client_CA_list(ctx);
  if (names != nullptr) SSL_set_client_CA_list(ssl(), SSL_dup_CA_list(names));
  return true;
}

void Engine::RequestOCSP() {
  if (dead() || is_server_) return;
  SSL_set_tlsext_status_type(ssl(), TLSEXT_STATUSTYPE_ocsp);
}

void Engine::SetOCSPResponse(const unsigned char* data, size_t len) {
  if (dead() || !is_server_) return;
  ocsp_response_.assign(reinterpret_cast<const char*>(data), len);
  has_ocsp_response_ = true;
}

namespace {

// SSL_trace as node:tls calls it. The trace is best effort: what a failed
// BIO write leaves in the error queue is dropped, and only that (an error
// OpenSSL queued before this message, an alert's cause, must stay).
void TraceMessage(int write_p, int version, int content_type, const void* buf, size_t len, SSL* ssl,
                  void* arg) {
  ERR_set_mark();
  SSL_trace(write_p, version, content_type, buf, len, ssl, arg);
  ERR_pop_to_mark();
}

}  // namespace

bool Engine::EnableTrace() {
  if (dead()) return false;
  if (!trace_bio_) {
    trace_bio_.reset(BIO_new_fp(stderr, BIO_NOCLOSE | BIO_FP_TEXT));
    if (!trace_bio_) return false;
  }
  SSL_set_msg_callback(ssl(), TraceMessage);
  SSL_set_msg_callback_arg(ssl(), trace_bio_.get());
  return true;
}

// A TLS 1.3 client guesses which groups the server takes and sends key
// shares for them: the first configured group before OpenSSL 3.5, two
// (X25519MLKEM768 and X25519) by 3.5's default. Sending the one this server
// chose last time saves a key generation, or the HelloRetryRequest round
// trip where the guess was wrong. supported_groups keeps every group (from
// 3.5 in its order; before, the predicted one moves first), so a server that
// now wants another group still asks for it.
bool Engine::PredictKeyShare(int group, const std::string& configured) {
  if (dead() || is_server_ || phase_ != Phase::kNew) return false;
  ErrorQueueGuard guard;
  const char* want = SSL_group_to_name(ssl(), group);
  if (want == nullptr) return false;
  // One build serves every Node, so the OpenSSL that runs decides: from 3.5
  // a '*' marks the groups that get a key share.
  const bool marks = OpenSSL_version_num() >= 0x30500000L;
  std::vector<std::string> names;
  if (configured.empty()) {
    // Before 3.5 the default list is not known here (nor needed: its first
    // group, X25519, is what servers take).
    if (!marks) return false;
    names.assign(std::begin(kDefaultGroups35), std::end(kDefaultGroups35));
  } else {
    // A list in 3.5's own syntax (tuples, key-share or optional marks) is
    // left as configured: no prediction.
    if (configured.find_first_of("*/?") != std::string::npos) return false;
    size_t from = 0;
    while (from <= configured.size()) {
      size_t to = configured.find(':', from);
      if (to == std::string::npos) to = configured.size();
      names.push_back(configured.substr(from, to - from));
      if (names.back().empty() || names.back()[0] == '-') return false;
      from = to + 1;
    }
  }
  size_t at = 0;
  while (at < names.size() && !NamesGroup(names[at], group, want)) at++;
  if (at == names.size()) return false;
  // A configured list's first group already gets the one key share.
  if (at == 0 && !configured.empty()) return false;
  std::string list;
  if (marks) {
    // Marked where it is: the order of supported_groups stays as configured.
    // The default's other groups are optional ('?'), as in OpenSSL's own
    // list: one a provider lacks (X448 under FIPS) is left out, not an error.
    for (size_t i = 0; i < names.size(); i++) {
      if (i > 0) list += ':';
      if (i == at) {
        list += '*';
      } else if (configured.empty()) {
        list += '?';
      }
      list += names[i];
    }
  } else {
    list = names[at];
    for (size_t i = 0; i < names.size(); i++) {
      if (i != at) list += ':' + names[i];
    }
  }
  return SSL_set1_groups_list(ssl(), list.c_str()) == 1;
}

int Engine::NegotiatedGroup() const {
  // Not before: OpenSSL 3.0 reads a session a client does not have yet.
  if (dead() || !SSL_is_init_finished(ssl())) return 0;
  return SSL_get_negotiated_group(ssl());
}

void Engine::SetSessionIdContext(const std::string& sid_ctx, bool bind_unnamed) {
  sid_ctx_ = sid_ctx;
  bind_unnamed_ = bind_unnamed;
}

void Engine::EnableSessionEvents(bool new_session, bool resume_session) {
  new_session_events_ = new_session;
  // Without a resumeSession listener there is nothing to wait for.
  resume_ = resume_session ? Pause::kNone : Pause::kDone;
}

void Engine::LoadSession(const unsigned char* der, size_t len) {
  if (dead() || resume_ != Pause::kWaiting) return;
  if (len > 0) {
    ErrorQueueGuard guard;
    loaded_session_.reset(d2i_SSL_SESSION(nullptr, &der, static_cast<long>(len)));
  }
  resume_ = Pause::kDone;
}

void Engine::NewSessionDone() {
  if (new_sessions_pending_ > 0) new_sessions_pending_--;
}

}  // namespace tlswrap
