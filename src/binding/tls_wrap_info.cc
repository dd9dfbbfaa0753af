// TLSWrap's class definition, per-connection setup (SNI, ALPN, sessions,
// onread buffer, keylog) and the read-only views of a connection
// (certificates, cipher, session, keying material).
#include <openssl/ec.h>
#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <vector>

#include "addon.h"
#include "errors.h"
#include "js_call.h"
#include "secure_context.h"
#include "tls_wrap.h"
#include "wire_string.h"

namespace tlswrap {

Napi::Function TLSWrap::Init(Napi::Env env) {
  return DefineClass(env, "TLSWrap",
                     {
                         InstanceMethod<&TLSWrap::SetCallbacks>("setCallbacks"),
                         InstanceMethod<&TLSWrap::Start>("start"),
                         InstanceMethod<&TLSWrap::Receive>("receive"),
                         InstanceMethod<&TLSWrap::ReceiveEOF>("receiveEOF"),
                         InstanceMethod<&TLSWrap::FinishBatch>("finishBatch"),
                         InstanceMethod<&TLSWrap::TransportDrained>("transportDrained"),
                         InstanceMethod<&TLSWrap::CiphertextFlushed>("ciphertextFlushed"),
                         InstanceMethod<&TLSWrap::Writev>("writev"),
                         InstanceMethod<&TLSWrap::Shutdown>("shutdown"),
                         InstanceMethod<&TLSWrap::Destroy>("destroy"),
                         InstanceMethod<&TLSWrap::ReadStart>("readStart"),
                         InstanceMethod<&TLSWrap::ReadStop>("readStop"),
                         InstanceMethod<&TLSWrap::SetReadBuffer>("setReadBuffer"),
                         InstanceMethod<&TLSWrap::SetServername>("setServername"),
                         InstanceMethod<&TLSWrap::SetSession>("setSession"),
                         InstanceMethod<&TLSWrap::PredictKeyShare>("predictKeyShare"),
                         InstanceMethod<&TLSWrap::GetNegotiatedGroup>("getNegotiatedGroup"),
                         InstanceMethod<&TLSWrap::SetALPNProtocols>("setALPNProtocols"),
                         InstanceMethod<&TLSWrap::SetVerifyMode>("setVerifyMode"),
                         InstanceMethod<&TLSWrap::EnableKeylog>("enableKeylog"),
                         InstanceMethod<&TLSWrap::EnableCertCb>("enableCertCb"),
                         InstanceMethod<&TLSWrap::CertCbDone>("certCbDone"),
                         InstanceMethod<&TLSWrap::SetKeyCert>("setKeyCert"),
                         InstanceMethod<&TLSWrap::RequestOCSP>("requestOCSP"),
                         InstanceMethod<&TLSWrap::SetOCSPResponse>("setOCSPResponse"),
                         InstanceMethod<&TLSWrap::EnableTrace>("enableTrace"),
                         InstanceMethod<&TLSWrap::UseNativeTransport>("useNativeTransport"),
                         InstanceMethod<&TLSWrap::ReleaseTransport>("releaseTransport"),
                         InstanceMethod<&TLSWrap::GetAddress>("getAddress"),
                         InstanceMethod<&TLSWrap::SetNoDelay>("setNoDelay"),
                         InstanceMethod<&TLSWrap::SetKeepAlive>("setKeepAlive"),
                         InstanceMethod<&TLSWrap::RefHandle>("ref"),
                         InstanceMethod<&TLSWrap::UnrefHandle>("unref"),
                         InstanceMethod<&TLSWrap::ResetOnClose>("resetOnClose"),
                         InstanceMethod<&TLSWrap::EnableSessionEvents>("enableSessionEvents"),
                         InstanceMethod<&TLSWrap::LoadSession>("loadSession"),
                         InstanceMethod<&TLSWrap::NewSessionDone>("newSessionDone"),
                         InstanceMethod<&TLSWrap::Renegotiate>("renegotiate"),
                         InstanceMethod<&TLSWrap::NewSessionTicket>("newSessionTicket"),
                         InstanceMethod<&TLSWrap::SetMaxSendFragment>("setMaxSendFragment"),
                         InstanceMethod<&TLSWrap::VerifyError>("verifyError"),
                         InstanceMethod<&TLSWrap::GetPeerCertChain>("getPeerCertChain"),
                         InstanceMethod<&TLSWrap::GetPeerLeaf>("getPeerLeaf"),
                         InstanceMethod<&TLSWrap::GetCertificate>("getCertificate"),
                         InstanceMethod<&TLSWrap::GetCipher>("getCipher"),
                         InstanceMethod<&TLSWrap::GetProtocol>("getProtocol"),
                         InstanceMethod<&TLSWrap::GetSession>("getSession"),
                         InstanceMethod<&TLSWrap::IsSessionReused>("isSessionReused"),
                         InstanceMethod<&TLSWrap::GetTLSTicket>("getTLSTicket"),
                         InstanceMethod<&TLSWrap::EnableALPNCallback>("enableALPNCallback"),
                         InstanceMethod<&TLSWrap::EnablePskCallback>("enablePskCallback"),
                         InstanceMethod<&TLSWrap::SetPskIdentityHint>("setPskIdentityHint"),
                         InstanceMethod<&TLSWrap::GetFinished>("getFinished"),
                         InstanceMethod<&TLSWrap::GetPeerFinished>("getPeerFinished"),
                         InstanceMethod<&TLSWrap::GetALPNProtocol>("getALPNProtocol"),
                         InstanceMethod<&TLSWrap::GetServername>("getServername"),
                         InstanceMethod<&TLSWrap::ExportKeyingMaterial>("exportKeyingMaterial"),
                         InstanceMethod<&TLSWrap::GetEphemeralKeyInfo>("getEphemeralKeyInfo"),
                         InstanceMethod<&TLSWrap::GetSharedSigalgs>("getSharedSigalgs"),
                         InstanceMethod<&TLSWrap::IsInitFinished>("isInitFinished"),
                         InstanceMethod<&TLSWrap::RunInAsyncContext>("runInAsyncContext"),
                         InstanceMethod<&TLSWrap::GetFd>("getFd"),
                         InstanceMethod<&TLSWrap::WriteProgressed>("writeProgressed"),
                         InstanceMethod<&TLSWrap::RecordBuffersHeld>("recordBuffersHeld"),
                         InstanceMethod<&TLSWrap::AsyncReset>("resetAsyncContext"),
                     });
}

void TLSWrap::SetServername(const Napi::CallbackInfo& info) {
  if (dead() || engine_->is_server()) return;
  std::string name = info[0].ToString().Utf8Value();
  ErrorQueueGuard guard;
  SSL_set_tlsext_host_name(ssl(), name.c_str());
}

void TLSWrap::SetSession(const Napi::CallbackInfo& info) {
  if (dead()) return;
  auto buf = BufferArg(info, 0, "session");
  ErrorQueueGuard guard;
  SslSessionPtr session = AddonData::Get(info.Env())->DecodeSession(buf.Data(), buf.Length());
  // As node:tls: bytes that are no session are ignored, and the handshake is
  // a full one (a store of the program's own may hand back anything).
  if (!session) return;
  if (SSL_set_session(ssl(), session.get()) != 1)
    ThrowCryptoError(info.Env(), "SSL_set_session failed");
}

Napi::Value TLSWrap::PredictKeyShare(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead() || !info[0].IsNumber()) return Napi::Boolean::New(env, false);
  const SecureContext* sc = SecureContext::FromValue(context_.Value());
  return Napi::Boolean::New(
      env, engine_->PredictKeyShare(info[0].As<Napi::Number>().Int32Value(), sc->groups()));
}

