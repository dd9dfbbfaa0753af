// The default trust store (node's bundled roots, NODE_EXTRA_CA_CERTS, a
// setDefaultCACertificates() list), decoded on demand. OpenSSL 3 takes about
// 0.3 ms to decode one certificate (its public-key decoder), so decoding the
// 150-300 roots up front cost a process 40-90 ms at its first context, for
// the one or two that verification ever reads. Here each certificate waits as
// DER with only its subject decoded, and a store it is attached to decodes
// and adds a subject's certificates the first time verification asks for an
// issuer of that name, as OpenSSL's hashed-directory lookup does with files.
#ifndef TLSWRAP_ENGINE_ROOT_STORE_H_
#define TLSWRAP_ENGINE_ROOT_STORE_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "openssl_ptr.h"

namespace tlswrap {

class RootCertificates {
 public:
  // Every certificate in `pems` (PEM texts; one may hold several). As
  // PEM_read_bio_X509, a text is read up to its first malformed block, and
  // blocks of other kinds (TRUSTED CERTIFICATE included) are skipped. One
  // difference: a certificate whose body past its subject does not decode
  // is found malformed only when looked up (it is then not trusted), where
  // the eager reader would also have ignored the rest of its text.
  static std::shared_ptr<RootCertificates> FromPems(const std::vector<std::string>& pems);

  // Makes `store` find its issuers among `roots` (kept alive by the store).
  // False if OpenSSL could not add the lookup.
  static bool Attach(const std::shared_ptr<RootCertificates>& roots, X509_STORE* store);

  size_t size() const { return entries_.size(); }
  // How many have been decoded so far.
  size_t decoded() const;

  // Adds to `store` every certificate whose subject is `name`; returns one
  // of them (owned by this object), or null if none decodes.
  X509* AddMatching(X509_STORE* store, const X509_NAME* name);

 private:
  struct Entry {
    X509NamePtr subject;
    std::string der;
    X509Ptr cert;  // once decoded
    bool tried = false;
  };

  mutable std::mutex mutex_;  // stores of several SSL_CTXs may look up at once
  std::vector<Entry> entries_;
};

}  // namespace tlswrap

#endif  // TLSWRAP_ENGINE_ROOT_STORE_H_
