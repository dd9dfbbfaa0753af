#include "secure_context.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <cstring>
#include <string>

#include "addon.h"
#include "engine/cert_compression.h"
#include "engine/context_config.h"
#include "engine/engine.h"
#include "errors.h"

namespace tlswrap {

namespace {

// A PEM or DER input's bytes: a Buffer's, or a string's as UTF-8.
std::string TextOf(const Napi::Value& value) {
  if (value.IsBuffer()) {
    auto buf = value.As<Napi::Buffer<char>>();
    return std::string(buf.Data(), buf.Length());
  }
  return value.ToString().Utf8Value();
}

BioPtr MemBio(const Napi::Value& value) {
  std::string data = TextOf(value);
  // BIO_new_mem_buf does not copy; a copy keeps the bytes alive for the BIO.
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio != nullptr) BIO_write(bio, data.data(), static_cast<int>(data.size()));
  return BioPtr(bio);
}

std::string OptionalString(const Napi::Value& value) {
  if (value.IsUndefined() || value.IsNull()) return std::string();
  return TextOf(value);
}

}  // namespace

Napi::Function SecureContext::Init(Napi::Env env) {
  return DefineClass(
      env, "SecureContext",
      {
          InstanceMethod<&SecureContext::SetMinProto>("setMinProto"),
          InstanceMethod<&SecureContext::SetMaxProto>("setMaxProto"),
          InstanceMethod<&SecureContext::SetKey>("setKey"),
          InstanceMethod<&SecureContext::SetCert>("setCert"),
          InstanceMethod<&SecureContext::AddCACert>("addCACert"),
          InstanceMethod<&SecureContext::AddCRL>("addCRL"),
          InstanceMethod<&SecureContext::UseDefaultRoots>("useDefaultRoots"),
          InstanceMethod<&SecureContext::LoadPKCS12>("loadPKCS12"),
          InstanceMethod<&SecureContext::SetCiphers>("setCiphers"),
          InstanceMethod<&SecureContext::SetCipherSuites>("setCipherSuites"),
          InstanceMethod<&SecureContext::SetPartialChain>("setPartialChain"),
          InstanceMethod<&SecureContext::SetDHParam>("setDHParam"),
          InstanceMethod<&SecureContext::SetECDHCurve>("setECDHCurve"),
          InstanceMethod<&SecureContext::SetSigalgs>("setSigalgs"),
          InstanceMethod<&SecureContext::SetCertificateCompression>("setCertificateCompression"),
          InstanceMethod<&SecureContext::CompressCertificates>("compressCertificates"),
          InstanceMethod<&SecureContext::SetSessionIdContext>("setSessionIdContext"),
          InstanceMethod<&SecureContext::SetSessionTimeout>("setSessionTimeout"),
          InstanceMethod<&SecureContext::SetSessionCacheSize>("setSessionCacheSize"),
          InstanceMethod<&SecureContext::SetOptions>("setOptions"),
          InstanceMethod<&SecureContext::SetTicketKeys>("setTicketKeys"),
          InstanceMethod<&SecureContext::GetTicketKeys>("getTicketKeys"),
          InstanceMethod<&SecureContext::SetTicketRotation>("setTicketRotation"),
          InstanceMethod<&SecureContext::GetCertificate>("getCertificate"),
          InstanceMethod<&SecureContext::GetIssuer>("getIssuer"),
          InstanceMethod<&SecureContext::Close>("close"),
      });
}

SecureContext* SecureContext::FromValue(Napi::Value value) {
  Napi::Env env = value.Env();
  AddonData* data = AddonData::Get(env);
  // instanceof alone passes an Object.create() of a real one, which wraps
  // nothing: napi_unwrap (own wrapping only) tells them apart.
  void* wrapped = nullptr;
  if (!value.IsObject() ||
      !value.As<Napi::Object>().InstanceOf(data->secure_context_ctor.Value()) ||
      napi_unwrap(env, value, &wrapped) != napi_ok || wrapped == nullptr) {
    ThrowCodedTypeError(env, "ERR_TLS_INVALID_CONTEXT", "context must be a SecureContext");
  }
  auto* sc = static_cast<SecureContext*>(wrapped);
  sc->Live();
  return sc;
}

