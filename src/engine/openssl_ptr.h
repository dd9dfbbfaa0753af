// RAII owners for OpenSSL objects, and the guard that keeps OpenSSL's
// per-thread error queue clean across every entry into the library.
#ifndef TLSWRAP_OPENSSL_PTR_H_
#define TLSWRAP_OPENSSL_PTR_H_

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

namespace tlswrap {

template <typename T, void (*Free)(T*)>
struct FunctionDeleter {
  void operator()(T* p) const { Free(p); }
};

template <typename T, void (*Free)(T*)>
using DeletePtr = std::unique_ptr<T, FunctionDeleter<T, Free>>;

using BioPtr = DeletePtr<BIO, BIO_free_all>;
using EvpPkeyPtr = DeletePtr<EVP_PKEY, EVP_PKEY_free>;
using Pkcs12Ptr = DeletePtr<PKCS12, PKCS12_free>;
using SslCtxPtr = DeletePtr<SSL_CTX, SSL_CTX_free>;
using SslPtr = DeletePtr<SSL, SSL_free>;
using SslSessionPtr = DeletePtr<SSL_SESSION, SSL_SESSION_free>;
using X509CrlPtr = DeletePtr<X509_CRL, X509_CRL_free>;
using X509NamePtr = DeletePtr<X509_NAME, X509_NAME_free>;
using X509Ptr = DeletePtr<X509, X509_free>;
using X509StorePtr = DeletePtr<X509_STORE, X509_STORE_free>;

struct X509StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using X509StackPtr = std::unique_ptr<STACK_OF(X509), X509StackFree>;

// The error queue is per thread and shared with node:crypto. Every entry into
// OpenSSL happens under one of these: it starts from an empty queue (so a
// stale entry is never mistaken for ours) and leaves an empty queue (so
// nothing of ours surfaces in an unrelated crypto call). It is nearly always
// empty already: a peek costs less than ERR_clear_error()'s sweep of every
// slot, which is paid on each of the several OpenSSL calls a request makes.
class ErrorQueueGuard {
 public:
  ErrorQueueGuard() { Clear(); }
  ~ErrorQueueGuard() { Clear(); }
  ErrorQueueGuard(const ErrorQueueGuard&) = delete;
  ErrorQueueGuard& operator=(const ErrorQueueGuard&) = delete;

 private:
  static void Clear() {
    if (ERR_peek_error() != 0) ERR_clear_error();
  }
};

}  // namespace tlswrap

#endif  // TLSWRAP_OPENSSL_PTR_H_