Napi::Value TLSWrap::GetNegotiatedGroup(const Napi::CallbackInfo& info) {
  // Reachable after destroy(): tlsSocket.ssl is the handle.
  if (dead()) return Napi::Number::New(info.Env(), 0);
  return Napi::Number::New(info.Env(), engine_->NegotiatedGroup());
}

void TLSWrap::SetALPNProtocols(const Napi::CallbackInfo& info) {
  if (dead()) return;
  auto buf = BufferArg(info, 0, "protocols");
  engine_->SetAlpnProtocols(buf.Data(), buf.Length());
}

void TLSWrap::SetVerifyMode(const Napi::CallbackInfo& info) {
  if (dead()) return;
  engine_->SetVerifyMode(info[0].ToBoolean().Value(), info[1].ToBoolean().Value());
}

Napi::Value TLSWrap::SetMaxSendFragment(const Napi::CallbackInfo& info) {
  if (dead()) return Napi::Boolean::New(info.Env(), false);
  ErrorQueueGuard guard;
  long size = info[0].As<Napi::Number>().Int64Value();
  return Napi::Boolean::New(info.Env(), SSL_set_max_send_fragment(ssl(), size) == 1);
}

Napi::Value TLSWrap::VerifyError(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return env.Null();
  X509* peer = SSL_get0_peer_certificate(ssl());
  // No certificate at all is reported the way node:tls reports it, unless
  // the peer proved itself with a pre-shared key: a TLS 1.2 PSK suite, or a
  // TLS 1.3 handshake on a PSK (which OpenSSL counts as a resumption). On a
  // server that PSK must be one pskCallback gave for this connection, or a
  // ticket sealed on such a handshake: stricter than node:tls, a ticket
  // from a client that never showed a certificate nor a key proves nothing
  // (it may even come from another server sharing the ticket keys and asking
  // for none). A client only resumes sessions it verified itself.
  long result =
      peer != nullptr ? SSL_get_verify_result(ssl()) : X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT;
  if (peer == nullptr && engine_->psk_enabled()) {
    const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl());
    const bool tls13_psk = engine_->is_server() ? engine_->PeerProvedByPsk()
                                                : SSL_version(ssl()) == TLS1_3_VERSION &&
                                                      SSL_session_reused(ssl()) == 1;
    if ((cipher != nullptr && SSL_CIPHER_get_auth_nid(cipher) == NID_auth_psk) || tls13_psk) {
      result = X509_V_OK;
    }
  }
  if (result == X509_V_OK) return env.Null();
  Napi::Error err = Napi::Error::New(env, X509_verify_cert_error_string(result));
  err.Value().Set("code", VerifyErrorCode(result));
  return err.Value();
}

