// Trusted certificates decoded on demand (src/engine/root_store.h), as the
// default trust store and the `ca` option use them: verification finds
// every root it needs, decodes only those, and trusts nothing that is not
// in the list.
#include "../../src/engine/root_store.h"

#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "pair.h"

namespace enginetest {
namespace {

using tlswrap::RootCertificates;
using tlswrap::X509Ptr;
using tlswrap::X509StorePtr;

std::string ReadFixture(const char* name) {
  std::ifstream in(Fixture(name), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  CHECK(!text.str().empty());
  return text.str();
}

X509Ptr Cert(const char* name) {
  std::string pem = ReadFixture(name);
  tlswrap::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  CHECK(cert != nullptr);
  return cert;
}

// X509_V_OK, or why `leaf` (with `untrusted` intermediates) does not verify
// against `store` (for `purpose`, if given, as a TLS client checks a server).
int Verify(X509_STORE* store, const char* leaf, const char* untrusted = nullptr, int purpose = 0) {
  X509Ptr cert = Cert(leaf);
  tlswrap::X509StackPtr chain(sk_X509_new_null());
  if (untrusted != nullptr) sk_X509_push(chain.get(), Cert(untrusted).release());
  std::unique_ptr<X509_STORE_CTX, void (*)(X509_STORE_CTX*)> ctx(X509_STORE_CTX_new(),
                                                                 X509_STORE_CTX_free);
  CHECK(X509_STORE_CTX_init(ctx.get(), store, cert.get(), chain.get()) == 1);
  if (purpose != 0) CHECK(X509_STORE_CTX_set_purpose(ctx.get(), purpose) == 1);
  int ok = X509_verify_cert(ctx.get());
  int err = X509_STORE_CTX_get_error(ctx.get());
  ERR_clear_error();
  return ok == 1 ? X509_V_OK : (err == X509_V_OK ? -1 : err);
}

X509StorePtr StoreWith(const std::shared_ptr<RootCertificates>& roots) {
  X509StorePtr store(X509_STORE_new());
  CHECK(RootCertificates::Attach(roots, store.get()));
  return store;
}

int Objects(X509_STORE* store) {
  return sk_X509_OBJECT_num(X509_STORE_get0_objects(store));
}

TEST(roots_decode_only_what_verification_asks_for) {
  // The test CA among unrelated roots, as NODE_EXTRA_CA_CERTS adds it to
  // node's bundled list.
  auto roots =
      RootCertificates::FromPems({ReadFixture("selfsigned-cert.pem"),
                                  ReadFixture("weak512-cert.pem") + ReadFixture("ca-cert.pem"),
                                  ReadFixture("twin-ca-cert.pem")});
  CHECK_EQ(roots->size(), 4u);
  X509StorePtr store = StoreWith(roots);
  CHECK_EQ(Objects(store.get()), 0);
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_OK);
  // The two roots named "tlswrap test CA", nothing else.
  CHECK_EQ(roots->decoded(), 2u);
  CHECK_EQ(Objects(store.get()), 2);
  // Through an intermediate the peer sends.
  CHECK_EQ(Verify(store.get(), "inter-leaf-cert.pem", "inter-ca-cert.pem"), X509_V_OK);
  CHECK_EQ(roots->decoded(), 2u);
}

TEST(roots_every_certificate_of_a_name_is_offered) {
  // Both orders: a lookup that added only the first or only the last root of
  // a name would fail one of the two leaves.
  for (const char* file : {"twin-cas.pem", "twin-ca-cert.pem"}) {
    std::vector<std::string> pems = {ReadFixture(file)};
    if (std::string(file) == "twin-ca-cert.pem") pems.push_back(ReadFixture("ca-cert.pem"));
    auto roots = RootCertificates::FromPems(pems);
    CHECK_EQ(roots->size(), 2u);
    X509StorePtr first = StoreWith(roots);
    CHECK_EQ(Verify(first.get(), "twin-leaf-cert.pem"), X509_V_OK);
    X509StorePtr second = StoreWith(roots);
    CHECK_EQ(Verify(second.get(), "server-cert.pem"), X509_V_OK);
    CHECK_EQ(Verify(second.get(), "twin-leaf-cert.pem"), X509_V_OK);
  }
}

TEST(roots_absent_issuer_is_not_trusted) {
  auto roots = RootCertificates::FromPems({ReadFixture("twin-ca-cert.pem")});
  X509StorePtr store = StoreWith(roots);
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
  auto none = RootCertificates::FromPems({});
  X509StorePtr empty = StoreWith(none);
  CHECK_EQ(Verify(empty.get(), "twin-leaf-cert.pem"), X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST(roots_malformed_text_ends_its_list) {
  std::string ca = ReadFixture("ca-cert.pem");
  std::string twin = ReadFixture("twin-ca-cert.pem");
  // A block whose base64 is broken: OpenSSL's PEM reader stops there, so
  // what follows in that text is not trusted; other texts still are.
  std::string broken = "-----BEGIN CERTIFICATE-----\nnot!base64\n-----END CERTIFICATE-----\n";
  // A block that decodes but is not a certificate.
  std::string garbage =
      "-----BEGIN CERTIFICATE-----\nAAAAAAAAAAAAAAAA\n-----END CERTIFICATE-----\n";
  std::string key = ReadFixture("server-key.pem");  // another kind of block: skipped
  auto roots = RootCertificates::FromPems({broken + ca, key + twin, garbage + ca, "", "junk"});
  CHECK_EQ(roots->size(), 1u);
  X509StorePtr store = StoreWith(roots);
  CHECK_EQ(Verify(store.get(), "twin-leaf-cert.pem"), X509_V_OK);
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
  CHECK_EQ(ERR_peek_error(), 0ul);
}

TEST(roots_skip_trusted_certificate_blocks) {
  // A TRUSTED CERTIFICATE block (here: the test CA, rejected for server
  // authentication) is skipped, as PEM_read_bio_X509 skips it; a plain block
  // after it in the same text is still read.
  auto roots = RootCertificates::FromPems(
      {ReadFixture("ca-trusted-form.pem") + ReadFixture("twin-ca-cert.pem")});
  CHECK_EQ(roots->size(), 1u);
  X509StorePtr store = StoreWith(roots);
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
  CHECK_EQ(Verify(store.get(), "twin-leaf-cert.pem"), X509_V_OK);
}

TEST(roots_with_trust_settings_read_trusted_certificate_blocks) {
  // The `ca` option's reading (PEM_read_bio_X509_AUX's): the TRUSTED
  // CERTIFICATE block is read with its trust settings, so the test CA,
  // rejected for server authentication, does not vouch for a server.
  std::string texts = ReadFixture("ca-trusted-form.pem") + ReadFixture("twin-ca-cert.pem");
  auto roots = RootCertificates::FromPems({texts}, RootCertificates::Blocks::kWithTrustSettings);
  CHECK_EQ(roots->size(), 2u);
  X509StorePtr store = StoreWith(roots);
  CHECK(Verify(store.get(), "server-cert.pem", nullptr, X509_PURPOSE_SSL_SERVER) != X509_V_OK);
  CHECK_EQ(Verify(store.get(), "twin-leaf-cert.pem", nullptr, X509_PURPOSE_SSL_SERVER), X509_V_OK);
  // It is trusted for what it is not rejected for.
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_OK);
  bool found_rejected = false;
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(store.get());
  for (int i = 0; i < sk_X509_OBJECT_num(objects); i++) {
    X509* cert = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i));
    if (cert != nullptr && X509_check_trust(cert, NID_server_auth, 0) == X509_TRUST_REJECTED) {
      found_rejected = true;
    }
  }
  CHECK(found_rejected);
}

TEST(roots_subjects_in_reading_order) {
  // Sorted for lookups, but named in the order given: a server's list of
  // acceptable client CAs follows its `ca` option.
  auto roots =
      RootCertificates::FromPems({ReadFixture("selfsigned-cert.pem") + ReadFixture("ca-cert.pem"),
                                  ReadFixture("other-cert.pem"), ReadFixture("twin-ca-cert.pem")});
  std::vector<std::string> names;
  for (const X509_NAME* name : roots->SubjectsInOrder()) {
    char line[256];
    CHECK(X509_NAME_oneline(name, line, sizeof line) != nullptr);
    names.push_back(line);
  }
  CHECK_EQ(names.size(), 4u);
  CHECK(names[0] == "/CN=localhost/O=selfsigned");
  CHECK(names[1] == "/CN=tlswrap test CA/O=tlswrap");
  CHECK(names[2] == "/CN=other.example/O=tlswrap");
  CHECK(names[3] == "/CN=tlswrap test CA/O=tlswrap");
}

TEST(roots_attached_twice_and_shared_by_stores) {
  auto roots = RootCertificates::FromPems({ReadFixture("ca-cert.pem")});
  auto other = RootCertificates::FromPems({ReadFixture("twin-ca-cert.pem")});
  X509StorePtr store = StoreWith(roots);
  CHECK(RootCertificates::Attach(roots, store.get()));  // no second lookup of the same set
  CHECK(RootCertificates::Attach(other, store.get()));  // a second set joins the first
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_OK);
  CHECK_EQ(Verify(store.get(), "twin-leaf-cert.pem"), X509_V_OK);
  // The set outlives the stores that used it, and the stores outlive the
  // last other reference to it.
  X509StorePtr again = StoreWith(other);
  other.reset();
  store.reset();
  CHECK_EQ(Verify(again.get(), "twin-leaf-cert.pem"), X509_V_OK);
  CHECK_EQ(roots->decoded(), 1u);
}

// OpenSSL asks lookups only for names a store holds nothing of: a set
// attached after a verification decoded a CA of the same name still counts.
TEST(roots_attached_after_use_join_names_already_found) {
  auto roots = RootCertificates::FromPems({ReadFixture("ca-cert.pem")});
  auto twin = RootCertificates::FromPems({ReadFixture("twin-ca-cert.pem")});
  X509StorePtr store = StoreWith(roots);
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_OK);
  CHECK(Verify(store.get(), "twin-leaf-cert.pem") != X509_V_OK);
  CHECK(RootCertificates::Attach(twin, store.get()));
  CHECK_EQ(Verify(store.get(), "twin-leaf-cert.pem"), X509_V_OK);
  CHECK_EQ(Verify(store.get(), "server-cert.pem"), X509_V_OK);
}

}  // namespace
}  // namespace enginetest