SecureContext::SecureContext(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<SecureContext>(info) {
  Napi::Env env = info.Env();
  ErrorQueueGuard guard;
  // A secureProtocol named *_server_method or *_client_method makes a
  // one-role context, as node's does: used in the other role, its
  // handshake fails with OpenSSL's "called a function you should not call".
  const SSL_METHOD* method = TLS_method();
  if (info.Length() > 0 && info[0].IsString()) {
    const std::string role = info[0].As<Napi::String>().Utf8Value();
    if (role == "server") method = TLS_server_method();
    if (role == "client") method = TLS_client_method();
  }
  ctx_.reset(SSL_CTX_new(method));
  if (!ctx_) ThrowCryptoError(env, "SSL_CTX_new failed");
  SSL_CTX* ctx = ctx_.get();
  SSL_CTX_set_app_data(ctx, this);

  SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3);
  // OpenSSL 3 refuses client-initiated renegotiation by default; node:tls
  // allows it (and limits it in JS), so tlswrap does too.
  SSL_CTX_set_options(ctx, SSL_OP_ALLOW_CLIENT_RENEGOTIATION);
  SSL_CTX_clear_mode(ctx, SSL_MODE_NO_AUTO_CHAIN);
  // Retrying SSL_write after WANT_READ may come from a different staging
  // address (the same bytes): tell OpenSSL that is fine.
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Client sessions are handed to JS ('session'); the server side relies on
  // tickets, as node:tls does with no newSession/resumeSession listeners.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_SERVER |
                                          SSL_SESS_CACHE_NO_INTERNAL |
                                          SSL_SESS_CACHE_NO_AUTO_CLEAR);

  ticket_keys_.emplace_back();
  if (RAND_bytes(ticket_keys_[0].bytes.data(), static_cast<int>(ticket_keys_[0].bytes.size())) !=
      1) {
    ThrowCryptoError(env, "could not generate session ticket keys");
  }
  SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, TicketKeyCallback);
  cert_compression::Disable(ctx);
  Engine::ConfigureContext(ctx);
  Napi::MemoryManagement::AdjustExternalMemory(env, kExternalSize);
  external_reported_ = true;
}

SecureContext::~SecureContext() {
  Unreport();
}

void SecureContext::Unreport() {
  if (!external_reported_) return;
  external_reported_ = false;
  Napi::MemoryManagement::AdjustExternalMemory(Env(), -kExternalSize);
}

SSL_CTX* SecureContext::Live() {
  if (!ctx_) {
    Napi::Error err = Napi::Error::New(Env(), "this SecureContext was closed");
    err.Set("code", Napi::String::New(Env(), "ERR_TLSWRAP_CONTEXT_CLOSED"));
    throw err;
  }
  return ctx_.get();
}

void SecureContext::Close(const Napi::CallbackInfo& /*info*/) {
  // An SSL made from this context holds its own reference: the SSL_CTX lives
  // on until that connection is freed too.
  ctx_.reset();
  Unreport();
}