namespace {

// Appends the issuers of `cert` found in the store verification uses (the
// SSL's own, set for an SNI context, else its context's), up to a
// self-issued one.
void AppendIssuersFromStore(Napi::Env env, SSL* ssl, X509* cert, Napi::Array* out, uint32_t* i) {
  ErrorQueueGuard guard;
  X509_STORE* store = nullptr;
  SSL_get0_verify_cert_store(ssl, &store);
  if (store == nullptr) store = SSL_CTX_get_cert_store(SSL_get_SSL_CTX(ssl));
  DeletePtr<X509_STORE_CTX, X509_STORE_CTX_free> store_ctx(X509_STORE_CTX_new());
  if (store == nullptr || !store_ctx ||
      X509_STORE_CTX_init(store_ctx.get(), store, nullptr, nullptr) != 1) {
    return;
  }
  X509Ptr held;  // the issuer found last: `cert` from the second round on
  // Bounded as OpenSSL bounds a chain's depth (a cross-signed pair loops).
  for (int depth = 0; depth < 100 && X509_check_issued(cert, cert) != X509_V_OK; depth++) {
    X509* found = nullptr;
    if (X509_STORE_CTX_get1_issuer(&found, store_ctx.get(), cert) != 1) break;
    X509Ptr issuer(found);
    // A self-signed certificate whose keyUsage forbids signing certificates
    // fails X509_check_issued above, yet the store offers it as its own
    // issuer: it ends the chain instead of repeating in it.
    if (X509_cmp(issuer.get(), cert) == 0) break;
    out->Set((*i)++, DerOf(env, issuer.get()));
    held = std::move(issuer);
    cert = held.get();
  }
}

}  // namespace

