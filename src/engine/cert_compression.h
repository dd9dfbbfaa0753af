// Certificate compression (RFC 8879, TLS 1.3 only), node:tls's
// certificateCompression option. OpenSSL has it from 3.2, and Node 24's
// build compiles in zlib, brotli and zstd. The addon is built against one
// Node's headers (Node 20's are OpenSSL 3.0) and runs on several, so the
// 3.2 functions are looked up in the running binary; under OpenSSL 3.0
// they are absent and there is nothing to turn off.
#ifndef TLSWRAP_ENGINE_CERT_COMPRESSION_H_
#define TLSWRAP_ENGINE_CERT_COMPRESSION_H_

#include <openssl/ssl.h>

#include <cstddef>

namespace tlswrap {
namespace cert_compression {

// RFC 8879's algorithm codes (TLSEXT_comp_cert_* in OpenSSL 3.2's tls1.h).
enum Algorithm : int { kZlib = 1, kBrotli = 2, kZstd = 3 };
constexpr size_t kMaxAlgorithms = 3;

// True if the running OpenSSL has the certificate compression API.
bool Available();
// Off, as node:tls has it unless asked: OpenSSL 3.2+ otherwise offers every
// algorithm it was built with in each ClientHello (and CertificateRequest),
// and inflates what a peer then sends compressed. A no-op without the API.
void Disable(SSL_CTX* ctx);
// Offer and accept `algs` (RFC 8879 codes, most preferred first) and send
// this context's certificates compressed to peers that offer one of them.
// False if OpenSSL refused the list (an algorithm named twice) or has no
// certificate compression. OpenSSL only ever sends certificates compressed
// ahead of time: call Compress() once the certificates are set.
bool Enable(SSL_CTX* ctx, const int* algs, size_t count);
// Compresses the context's certificates with each preferred algorithm; a
// context without a certificate (a client's, usually) has nothing to do.
// False if OpenSSL failed.
bool Compress(SSL_CTX* ctx);
// Gives `ssl` the compressed forms `ctx` holds of its current certificate,
// once that certificate is `ssl`'s too: an SNI choice moves a context's
// certificate onto the connection (node:tls does the same), and OpenSSL
// only sends a compressed form set where the certificate is. False if
// OpenSSL failed; nothing to do without the API or compressed forms.
bool CopyCompressed(SSL_CTX* ctx, SSL* ssl);

}  // namespace cert_compression
}  // namespace tlswrap

#endif  // TLSWRAP_ENGINE_CERT_COMPRESSION_H_
