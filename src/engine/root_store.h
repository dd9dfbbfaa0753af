// Trusted certificates decoded on demand: the default trust store (node's
// bundled roots, NODE_EXTRA_CA_CERTS, a setDefaultCACertificates() list) and
// a context's `ca` option. OpenSSL 3 takes about 0.3 ms to decode one
// certificate (its public-key decoder), so decoding 150-300 roots up front
// cost a process 40-90 ms at its first context, and a `ca` of
// [...tls.rootCertificates, ours] as much at every context, for the one or
// two that verification ever reads. Here each certificate waits as DER with
// only its subject decoded, and a store it is attached to decodes and adds a
// subject's certificates the first time verification asks for an issuer of
// that name, as OpenSSL's hashed-directory lookup does with files.
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
  // Which PEM blocks are read, as the reader node uses for each list reads
  // them.
  enum class Blocks {
    // CERTIFICATE blocks, as PEM_read_bio_X509 (node's default roots): a
    // TRUSTED CERTIFICATE block is skipped, since reading it without its
    // trust settings could trust it for a use it is rejected for.
    kCertificates,
    // TRUSTED CERTIFICATE blocks too, with their trust settings, as
    // PEM_read_bio_X509_AUX (the `ca` option).
    kWithTrustSettings,
  };

  // Every certificate in `pems` (PEM texts; one may hold several). As the
  // eager readers, a text is read up to its first malformed block, and
  // blocks of other kinds are skipped. One difference: a certificate whose
  // body past its subject does not decode is found malformed only when
  // looked up (it is then not trusted), where the eager reader would also
  // have ignored the rest of its text.
  static std::shared_ptr<RootCertificates> FromPems(const std::vector<std::string>& pems,
                                                    Blocks blocks = Blocks::kCertificates);

  // Makes `store` find its issuers among `roots` (kept alive by the store).
  // False if OpenSSL could not add the lookup.
  static bool Attach(const std::shared_ptr<RootCertificates>& roots, X509_STORE* store);

  size_t size() const { return entries_.size(); }
  // The subjects, in the order the texts hold them (a server's list of
  // acceptable client-certificate CAs keeps the `ca` option's order).
  std::vector<const X509_NAME*> SubjectsInOrder() const;
  // How many have been decoded so far.
  size_t decoded() const;

  // Adds to `store` every certificate whose subject is `name`; returns one
  // of them (owned by this object), or null if none decodes.
  X509* AddMatching(X509_STORE* store, const X509_NAME* name);

 private:
  struct Entry {
    X509NamePtr subject;
    std::string der;
    size_t position = 0;  // in reading order
    X509Ptr cert;         // once decoded
    bool tried = false;
  };

  mutable std::mutex mutex_;  // stores of several SSL_CTXs may look up at once
  Blocks blocks_ = Blocks::kCertificates;
  std::vector<Entry> entries_;  // by subject
};

}  // namespace tlswrap

#endif  // TLSWRAP_ENGINE_ROOT_STORE_H_