Napi::Value TLSWrap::GetPeerCertChain(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env);
  if (dead()) return out;
  X509* leaf = SSL_get0_peer_certificate(ssl());
  if (leaf == nullptr) return out;
  ErrorQueueGuard guard;
  uint32_t i = 0;
  // With `sent` true, what the peer sent, in its order (node:tls links
  // getPeerX509Certificate()'s issuerCertificate that way).
  bool sent = info.Length() > 0 && info[0].ToBoolean().Value();
  if (!sent && SSL_get_verify_result(ssl()) == X509_V_OK) {
    // The chain as verified: it ends at the trusted root.
    STACK_OF(X509)* verified = SSL_get0_verified_chain(ssl());
    for (int k = 0; verified != nullptr && k < sk_X509_num(verified); k++) {
      out.Set(i++, DerOf(env, sk_X509_value(verified, k)));
    }
    if (i > 0) return out;
  }
  // A server's view of the peer chain lacks the leaf; a client's starts
  // with it.
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl());
  std::vector<X509*> others;
  for (int k = 0; chain != nullptr && k < sk_X509_num(chain); k++) {
    X509* cert = sk_X509_value(chain, k);
    if (k == 0 && !engine_->is_server() && X509_cmp(cert, leaf) == 0) continue;
    others.push_back(cert);
  }
  out.Set(i++, DerOf(env, leaf));
  if (sent) {
    for (X509* cert : others) out.Set(i++, DerOf(env, cert));
    return out;
  }
  // Not verified (or a resumption, whose session keeps the leaf only): as
  // node:tls links it, each next certificate is the first one sent that
  // issued the one before (by name and key identifier; no signature is
  // checked), each used once; then the trust store's.
  X509* last = leaf;
  for (;;) {
    auto issuer = std::find_if(others.begin(), others.end(),
                               [last](X509* c) { return X509_check_issued(c, last) == X509_V_OK; });
    if (issuer == others.end()) break;
    last = *issuer;
    others.erase(issuer);
    out.Set(i++, DerOf(env, last));
  }
  AppendIssuersFromStore(env, ssl(), last, &out, &i);
  return out;
}

// The peer's own certificate alone, without encoding the rest of its chain.
Napi::Value TLSWrap::GetPeerLeaf(const Napi::CallbackInfo& info) {
  if (dead()) return info.Env().Undefined();
  X509* leaf = SSL_get0_peer_certificate(ssl());
  if (leaf == nullptr) return info.Env().Undefined();
  return DerOf(info.Env(), leaf);
}

Napi::Value TLSWrap::GetCertificate(const Napi::CallbackInfo& info) {
  if (dead()) return info.Env().Undefined();
  X509* cert = SSL_get_certificate(ssl());
  if (cert == nullptr) return info.Env().Undefined();
  return DerOf(info.Env(), cert);
}

Napi::Value TLSWrap::GetCipher(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return env.Undefined();
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl());
  if (cipher == nullptr) return env.Undefined();
  Napi::Object out = Napi::Object::New(env);
  out.Set("name", SSL_CIPHER_get_name(cipher));
  out.Set("standardName", SSL_CIPHER_standard_name(cipher));
  out.Set("version", SSL_CIPHER_get_version(cipher));
  return out;
}

Napi::Value TLSWrap::GetProtocol(const Napi::CallbackInfo& info) {
  if (dead()) return info.Env().Null();
  return Napi::String::New(info.Env(), SSL_get_version(ssl()));
}

