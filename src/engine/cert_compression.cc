#include "cert_compression.h"

#include <dlfcn.h>
#include <openssl/err.h>

#include <cstdint>
#include <initializer_list>

namespace tlswrap {
namespace cert_compression {

namespace {

// From OpenSSL 3.2's ssl.h: bits that OpenSSL 3.0 leaves unused.
constexpr uint64_t kNoTx = uint64_t{1} << 32;  // SSL_OP_NO_TX_CERTIFICATE_COMPRESSION
constexpr uint64_t kNoRx = uint64_t{1} << 33;  // SSL_OP_NO_RX_CERTIFICATE_COMPRESSION

using SetPreferenceFn = int (*)(SSL_CTX*, int*, size_t);
using CompressFn = int (*)(SSL_CTX*, int);
using GetCompressedFn = size_t (*)(SSL_CTX*, int, unsigned char**, size_t*);
using SetCompressedFn = int (*)(SSL*, int, unsigned char*, size_t, size_t);

struct Api {
  SetPreferenceFn set_preference = nullptr;
  CompressFn compress = nullptr;
  GetCompressedFn get_compressed = nullptr;
  SetCompressedFn set_compressed = nullptr;
};

template <typename Fn>
void Find(Fn* fn, const char* name) {
  *fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// The node binary exports OpenSSL's symbols (the addon links against them);
// looked up once per process, the result never changes.
const Api& GetApi() {
  static const Api api = [] {
    Api found;
    Find(&found.set_preference, "SSL_CTX_set1_cert_comp_preference");
    Find(&found.compress, "SSL_CTX_compress_certs");
    Find(&found.get_compressed, "SSL_CTX_get1_compressed_cert");
    Find(&found.set_compressed, "SSL_set1_compressed_cert");
    if (found.set_preference == nullptr || found.compress == nullptr ||
        found.get_compressed == nullptr || found.set_compressed == nullptr) {
      found = Api();
    }
    return found;
  }();
  return api;
}

// The algorithms Enable() chose, as a bit set (1 << code) stored as the
// pointer value of an ex_data slot of the context: no allocation to free.
// CopyCompressed() must ask OpenSSL for these only, since asking for a form
// that was not made ahead of time makes it on the spot, per connection.
int ChosenIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

uintptr_t Chosen(SSL_CTX* ctx) {
  return reinterpret_cast<uintptr_t>(SSL_CTX_get_ex_data(ctx, ChosenIndex()));
}

}  // namespace

bool Available() {
  return GetApi().set_preference != nullptr;
}

void Disable(SSL_CTX* ctx) {
  // Receiving is what offers it (a client's ClientHello, a server's
  // CertificateRequest). Sending stays allowed: it needs certificates
  // compressed ahead of time, which only Enable() brings, and a server whose
  // SNI context has them may send them though its first context did not.
  if (Available()) SSL_CTX_set_options(ctx, kNoRx);
}

bool Enable(SSL_CTX* ctx, const int* algs, size_t count) {
  const Api& api = GetApi();
  if (api.set_preference == nullptr || count == 0 || count > kMaxAlgorithms) return false;
  int list[kMaxAlgorithms];
  uintptr_t chosen = 0;
  for (size_t i = 0; i < count; i++) {
    if (algs[i] < kZlib || algs[i] > kZstd) return false;
    list[i] = algs[i];
    chosen |= uintptr_t{1} << algs[i];
  }
  if (api.set_preference(ctx, list, count) != 1) return false;
  if (SSL_CTX_set_ex_data(ctx, ChosenIndex(), reinterpret_cast<void*>(chosen)) != 1) return false;
  SSL_CTX_clear_options(ctx, kNoTx | kNoRx);
  return true;
}

bool Compress(SSL_CTX* ctx) {
  const Api& api = GetApi();
  if (api.compress == nullptr) return false;
  if (SSL_CTX_get0_certificate(ctx) == nullptr) return true;
  // 0: every algorithm of the preference list. OpenSSL answers 0 as well
  // when no algorithm made a form smaller than the certificate (brotli
  // alone, on the 0.9 KB test certificate): nothing is sent compressed
  // then, which node:tls accepts too, so that is no error.
  ERR_set_mark();
  api.compress(ctx, 0);
  ERR_pop_to_mark();
  // OpenSSL may make no form for an algorithm: drop those from the set, or
  // CopyCompressed() would try them again on every connection.
  uintptr_t chosen = Chosen(ctx);
  for (int alg : {kZlib, kBrotli, kZstd}) {
    if ((chosen & (uintptr_t{1} << alg)) == 0) continue;
    unsigned char* data = nullptr;
    size_t original = 0;
    if (api.get_compressed(ctx, alg, &data, &original) == 0) chosen &= ~(uintptr_t{1} << alg);
    OPENSSL_free(data);
  }
  return SSL_CTX_set_ex_data(ctx, ChosenIndex(), reinterpret_cast<void*>(chosen)) == 1;
}

bool CopyCompressed(SSL_CTX* ctx, SSL* ssl) {
  const Api& api = GetApi();
  if (api.get_compressed == nullptr) return true;
  const uintptr_t chosen = Chosen(ctx);
  for (int alg : {kZlib, kBrotli, kZstd}) {
    if ((chosen & (uintptr_t{1} << alg)) == 0) continue;
    unsigned char* data = nullptr;
    size_t original = 0;
    size_t size = api.get_compressed(ctx, alg, &data, &original);
    if (size == 0) continue;
    int ok = api.set_compressed(ssl, alg, data, size, original);
    OPENSSL_free(data);
    if (ok != 1) return false;
  }
  return true;
}

}  // namespace cert_compression
}  // namespace tlswrap