void SecureContext::RotateTicketKeys(SSL_CTX* ctx) {
  const Clock::time_point now = Clock::now();
  if (!keys_given_ && rotation_interval_.count() > 0 && now - newest_since_ >= rotation_interval_) {
    TicketKey fresh;
    // Without randomness keep sealing with the current key rather than fail.
    if (RAND_bytes(fresh.bytes.data(), static_cast<int>(fresh.bytes.size())) == 1) {
      ticket_keys_[0].retired = now;
      ticket_keys_[0].expires = true;
      ticket_keys_.insert(ticket_keys_.begin(), fresh);
      newest_since_ = now;
    }
  }
  const auto lifetime = std::chrono::seconds(SSL_CTX_get_timeout(ctx));
  for (size_t i = ticket_keys_.size(); i-- > 1;) {
    if (ticket_keys_[i].expires && now - ticket_keys_[i].retired >= lifetime) {
      ticket_keys_.erase(ticket_keys_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

int SecureContext::TicketKeyCallback(SSL* ssl, unsigned char* name, unsigned char* iv,
                                     EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int encrypt) {
  SSL_CTX* ctx = SSL_get_SSL_CTX(ssl);
  auto* sc = static_cast<SecureContext*>(SSL_CTX_get_app_data(ctx));
  sc->RotateTicketKeys(ctx);
  size_t index = 0;
  if (!encrypt) {
    while (index < sc->ticket_keys_.size() &&
           std::memcmp(name, sc->ticket_keys_[index].bytes.data(), 16) != 0) {
      index++;
    }
    // A ticket under other keys is not an error: fall back to a full handshake.
    if (index == sc->ticket_keys_.size()) return 0;
  }
  const unsigned char* keys = sc->ticket_keys_[index].bytes.data();
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, const_cast<unsigned char*>(keys + 16),
                                        16),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  if (encrypt) {
    if (RAND_bytes(iv, 16) != 1) return -1;
    std::memcpy(name, keys, 16);
    if (EVP_EncryptInit_ex(cipher, EVP_aes_128_cbc(), nullptr, keys + 32, iv) != 1) return -1;
    if (EVP_MAC_CTX_set_params(mac, params) != 1) return -1;
    return 1;
  }
  if (EVP_DecryptInit_ex(cipher, EVP_aes_128_cbc(), nullptr, keys + 32, iv) != 1) return -1;
  if (EVP_MAC_CTX_set_params(mac, params) != 1) return -1;
  // Under an older key: resume, and reissue the ticket under the newest.
  return index == 0 ? 1 : 2;
}

void SecureContext::SetMinProto(const Napi::CallbackInfo& info) {
  SSL_CTX_set_min_proto_version(Live(), info[0].As<Napi::Number>().Int32Value());
}

void SecureContext::SetMaxProto(const Napi::CallbackInfo& info) {
  SSL_CTX_set_max_proto_version(Live(), info[0].As<Napi::Number>().Int32Value());
}

void SecureContext::SetKey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ErrorQueueGuard guard;
  BioPtr bio = MemBio(info[0]);
  bool has_pass = info.Length() > 1 && !info[1].IsUndefined() && !info[1].IsNull();
  std::string pass = has_pass ? OptionalString(info[1]) : std::string();
  // No passphrase tries the empty one, so a missing passphrase reads as
  // "bad decrypt", as in node:tls.
  EvpPkeyPtr key = config::ReadPrivateKey(bio.get(), has_pass ? &pass : nullptr);
  if (!key) ThrowCryptoError(env, "Failed to read private key");
  if (SSL_CTX_use_PrivateKey(Live(), key.get()) != 1) {
    ThrowCryptoError(env, "Failed to use private key");
  }
}

namespace {
using X509StoreCtxPtr = DeletePtr<X509_STORE_CTX, X509_STORE_CTX_free>;
}  // namespace

void SecureContext::UseCertificateChain(X509Ptr cert, STACK_OF(X509) * chain) {
  Napi::Env env = Env();
  SSL_CTX* ctx = Live();
  if (SSL_CTX_use_certificate(ctx, cert.get()) != 1) {
    ThrowCryptoError(env, "Failed to use certificate");
  }
  SSL_CTX_clear_chain_certs(ctx);
  issuer_.reset();
  X509* issuer = nullptr;
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); i++) {
    X509* ca = sk_X509_value(chain, i);
    if (SSL_CTX_add1_chain_cert(ctx, ca) != 1) {
      ThrowCryptoError(env, "Failed to add certificate to the chain");
    }
    if (issuer == nullptr && X509_check_issued(ca, cert.get()) == X509_V_OK) issuer = ca;
  }
  // As node:tls: the first certificate of the chain that issued it, else one
  // from the trust store as it is now (the `ca` option is loaded before).
  if (issuer != nullptr) {
    X509_up_ref(issuer);
    issuer_.reset(issuer);
    return;
  }
  X509StoreCtxPtr store_ctx(X509_STORE_CTX_new());
  if (store_ctx &&
      X509_STORE_CTX_init(store_ctx.get(), SSL_CTX_get_cert_store(ctx), nullptr, nullptr) == 1) {
    X509* found = nullptr;
    if (X509_STORE_CTX_get1_issuer(&found, store_ctx.get(), cert.get()) == 1) issuer_.reset(found);
  }
  ERR_clear_error();
}

void SecureContext::SetCert(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ErrorQueueGuard guard;
  BioPtr bio = MemBio(info[0]);
  X509StackPtr chain;
  X509Ptr cert = config::ReadCertificateChain(bio.get(), &chain);
  if (!cert) ThrowCryptoError(env, "Failed to read certificate");
  UseCertificateChain(std::move(cert), chain.get());
}

X509_STORE* SecureContext::OwnStore() {
  SSL_CTX* ctx = Live();
  if (!own_store_) {
    X509_STORE* store = X509_STORE_new();
    if (store == nullptr) ThrowCryptoError(Env(), "X509_STORE_new failed");
    // The store in use is either the one SSL_CTX_new made (every adder of
    // certificates goes through here, so it holds none) or the environment's
    // shared default roots: this context keeps trusting those, looked up in
    // a store it may change (flags, CRLs).
    SSL_CTX_set_cert_store(ctx, store);
    own_store_ = true;
    AttachDefaultRoots(store);
  }
  return SSL_CTX_get_cert_store(ctx);
}