Napi::Value TLSWrap::GetSession(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return env.Undefined();
  SSL_SESSION* session = SSL_get_session(ssl());
  if (session == nullptr) return env.Undefined();
  int len = i2d_SSL_SESSION(session, nullptr);
  if (len <= 0) return env.Undefined();
  auto out = Napi::Buffer<unsigned char>::New(env, static_cast<size_t>(len));
  unsigned char* p = out.Data();
  i2d_SSL_SESSION(session, &p);
  return out;
}

Napi::Value TLSWrap::GetTLSTicket(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead() || engine_->is_server()) return env.Undefined();
  SSL_SESSION* session = SSL_get_session(ssl());
  const unsigned char* ticket = nullptr;
  size_t len = 0;
  if (session != nullptr) SSL_SESSION_get0_ticket(session, &ticket, &len);
  if (ticket == nullptr || len == 0) return env.Undefined();
  return Napi::Buffer<unsigned char>::Copy(env, ticket, len);
}

Napi::Value TLSWrap::IsSessionReused(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), !dead() && SSL_session_reused(ssl()) == 1);
}

namespace {

template <size_t (*Get)(const SSL*, void*, size_t)>
Napi::Value FinishedMessage(Napi::Env env, SSL* ssl) {
  if (ssl == nullptr) return env.Undefined();
  char probe[1];
  size_t len = Get(ssl, probe, 0);
  if (len == 0) return env.Undefined();
  auto out = Napi::Buffer<char>::New(env, len);
  Get(ssl, out.Data(), len);
  return out;
}

}  // namespace

Napi::Value TLSWrap::GetFinished(const Napi::CallbackInfo& info) {
  return FinishedMessage<SSL_get_finished>(info.Env(), ssl());
}

Napi::Value TLSWrap::GetPeerFinished(const Napi::CallbackInfo& info) {
  return FinishedMessage<SSL_get_peer_finished>(info.Env(), ssl());
}

Napi::Value TLSWrap::GetALPNProtocol(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return Napi::Boolean::New(env, false);
  const unsigned char* data = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl(), &data, &len);
  if (data == nullptr || len == 0) return Napi::Boolean::New(env, false);
  return WireString(env, reinterpret_cast<const char*>(data), len);
}

Napi::Value TLSWrap::GetServername(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) return Napi::Boolean::New(env, false);
  const char* name = SSL_get_servername(ssl(), TLSEXT_NAMETYPE_host_name);
  if (name == nullptr) return Napi::Boolean::New(env, false);
  return WireString(env, name);
}

Napi::Value TLSWrap::ExportKeyingMaterial(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead()) ThrowCodedError(env, "ERR_SOCKET_CLOSED", "Socket is closed");
  size_t len = info[0].As<Napi::Number>().Uint32Value();
  std::string label = info[1].ToString().Utf8Value();
  bool use_context = info.Length() > 2 && info[2].IsBuffer();
  std::string context;
  if (use_context) {
    auto buf = info[2].As<Napi::Buffer<char>>();
    context.assign(buf.Data(), buf.Length());
  }
  auto out = Napi::Buffer<unsigned char>::New(env, len);
  ErrorQueueGuard guard;
  if (SSL_export_keying_material(ssl(), out.Data(), len, label.data(), label.size(),
                                 reinterpret_cast<const unsigned char*>(context.data()),
                                 context.size(), use_context ? 1 : 0) != 1) {
    ThrowCryptoError(env, "Key export failed");
  }
  return out;
}

