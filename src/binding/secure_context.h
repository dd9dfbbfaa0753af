// One SSL_CTX and what hangs off it: key and certificate chain, trust store,
// protocol range, ciphers, curves, session ticket keys.
#ifndef TLSWRAP_SECURE_CONTEXT_H_
#define TLSWRAP_SECURE_CONTEXT_H_

#include <napi.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/openssl_ptr.h"
#include "engine/root_store.h"

namespace tlswrap {

class SecureContext : public Napi::ObjectWrap<SecureContext> {
 public:
  static Napi::Function Init(Napi::Env env);
  // The SecureContext behind a JS value, or a TypeError.
  static SecureContext* FromValue(Napi::Value value);

  explicit SecureContext(const Napi::CallbackInfo& info);
  ~SecureContext() override;

  SSL_CTX* ctx() const { return ctx_.get(); }
  const std::string& session_id_context() const { return sid_ctx_; }
  // The group list given as ecdhCurve, empty for OpenSSL's default.
  const std::string& groups() const { return groups_; }

 private:
  static int TicketKeyCallback(SSL* ssl, unsigned char* name, unsigned char* iv,
                               EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int encrypt);

  void SetMinProto(const Napi::CallbackInfo& info);
  void SetMaxProto(const Napi::CallbackInfo& info);
  void SetKey(const Napi::CallbackInfo& info);
  void SetCert(const Napi::CallbackInfo& info);
  void AddCACert(const Napi::CallbackInfo& info);
  void AddCRL(const Napi::CallbackInfo& info);
  void UseDefaultRoots(const Napi::CallbackInfo& info);
  void LoadPKCS12(const Napi::CallbackInfo& info);
  void SetCiphers(const Napi::CallbackInfo& info);
  void SetCipherSuites(const Napi::CallbackInfo& info);
  void SetPartialChain(const Napi::CallbackInfo& info);
  Napi::Value SetDHParam(const Napi::CallbackInfo& info);
  void SetECDHCurve(const Napi::CallbackInfo& info);
  void SetSigalgs(const Napi::CallbackInfo& info);
  void SetCertificateCompression(const Napi::CallbackInfo& info);
  // OpenSSL sends a certificate compressed only in a form made ahead of
  // time: called once the certificates (key, cert, pfx) are set.
  void CompressCertificates(const Napi::CallbackInfo& info);
  void SetSessionIdContext(const Napi::CallbackInfo& info);
  void SetSessionTimeout(const Napi::CallbackInfo& info);
  void SetSessionCacheSize(const Napi::CallbackInfo& info);
  void SetOptions(const Napi::CallbackInfo& info);
  void SetTicketKeys(const Napi::CallbackInfo& info);
  Napi::Value GetTicketKeys(const Napi::CallbackInfo& info);
  void SetTicketRotation(const Napi::CallbackInfo& info);
  // Makes a new key when the newest is older than the rotation interval, and
  // forgets retired keys once no ticket they sealed can still be valid.
  void RotateTicketKeys(SSL_CTX* ctx);
  Napi::Value GetCertificate(const Napi::CallbackInfo& info);
  // The issuer of the certificate, as found when it was set (DER), or null:
  // what node:tls hands an 'OCSPRequest' listener.
  Napi::Value GetIssuer(const Napi::CallbackInfo& info);
  // Frees the SSL_CTX now rather than at GC: connect() closes the context it
  // made for one connection when that connection is destroyed, as node:tls
  // does with its single-use contexts.
  void Close(const Napi::CallbackInfo& info);

  // The SSL_CTX, or a JS error if the context was closed.
  SSL_CTX* Live();
  void Unreport();

  // The context's own trust store, made on first use; until then the context
  // may share the environment's default root store.
  X509_STORE* OwnStore();
  // Makes `store` trust this context's default roots, if it has them.
  void AttachDefaultRoots(X509_STORE* store);
  void UseCertificateChain(X509Ptr cert, STACK_OF(X509) * chain);

  // About what an SSL_CTX with a trust store holds in OpenSSL (2000 live
  // contexts with a CA: 21.6 KiB each on Node 20, 28.3 on Node 24), told to
  // V8 so that contexts a program makes and drops are collected before they
  // pile up. (The ones connect() makes per connection are closed when the
  // socket is destroyed; unreported and unclosed, they took the handshake
  // benchmark to 104 MiB peak RSS on Node 24 against node:tls's 83.)
  static constexpr int64_t kExternalSize = 24 * 1024;

  SslCtxPtr ctx_;
  X509Ptr issuer_;
  bool external_reported_ = false;
  bool own_store_ = false;
  // The default roots this context trusts (none if it has a `ca`), and
  // whether OpenSSL's default paths are looked up too: a store of its own
  // (OwnStore) keeps both.
  std::shared_ptr<RootCertificates> default_roots_;
  bool default_paths_ = false;
  // What setSessionIdContext() set: server sessions are bound to it and to
  // the ClientHello's server name.
  std::string sid_ctx_;
  // ecdhCurve's list: a client's key share prediction keeps it.
  std::string groups_;
  using Clock = std::chrono::steady_clock;
  struct TicketKey {
    // name (16) | HMAC secret (16) | AES key (16): the layout node:tls
    // exposes through getTicketKeys()/setTicketKeys().
    std::array<unsigned char, 48> bytes{};
    // When a newer key replaced it (automatic rotation only): it still opens
    // tickets for one session lifetime after that.
    Clock::time_point retired{};
    bool expires = false;
  };
  // Newest first: the newest seals, all of them open.
  std::vector<TicketKey> ticket_keys_;
  // Automatic rotation, while the keys are the context's own (not given by
  // setTicketKeys(): keys a fleet shares are rotated by whoever shares them).
  Clock::duration rotation_interval_ = std::chrono::hours(1);
  Clock::time_point newest_since_ = Clock::now();
  bool keys_given_ = false;
};

}  // namespace tlswrap

#endif  // TLSWRAP_SECURE_CONTEXT_H_
