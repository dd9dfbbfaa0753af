// What a SecureContext does with user input, over the same code the binding
// runs: the PEM and PKCS#12 parsing of src/engine/context_config (setKey,
// setCert, addCACert, loadPKCS12) and, called directly as the binding does,
// addCRL's PEM_read_bio_X509_CRL, the list setters (ciphers,
// ciphersuites, ECDH curves, sigalgs) and the default trust store read on
// demand (src/engine/root_store: each certificate of the input looks its
// issuer up there). The input is
//   call (1 byte) | passphrase length p (1 byte, 0-31) | p bytes | data
// with passphrase length 0 meaning none, for the key.
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "../src/engine/context_config.h"
#include "../src/engine/root_store.h"
#include "fuzz_common.h"

namespace {

tlswrap::BioPtr MemBio(const std::string& data) {
  tlswrap::BioPtr bio(BIO_new(BIO_s_mem()));
  FUZZ_CHECK(bio != nullptr);
  if (!data.empty()) BIO_write(bio.get(), data.data(), static_cast<int>(data.size()));
  return bio;
}

// As secure_context.cc's UseCertificateChain.
void UseChain(SSL_CTX* ctx, X509* cert, STACK_OF(X509) * chain) {
  if (SSL_CTX_use_certificate(ctx, cert) != 1) return;
  SSL_CTX_clear_chain_certs(ctx);
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); i++) {
    if (SSL_CTX_add1_chain_cert(ctx, sk_X509_value(chain, i)) != 1) return;
  }
}

// Each certificate of `bio` looks its issuer up in `store`: what decodes a
// lazily read certificate.
void LookUpIssuers(X509_STORE* store, BIO* bio) {
  std::unique_ptr<X509_STORE_CTX, void (*)(X509_STORE_CTX*)> verify(X509_STORE_CTX_new(),
                                                                    X509_STORE_CTX_free);
  FUZZ_CHECK(verify != nullptr);
  while (X509* raw = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    tlswrap::X509Ptr cert(raw);
    X509* issuer = nullptr;
    if (X509_STORE_CTX_init(verify.get(), store, cert.get(), nullptr) == 1 &&
        X509_STORE_CTX_get1_issuer(&issuer, verify.get(), cert.get()) == 1) {
      X509_free(issuer);
    }
    X509_STORE_CTX_cleanup(verify.get());
  }
}

void RunOne(const uint8_t* data, size_t size) {
  if (size < 2) return;
  uint8_t call = data[0];
  size_t plen = data[1] & 31;
  if (size < 2 + plen) return;
  std::string pass(reinterpret_cast<const char*>(data + 2), plen);
  std::string input(reinterpret_cast<const char*>(data + 2 + plen), size - 2 - plen);
  // JS strings reach OpenSSL as C strings: up to the first NUL.
  std::string text = input.c_str();

  tlswrap::SslCtxPtr ctx(SSL_CTX_new(TLS_method()));
  FUZZ_CHECK(ctx != nullptr);
  tlswrap::BioPtr bio = MemBio(input);
  switch (call % 10) {
    case 0: {
      tlswrap::EvpPkeyPtr key =
          tlswrap::config::ReadPrivateKey(bio.get(), plen > 0 ? &pass : nullptr);
      if (key) SSL_CTX_use_PrivateKey(ctx.get(), key.get());
      break;
    }
    case 1: {
      tlswrap::X509StackPtr chain;
      tlswrap::X509Ptr cert = tlswrap::config::ReadCertificateChain(bio.get(), &chain);
      if (cert) UseChain(ctx.get(), cert.get(), chain.get());
      break;
    }
    case 2: {
      X509_STORE* store = X509_STORE_new();
      FUZZ_CHECK(store != nullptr);
      SSL_CTX_set_cert_store(ctx.get(), store);
      auto set = tlswrap::RootCertificates::FromPems(
          {text}, tlswrap::RootCertificates::Blocks::kWithTrustSettings);
      FUZZ_CHECK(tlswrap::config::AddCACerts(ctx.get(), store, set));
      LookUpIssuers(store, bio.get());
      break;
    }
    case 3: {
      tlswrap::EvpPkeyPtr key;
      tlswrap::X509Ptr cert;
      tlswrap::X509StackPtr ca;
      if (tlswrap::config::ReadPKCS12(bio.get(), pass, &key, &cert, &ca) && cert && key) {
        UseChain(ctx.get(), cert.get(), ca.get());
        SSL_CTX_use_PrivateKey(ctx.get(), key.get());
      }
      break;
    }
    case 4: {
      tlswrap::X509CrlPtr crl(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
      if (crl) X509_STORE_add_crl(SSL_CTX_get_cert_store(ctx.get()), crl.get());
      break;
    }
    case 5:
      SSL_CTX_set_cipher_list(ctx.get(), text.c_str());
      break;
    case 6:
      SSL_CTX_set_ciphersuites(ctx.get(), text.c_str());
      break;
    case 7:
      if (text != "auto") SSL_CTX_set1_curves_list(ctx.get(), text.c_str());
      break;
    case 8:
      SSL_CTX_set1_sigalgs_list(ctx.get(), text.c_str());
      break;
    case 9: {
      auto roots = tlswrap::RootCertificates::FromPems({text});
      tlswrap::X509StorePtr store(X509_STORE_new());
      FUZZ_CHECK(store != nullptr && tlswrap::RootCertificates::Attach(roots, store.get()));
      LookUpIssuers(store.get(), bio.get());
      break;
    }
  }
  // Whatever was accepted must still make a usable SSL.
  tlswrap::SslPtr ssl(SSL_new(ctx.get()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  RunOne(data, size);
  ERR_clear_error();
  return 0;
}