Napi::Value TLSWrap::GetEphemeralKeyInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (dead() || engine_->is_server()) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  // Before the handshake has a session, OpenSSL 3.0's group query reads
  // through the missing session (a crash): nothing is known yet.
  if (SSL_get_session(ssl()) == nullptr) return out;
  EVP_PKEY* key = nullptr;
  if (SSL_get_peer_tmp_key(ssl(), &key) != 1 || key == nullptr) {
    // Groups with no key object of their own (OpenSSL 3.5's hybrid ML-KEM
    // ones) are named only, as node:tls names them.
    int group = SSL_get_negotiated_group(ssl());
    const char* name = group != 0 ? SSL_group_to_name(ssl(), group) : nullptr;
    if (name != nullptr) {
      out.Set("type", "TLSGroup");
      out.Set("name", name);
      out.Set("size", env.Undefined());
    }
    return out;
  }
  EvpPkeyPtr owned(key);
  int id = EVP_PKEY_id(key);
  if (id == EVP_PKEY_DH) {
    out.Set("type", "DH");
    out.Set("size", EVP_PKEY_bits(key));
  } else if (id == EVP_PKEY_EC || id == EVP_PKEY_X25519 || id == EVP_PKEY_X448) {
    out.Set("type", "ECDH");
    const char* name = nullptr;
    if (id == EVP_PKEY_EC) {
      char group[80];
      size_t glen = 0;
      if (EVP_PKEY_get_utf8_string_param(key, "group", group, sizeof(group), &glen) == 1) {
        int nid = OBJ_txt2nid(group);
        name = nid != NID_undef ? OBJ_nid2sn(nid) : nullptr;
        if (name == nullptr) out.Set("name", std::string(group, glen));
      }
    } else {
      name = OBJ_nid2sn(id);
    }
    if (name != nullptr) out.Set("name", name);
    out.Set("size", EVP_PKEY_bits(key));
  }
  return out;
}

Napi::Value TLSWrap::GetSharedSigalgs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env);
  if (dead()) return out;
  int count = SSL_get_shared_sigalgs(ssl(), 0, nullptr, nullptr, nullptr, nullptr, nullptr);
  for (int i = 0; i < count; i++) {
    int sign = 0;
    int hash = 0;
    SSL_get_shared_sigalgs(ssl(), i, &sign, &hash, nullptr, nullptr, nullptr);
    std::string name;
    switch (sign) {
      case EVP_PKEY_RSA:
        name = "RSA";
        break;
      case EVP_PKEY_RSA_PSS:
        name = "RSA-PSS";
        break;
      case EVP_PKEY_DSA:
        name = "DSA";
        break;
      case EVP_PKEY_EC:
        name = "ECDSA";
        break;
      case NID_ED25519:
        name = "Ed25519";
        break;
      case NID_ED448:
        name = "Ed448";
        break;
      default: {
        const char* sn = OBJ_nid2sn(sign);
        name = sn != nullptr ? sn : "UNDEF";
      }
    }
    const char* hash_name = OBJ_nid2sn(hash);
    name += '+';
    name += hash_name != nullptr ? hash_name : "UNDEF";
    out.Set(static_cast<uint32_t>(i), name);
  }
  return out;
}

Napi::Value TLSWrap::IsInitFinished(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), !dead() && SSL_is_init_finished(ssl()) == 1);
}

void TLSWrap::SetReadBuffer(const Napi::CallbackInfo& info) {
  if (info[0].IsObject()) {
    read_buffer_ = Napi::Persistent(info[0].As<Napi::Object>());
  } else {
    read_buffer_.Reset();
  }
  if (engine_) engine_->SetUserBuffers(!read_buffer_.IsEmpty());
}

void TLSWrap::EnableALPNCallback(const Napi::CallbackInfo& info) {
  alpn_callback_ = Napi::Persistent(info[0].As<Napi::Function>());
  if (engine_) engine_->SetAlpnCallback(true);
}

void TLSWrap::EnablePskCallback(const Napi::CallbackInfo& info) {
  psk_callback_ = Napi::Persistent(info[0].As<Napi::Function>());
  if (engine_) engine_->EnablePsk();
}

