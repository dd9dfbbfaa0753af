// TLSWrap's OpenSSL callbacks. The informative ones only queue events
// stamped with the plaintext offset they happened at (delivery keeps wire
// order); SNI and resumption pause the handshake instead of calling JS; only
// ALPNCallback runs JS while OpenSSL is on the stack.
#include <cstring>

#include "addon.h"
#include "errors.h"
#include "js_call.h"
#include "secure_context.h"
#include "tls_wrap.h"

namespace tlswrap {

// ---- OpenSSL callbacks: they only record, never call JS ----

void TLSWrap::InfoCallback(const SSL* ssl, int where, int /*ret*/) {
  TLSWrap* wrap = FromSSL(ssl);
  if (wrap == nullptr) return;
  // TLS 1.3 post-handshake messages (tickets, KeyUpdate) are not handshakes
  // in node:tls's sense; only TLS 1.2 renegotiation repeats these.
  bool post_handshake = wrap->established_ && SSL_version(ssl) >= TLS1_3_VERSION;
  if (post_handshake) return;
  // A server's HelloRequest is a "handshake" of its own to OpenSSL (START,
  // DONE) while the renegotiation it asks for is still pending: that DONE
  // must not complete renegotiate(); the client's handshake that follows does.
  if (wrap->is_server_ && SSL_renegotiate_pending(const_cast<SSL*>(ssl))) return;
  if (where & SSL_CB_HANDSHAKE_START) wrap->QueueEvent(EventType::kHandshakeStart);
  if (where & SSL_CB_HANDSHAKE_DONE) {
    wrap->established_ = true;
    wrap->QueueEvent(EventType::kHandshakeDone);
  }
}

int TLSWrap::NewSessionCallback(SSL* ssl, SSL_SESSION* session) {
  TLSWrap* wrap = FromSSL(ssl);
  if (wrap == nullptr || wrap->destroyed_) return 0;
  if (wrap->is_server_ && !wrap->new_session_events_) return 0;
  int len = i2d_SSL_SESSION(session, nullptr);
  if (len <= 0) return 0;
  std::string der(static_cast<size_t>(len), '\0');
  auto* p = reinterpret_cast<unsigned char*>(&der[0]);
  i2d_SSL_SESSION(session, &p);
  if (wrap->is_server_) {
    unsigned int id_len = 0;
    const unsigned char* id = SSL_SESSION_get_id(session, &id_len);
    std::string payload(1, static_cast<char>(id_len));
    payload.append(reinterpret_cast<const char*>(id), id_len);
    payload.append(der);
    wrap->QueueEvent(EventType::kNewSession, std::move(payload));
  } else {
    wrap->QueueEvent(EventType::kSession, std::move(der));
  }
  return 0;  // we keep no reference to `session`
}

void TLSWrap::KeylogCallback(const SSL* ssl, const char* line) {
  TLSWrap* wrap = FromSSL(ssl);
  if (wrap == nullptr || !wrap->keylog_ || wrap->destroyed_) return;
  std::string entry(line);
  entry.push_back('\n');
  wrap->QueueEvent(EventType::kKeylog, std::move(entry));
}

int TLSWrap::AlpnSelectCallback(SSL* ssl, const unsigned char** out, unsigned char* outlen,
                                const unsigned char* in, unsigned int inlen, void* /*arg*/) {
  TLSWrap* wrap = FromSSL(ssl);
  if (wrap == nullptr) return SSL_TLSEXT_ERR_NOACK;
  if (!wrap->alpn_callback_.IsEmpty()) return wrap->RunALPNCallback(out, outlen, in, inlen);
  if (wrap->alpn_protos_.empty()) return SSL_TLSEXT_ERR_NOACK;
  unsigned char* selected = nullptr;
  int status =
      SSL_select_next_proto(&selected, outlen, wrap->alpn_protos_.data(),
                            static_cast<unsigned int>(wrap->alpn_protos_.size()), in, inlen);
  *out = selected;
  // node:tls answers a client with no protocol in common with a fatal
  // no_application_protocol alert.
  return status == OPENSSL_NPN_NEGOTIATED ? SSL_TLSEXT_ERR_OK : SSL_TLSEXT_ERR_ALERT_FATAL;
}

// The one place JS runs while OpenSSL is on the stack: the answer is needed
// now. A destroy() from inside is deferred (cycling_ is set); no C++
// exception may cross OpenSSL's frames, so a JS throw becomes a fatal alert.
int TLSWrap::RunALPNCallback(const unsigned char** out, unsigned char* outlen,
                             const unsigned char* in, unsigned int inlen) {
  if (destroyed_) return SSL_TLSEXT_ERR_ALERT_FATAL;
  Napi::Env env = Env();
  try {
    Napi::HandleScope scope(env);
    const char* name = SSL_get_servername(ssl(), TLSEXT_NAMETYPE_host_name);
    Napi::Value servername = name != nullptr ? Napi::String::New(env, name) : env.Undefined();
    auto offered = Napi::Buffer<unsigned char>::Copy(env, in, inlen);
    Napi::Value answer;
    if (CallJs(env, Value(), alpn_callback_, {servername, offered}, *async_context_, &answer) !=
        JsCallResult::kOk) {
      StopForTeardown();
      return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    if (destroyed_ || !answer.IsNumber()) return SSL_TLSEXT_ERR_ALERT_FATAL;
    // JS answers with the offset of the chosen entry in the client's list.
    int64_t at = answer.As<Napi::Number>().Int64Value();
    if (at < 0 || static_cast<uint64_t>(at) >= inlen ||
        at + 1 + in[at] > static_cast<int64_t>(inlen)) {
      return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = in + at + 1;
    *outlen = in[at];
    return SSL_TLSEXT_ERR_OK;
  } catch (const Napi::Error& e) {
    // Reported like any uncaught exception from a callback.
    napi_fatal_exception(env, e.Value());
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
}

int TLSWrap::CertCallback(SSL* ssl, void* /*arg*/) {
  TLSWrap* wrap = FromSSL(ssl);
  if (wrap == nullptr) return 0;
  switch (wrap->cert_cb_state_) {
    case CertCbState::kDone:
      return 1;
    case CertCbState::kWaiting:
      return -1;
    case CertCbState::kNone:
      break;
  }
  // Pause the handshake (SSL_ERROR_WANT_X509_LOOKUP) while JS picks a context
  // for the server name; certCbDone() resumes it.
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  wrap->cert_cb_state_ = CertCbState::kWaiting;
  wrap->QueueEvent(EventType::kCertCb, name != nullptr ? name : "");
  return -1;
}

int TLSWrap::ClientHelloCallback(SSL* ssl, int* /*alert*/, void* /*arg*/) {
  TLSWrap* wrap = FromSSL(ssl);
  if (wrap == nullptr || !wrap->is_server_ || wrap->resume_state_ == CertCbState::kDone) {
    return SSL_CLIENT_HELLO_SUCCESS;
  }
  if (wrap->resume_state_ == CertCbState::kWaiting) return SSL_CLIENT_HELLO_RETRY;
  const unsigned char* id = nullptr;
  size_t len = SSL_client_hello_get0_session_id(ssl, &id);
  if (len == 0 || SSL_client_hello_isv2(ssl)) {
    wrap->resume_state_ = CertCbState::kDone;
    return SSL_CLIENT_HELLO_SUCCESS;
  }
  wrap->resume_state_ = CertCbState::kWaiting;
  wrap->QueueEvent(EventType::kResumeSession, std::string(reinterpret_cast<const char*>(id), len));
  return SSL_CLIENT_HELLO_RETRY;
}

SSL_SESSION* TLSWrap::GetSessionCallback(SSL* ssl, const unsigned char* /*id*/, int /*len*/,
                                         int* copy) {
  TLSWrap* wrap = FromSSL(ssl);
  *copy = 0;  // OpenSSL takes over our reference
  return wrap != nullptr ? wrap->loaded_session_.release() : nullptr;
}

int TLSWrap::VerifyCallback(int /*preverify_ok*/, X509_STORE_CTX* /*ctx*/) {
  return 1;
}

void TLSWrap::QueueEvent(EventType type, std::string payload, unsigned long error) {
  events_.push_back(Event{type, read_fill_, std::move(payload), error});
}

}  // namespace tlswrap