void SecureContext::AttachDefaultRoots(X509_STORE* store) {
  if (!default_roots_) return;
  ErrorQueueGuard guard;
  if (default_paths_) X509_STORE_set_default_paths(store);
  if (!RootCertificates::Attach(default_roots_, store)) {
    ThrowCryptoError(Env(), "Failed to set up the default trust store");
  }
}

// allowPartialTrustChain: a trusted intermediate ends the chain, its issuers
// need not be known.
void SecureContext::SetPartialChain(const Napi::CallbackInfo& /*info*/) {
  X509_STORE_set_flags(OwnStore(), X509_V_FLAG_PARTIAL_CHAIN);
}

// info[0]: a PEM text, or the array of the `ca` option's texts (one call, so
// the list is one set to look up in, cached as one).
void SecureContext::AddCACert(const Napi::CallbackInfo& info) {
  std::vector<std::string> texts;
  if (info[0].IsArray()) {
    Napi::Array list = info[0].As<Napi::Array>();
    texts.reserve(list.Length());
    for (uint32_t i = 0; i < list.Length(); i++) texts.push_back(TextOf(list.Get(i)));
  } else {
    texts.push_back(TextOf(info[0]));
  }
  ErrorQueueGuard guard;
  SSL_CTX* ctx = Live();
  X509_STORE* store = OwnStore();
  // Like node:tls, a CA entry that holds no PEM certificate adds nothing and
  // is not an error (so nothing is trusted if that was the only one).
  if (!config::AddCACerts(ctx, store, AddonData::Get(info.Env())->CASet(texts))) {
    ThrowCryptoError(Env(), "Failed to add the CA certificates");
  }
}

void SecureContext::AddCRL(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ErrorQueueGuard guard;
  BioPtr bio = MemBio(info[0]);
  X509CrlPtr crl(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
  if (!crl) ThrowCodedError(env, "ERR_CRYPTO_OPERATION_FAILED", "Failed to parse CRL");
  X509_STORE* store = OwnStore();
  X509_STORE_add_crl(store, crl.get());
  X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
}

void SecureContext::UseDefaultRoots(const Napi::CallbackInfo& info) {
  // info[0]: the PEM strings of the default trust store, used only when
  // info[1] (the list's version) differs from the store's; the store is then
  // shared by every context in this environment. info[2]: OpenSSL's
  // default paths too (--use-openssl-ca).
  SSL_CTX* ctx = Live();
  AddonData* data = AddonData::Get(info.Env());
  uint32_t version = info[1].IsNumber() ? info[1].As<Napi::Number>().Uint32Value() : 0;
  bool default_paths = info[2].ToBoolean().Value();
  X509_STORE* roots = data->RootStore(info[0], version, default_paths);
  default_roots_ = data->root_certs;
  default_paths_ = default_paths;
  if (own_store_) {
    // The context already has CAs of its own: the roots join them, looked
    // up as the shared store looks them up.
    AttachDefaultRoots(OwnStore());
    return;
  }
  X509_STORE_up_ref(roots);
  SSL_CTX_set_cert_store(ctx, roots);
}

void SecureContext::LoadPKCS12(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ErrorQueueGuard guard;
  BioPtr bio = MemBio(info[0]);
  std::string pass = OptionalString(info[1]);
  EvpPkeyPtr key;
  X509Ptr cert;
  X509StackPtr ca;
  if (!config::ReadPKCS12(bio.get(), pass, &key, &cert, &ca)) {
    ThrowReasonError(env, "Unable to load PFX certificate");
  }
  // node:tls's two messages.
  if (!key)
    ThrowCodedError(env, "ERR_CRYPTO_OPERATION_FAILED", "Unable to load private key from PFX data");
  if (!cert)
    ThrowCodedError(env, "ERR_CRYPTO_OPERATION_FAILED", "Unable to load certificate from PFX data");
  UseCertificateChain(std::move(cert), ca.get());
  SSL_CTX* ctx = Live();
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    ThrowCryptoError(env, "Failed to use private key");
  }
  // The CA certificates of a PFX are trusted for client certificates too.
  X509_STORE* store = OwnStore();
  for (int i = 0; ca && i < sk_X509_num(ca.get()); i++) {
    X509* c = sk_X509_value(ca.get(), i);
    X509_STORE_add_cert(store, c);
    SSL_CTX_add_client_CA(ctx, c);
  }
}