Napi::Value TLSWrap::SetPskIdentityHint(const Napi::CallbackInfo& info) {
  std::string hint = info[0].ToString().Utf8Value();
  return Napi::Boolean::New(info.Env(), !dead() && engine_->SetPskIdentityHint(hint));
}

void TLSWrap::EnableSessionEvents(const Napi::CallbackInfo& info) {
  if (engine_)
    engine_->EnableSessionEvents(info[0].ToBoolean().Value(), info[1].ToBoolean().Value());
}

void TLSWrap::EnableKeylog(const Napi::CallbackInfo& /*info*/) {
  if (engine_) engine_->EnableKeylog();
}

void TLSWrap::EnableCertCb(const Napi::CallbackInfo& /*info*/) {
  if (engine_) engine_->EnableCertCb();
}

void TLSWrap::RequestOCSP(const Napi::CallbackInfo& /*info*/) {
  if (!dead()) engine_->RequestOCSP();
}

// Server, from an 'OCSPRequest' callback (JS checked it is a Buffer): the
// response to staple once the certificate callback's pause ends.
void TLSWrap::SetOCSPResponse(const Napi::CallbackInfo& info) {
  if (dead()) return;
  auto buf = BufferArg(info, 0, "response");
  engine_->SetOCSPResponse(buf.Data(), buf.Length());
}

void TLSWrap::EnableTrace(const Napi::CallbackInfo& /*info*/) {
  if (!dead()) engine_->EnableTrace();
}

// Calls fn() under the connection's async context and returns what it
// returns: N-API has no other way to learn that context's async id, which
// node:http's keep-alive agent asks the handle for (getAsyncId()).
Napi::Value TLSWrap::RunInAsyncContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!async_context_ || !info[0].IsFunction()) return env.Undefined();
  napi_value result = nullptr;
  NoteJsEntry();
  napi_status status = napi_make_callback(env, static_cast<napi_async_context>(*async_context_),
                                          Value(), info[0], 0, nullptr, &result);
  if (status != napi_ok) return env.Undefined();  // fn's exception stays pending
  return Napi::Value(env, result);
}

// Whether OpenSSL may still hold record buffers (tests of the idle sweep).
Napi::Value TLSWrap::RecordBuffersHeld(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), !dead() && engine_->record_buffers_held());
}

// handle.fd, as node's: the connection's socket on the native transport;
// -1 where ciphertext goes through a JS Duplex (no fd of ours to give).
Napi::Value TLSWrap::GetFd(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), native_ != nullptr ? native_->fd() : -1);
}

// Whether ciphertext reached the transport since the last write began or
// the last time this was asked: net.Socket's idle timeout does not fire
// while a write is making progress (it compares writeQueueSize likewise).
Napi::Value TLSWrap::WriteProgressed(const Napi::CallbackInfo& info) {
  uint64_t flushed = transport_ ? FlushedTotal() : progress_mark_;
  bool moved = flushed != progress_mark_;
  progress_mark_ = flushed;
  return Napi::Boolean::New(info.Env(), moved);
}

// handle.asyncReset(resource), as node's: the connection gets a new async id
// (an init hook with `resource`, in the context of the caller), which
// node:http's agent asks for when it reuses a keep-alive socket, so the
// socket's callbacks run in the new request's context. JS may be running
// under the old context right now: it is kept until the next reset or the
// handle's end (its destroy hook runs then).
void TLSWrap::AsyncReset(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!async_context_) return;
  // Without one, node makes an empty resource (not this object: see the
  // constructor).
  auto next = info[0].IsObject()
                  ? std::make_unique<Napi::AsyncContext>(env, "TLSWRAP", info[0].As<Napi::Object>())
                  : std::make_unique<Napi::AsyncContext>(env, "TLSWRAP");
  retired_async_context_ = std::move(async_context_);
  async_context_ = std::move(next);
  if (transport_) transport_->SetAsyncContext(static_cast<napi_async_context>(*async_context_));
}

}  // namespace tlswrap
