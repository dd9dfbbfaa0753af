// The parsing half of a SecureContext's setters: PEM keys, certificates,
// CAs and CRLs, PKCS#12 bundles, with OpenSSL alone (no N-API), so the
// binding and the context_input fuzzer (fuzz/) run the same code. Each
// reads from a BIO and reports failure by its result, leaving OpenSSL's
// error queue for the caller to turn into an exception.
#ifndef TLSWRAP_ENGINE_CONTEXT_CONFIG_H_
#define TLSWRAP_ENGINE_CONTEXT_CONFIG_H_

#include <memory>
#include <string>

#include "openssl_ptr.h"
#include "root_store.h"

namespace tlswrap {
namespace config {

// A PEM private key, decrypted with `pass` if given (none: the empty
// passphrase is tried, so a missing one reads as "bad decrypt").
EvpPkeyPtr ReadPrivateKey(BIO* bio, const std::string* pass);
// The first PEM certificate (null if none) and the ones after it in `chain`.
X509Ptr ReadCertificateChain(BIO* bio, X509StackPtr* chain);
// The `ca` certificates of `set` trusted by `store` (decoded as
// verification asks for them), and their names added, in order, to the
// context's list of CAs it accepts client certificates from (what
// SSL_CTX_add_client_CA adds; it needs the decoded certificate, this only
// the name). False if OpenSSL failed.
bool AddCACerts(SSL_CTX* ctx, X509_STORE* store, const std::shared_ptr<RootCertificates>& set);
// A DER PKCS#12 bundle; false if it cannot be read or opened with `pass`.
bool ReadPKCS12(BIO* bio, const std::string& pass, EvpPkeyPtr* key, X509Ptr* cert,
                X509StackPtr* ca);

}  // namespace config
}  // namespace tlswrap

#endif  // TLSWRAP_ENGINE_CONTEXT_CONFIG_H_
