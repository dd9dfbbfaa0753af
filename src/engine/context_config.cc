#include "context_config.h"

#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>

#include <cstring>

namespace tlswrap {
namespace config {

namespace {

int PassphraseCallback(char* buf, int size, int /*rwflag*/, void* u) {
  const std::string* pass = static_cast<const std::string*>(u);
  if (pass == nullptr) return 0;
  size_t n = pass->size();
  if (n > static_cast<size_t>(size)) return -1;
  std::memcpy(buf, pass->data(), n);
  return static_cast<int>(n);
}

}  // namespace

EvpPkeyPtr ReadPrivateKey(BIO* bio, const std::string* pass) {
  return EvpPkeyPtr(
      PEM_read_bio_PrivateKey(bio, nullptr, PassphraseCallback, const_cast<std::string*>(pass)));
}

X509Ptr ReadCertificateChain(BIO* bio, X509StackPtr* chain) {
  X509Ptr cert(PEM_read_bio_X509_AUX(bio, nullptr, nullptr, nullptr));
  chain->reset(sk_X509_new_null());
  if (!cert || !*chain) return nullptr;
  while (X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (sk_X509_push(chain->get(), extra) <= 0) {
      X509_free(extra);
      return nullptr;
    }
  }
  // Running out of PEM blocks is how the loop ends, not an error.
  ERR_clear_error();
  return cert;
}

bool AddCACerts(SSL_CTX* ctx, X509_STORE* store, const std::shared_ptr<RootCertificates>& set) {
  if (!RootCertificates::Attach(set, store)) return false;
  if (set->size() == 0) return true;
  STACK_OF(X509_NAME)* names = SSL_CTX_get_client_CA_list(ctx);
  if (names == nullptr) {
    names = sk_X509_NAME_new_null();
    if (names == nullptr) return false;
    SSL_CTX_set_client_CA_list(ctx, names);
  }
  for (const X509_NAME* subject : set->SubjectsInOrder()) {
    X509NamePtr name(X509_NAME_dup(subject));
    if (!name || sk_X509_NAME_push(names, name.get()) <= 0) return false;
    name.release();
  }
  return true;
}

bool ReadPKCS12(BIO* bio, const std::string& pass, EvpPkeyPtr* key, X509Ptr* cert,
                X509StackPtr* ca) {
  Pkcs12Ptr p12(d2i_PKCS12_bio(bio, nullptr));
  if (!p12) return false;
  EVP_PKEY* key_raw = nullptr;
  X509* cert_raw = nullptr;
  STACK_OF(X509)* ca_raw = nullptr;
  if (PKCS12_parse(p12.get(), pass.c_str(), &key_raw, &cert_raw, &ca_raw) != 1) return false;
  key->reset(key_raw);
  cert->reset(cert_raw);
  ca->reset(ca_raw);
  return true;
}

}  // namespace config
}  // namespace tlswrap