void SecureContext::SetCiphers(const Napi::CallbackInfo& info) {
  ErrorQueueGuard guard;
  std::string list = info[0].ToString().Utf8Value();
  if (SSL_CTX_set_cipher_list(Live(), list.c_str()) != 1) {
    // An empty list clears the TLS 1.2 ciphers on purpose (TLS 1.3 only);
    // OpenSSL reports that as "no cipher match", which it is not here.
    if (list.empty() && ERR_GET_REASON(ERR_peek_error()) == SSL_R_NO_CIPHER_MATCH) return;
    ThrowCryptoError(info.Env(), "Failed to set ciphers");
  }
}

void SecureContext::SetCipherSuites(const Napi::CallbackInfo& info) {
  ErrorQueueGuard guard;
  std::string list = info[0].ToString().Utf8Value();
  if (SSL_CTX_set_ciphersuites(Live(), list.c_str()) != 1) {
    ThrowCryptoError(info.Env(), "Failed to set ciphersuites");
  }
}

// dhparam: true for 'auto' (a group sized to the certificate's key), else
// PEM DH parameters. Returns node's warning text for a group under 2048 bits.
Napi::Value SecureContext::SetDHParam(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ErrorQueueGuard guard;
  SSL_CTX* ctx = Live();
  if (info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value()) {
    SSL_CTX_set_dh_auto(ctx, 1);
    return env.Undefined();
  }
  BioPtr bio = MemBio(info[0]);
  EvpPkeyPtr dh(PEM_read_bio_Parameters(bio.get(), nullptr));
  // As in node:tls, parameters that are not DH are ignored (no DHE), not an
  // error.
  if (!dh || !(EVP_PKEY_is_a(dh.get(), "DH") || EVP_PKEY_is_a(dh.get(), "DHX"))) {
    return env.Undefined();
  }
  int bits = EVP_PKEY_get_bits(dh.get());
  if (bits < 1024) {
    ThrowCodedTypeError(env, "ERR_INVALID_ARG_VALUE", "DH parameter is less than 1024 bits");
  }
  if (SSL_CTX_set0_tmp_dh_pkey(ctx, dh.get()) != 1) {
    ThrowCodedError(env, "ERR_CRYPTO_OPERATION_FAILED", "Error setting temp DH parameter");
  }
  // The context owns it now.
  dh.release();
  if (bits < 2048) return Napi::String::New(env, "DH parameter is less than 2048 bits");
  return env.Undefined();
}

void SecureContext::SetECDHCurve(const Napi::CallbackInfo& info) {
  ErrorQueueGuard guard;
  std::string curves = info[0].ToString().Utf8Value();
  if (curves == "auto") return;
  if (SSL_CTX_set1_curves_list(Live(), curves.c_str()) != 1) {
    ThrowCodedError(info.Env(), "ERR_CRYPTO_OPERATION_FAILED", "Failed to set ECDH curve");
    return;
  }
  groups_ = std::move(curves);
}

void SecureContext::SetSigalgs(const Napi::CallbackInfo& info) {
  ErrorQueueGuard guard;
  std::string sigalgs = info[0].ToString().Utf8Value();
  if (SSL_CTX_set1_sigalgs_list(Live(), sigalgs.c_str()) != 1) {
    ThrowCodedError(info.Env(), "ERR_CRYPTO_OPERATION_FAILED", "Failed to set sigalgs");
  }
}

// RFC 8879 codes, most preferred first (lib/context.js checks the names).
void SecureContext::SetCertificateCompression(const Napi::CallbackInfo& info) {
  ErrorQueueGuard guard;
  SSL_CTX* ctx = Live();
  auto list = info[0].As<Napi::Array>();
  const uint32_t count = list.Length();
  if (count > cert_compression::kMaxAlgorithms) {
    throw Napi::TypeError::New(info.Env(), "Too many certificate compression algorithms");
  }
  int algs[cert_compression::kMaxAlgorithms];
  for (uint32_t i = 0; i < count; i++) algs[i] = list.Get(i).As<Napi::Number>().Int32Value();
  if (!cert_compression::Enable(ctx, algs, count)) {
    ThrowCodedError(info.Env(), "ERR_CRYPTO_OPERATION_FAILED",
                    "Failed to set certificate compression preference");
  }
}

void SecureContext::CompressCertificates(const Napi::CallbackInfo& info) {
  ErrorQueueGuard guard;
  if (!cert_compression::Compress(Live())) {
    ThrowCodedError(info.Env(), "ERR_CRYPTO_OPERATION_FAILED", "Failed to compress certificates");
  }
}

// Longer than OpenSSL's 32 bytes is refused, not cut short: contexts that
// differ only past the cut would share sessions. The error is node:tls's, a
// TypeError whose message is OpenSSL's queue as printed, with no code.
void SecureContext::SetSessionIdContext(const Napi::CallbackInfo& info) {
  ErrorQueueGuard guard;
  std::string sid = info[0].ToString().Utf8Value();
  if (SSL_CTX_set_session_id_context(Live(), reinterpret_cast<const unsigned char*>(sid.data()),
                                     static_cast<unsigned int>(sid.size())) != 1) {
    std::string printed;
    ERR_print_errors_cb(
        [](const char* str, size_t len, void* out) {
          static_cast<std::string*>(out)->append(str, len);
          return 1;
        },
        &printed);
    throw Napi::TypeError::New(info.Env(),
                               printed.empty() ? "SSL_CTX_set_session_id_context error" : printed);
  }
  sid_ctx_ = std::move(sid);
}

void SecureContext::SetSessionTimeout(const Napi::CallbackInfo& info) {
  SSL_CTX_set_timeout(Live(), info[0].As<Napi::Number>().Int64Value());
}

// A server's own session-ID cache (OpenSSL's, at most `size` sessions, the
// oldest dropped first); off as in node:tls, where an application keeps one
// through newSession/resumeSession. Lookups still compare the session id
// context, which is bound to the server name.
void SecureContext::SetSessionCacheSize(const Napi::CallbackInfo& info) {
  SSL_CTX* ctx = Live();
  const int64_t size = info[0].As<Napi::Number>().Int64Value();
  long mode = SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_SERVER | SSL_SESS_CACHE_NO_AUTO_CLEAR;
  if (size <= 0) mode |= SSL_SESS_CACHE_NO_INTERNAL;
  SSL_CTX_set_session_cache_mode(ctx, mode);
  if (size > 0) SSL_CTX_sess_set_cache_size(ctx, static_cast<long>(size));
}

void SecureContext::SetOptions(const Napi::CallbackInfo& info) {
  SSL_CTX_set_options(Live(), static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value()));
}

// One key (48 bytes, as node:tls takes) or several, newest first: a fleet of
// servers behind one name shares them and rotates them itself.
void SecureContext::SetTicketKeys(const Napi::CallbackInfo& info) {
  auto buf = BufferArg(info, 0, "keys");
  const size_t size = sizeof(TicketKey::bytes);
  if (buf.Length() == 0 || buf.Length() % size != 0) {
    ThrowCodedTypeError(info.Env(), "ERR_INVALID_ARG_VALUE",
                        "Session ticket keys must be a multiple of 48 bytes");
  }
  std::vector<TicketKey> keys(buf.Length() / size);
  for (size_t i = 0; i < keys.size(); i++)
    std::memcpy(keys[i].bytes.data(), buf.Data() + i * size, size);
  ticket_keys_ = std::move(keys);
  keys_given_ = true;
}

// The key that seals (node:tls's 48 bytes).
Napi::Value SecureContext::GetTicketKeys(const Napi::CallbackInfo& info) {
  const auto& newest = ticket_keys_[0].bytes;
  return Napi::Buffer<unsigned char>::Copy(info.Env(), newest.data(), newest.size());
}

// Milliseconds between automatic rotations; 0 turns them off. JS checks
// the range; the clamp keeps the cast to 64-bit nanoseconds defined anyway.
void SecureContext::SetTicketRotation(const Napi::CallbackInfo& info) {
  constexpr double kMaxMs = 2147483647.0 * 1000;  // 68 years, as JS allows
  double ms = info[0].As<Napi::Number>().DoubleValue();
  if (!(ms > 0)) ms = 0;  // NaN included
  if (ms > kMaxMs) ms = kMaxMs;
  rotation_interval_ =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

Napi::Value SecureContext::GetIssuer(const Napi::CallbackInfo& info) {
  if (!issuer_) return info.Env().Null();
  return DerOf(info.Env(), issuer_.get());
}

Napi::Value SecureContext::GetCertificate(const Napi::CallbackInfo& info) {
  X509* cert = SSL_CTX_get0_certificate(Live());
  if (cert == nullptr) return info.Env().Null();
  return DerOf(info.Env(), cert);
}

}  // namespace tlswrap
