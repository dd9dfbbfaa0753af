#include "root_store.h"

#include <openssl/asn1.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cstring>

namespace tlswrap {

namespace {

// One DER header at `*p`; `*p` moves to its contents. False on a malformed
// header or an indefinite length (not DER).
bool ReadHeader(const unsigned char** p, const unsigned char* end, long* len, int* tag, int* cls) {
  if (*p >= end) return false;
  int r = ASN1_get_object(p, len, tag, cls, end - *p);
  return (r & 0x80) == 0 && (r & 1) == 0;
}

bool NameLess(const X509_NAME* a, const X509_NAME* b) {
  return X509_NAME_cmp(a, b) < 0;
}

bool IsSequence(int tag, int cls) {
  return cls == V_ASN1_UNIVERSAL && tag == V_ASN1_SEQUENCE;
}

// The subject Name of a DER certificate, found by walking the headers of
// tbsCertificate (version, serialNumber, signature, issuer, validity,
// subject) and decoded alone: the key is what costs, and it is not touched.
X509NamePtr SubjectOf(const std::string& der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  const unsigned char* end = p + der.size();
  long len = 0;
  int tag = 0;
  int cls = 0;
  if (!ReadHeader(&p, end, &len, &tag, &cls) || !IsSequence(tag, cls))
    return nullptr;  // Certificate
  end = p + len;
  if (!ReadHeader(&p, end, &len, &tag, &cls) || !IsSequence(tag, cls)) return nullptr;  // tbs
  end = p + len;
  if (!ReadHeader(&p, end, &len, &tag, &cls)) return nullptr;
  int skip = 4;  // serialNumber, signature, issuer, validity
  if (cls == V_ASN1_CONTEXT_SPECIFIC && tag == 0) skip = 5;  // [0] version first
  for (;;) {
    p += len;
    if (--skip == 0) break;
    if (!ReadHeader(&p, end, &len, &tag, &cls)) return nullptr;
  }
  const unsigned char* subject = p;
  if (!ReadHeader(&p, end, &len, &tag, &cls) || !IsSequence(tag, cls)) return nullptr;
  const unsigned char* q = subject;
  return X509NamePtr(d2i_X509_NAME(nullptr, &q, (p - subject) + len));
}

// The block names PEM_read_bio_X509 reads, and PEM_read_bio_X509_AUX.
bool IsWantedBlock(const char* name, RootCertificates::Blocks blocks) {
  if (std::strcmp(name, PEM_STRING_X509) == 0 || std::strcmp(name, PEM_STRING_X509_OLD) == 0) {
    return true;
  }
  return blocks == RootCertificates::Blocks::kWithTrustSettings &&
         std::strcmp(name, PEM_STRING_X509_TRUSTED) == 0;
}

// What a store's lookup holds: the certificate sets it searches.
using Holder = std::vector<std::shared_ptr<RootCertificates>>;

int GetBySubject(X509_LOOKUP* lookup, X509_LOOKUP_TYPE type, const X509_NAME* name,
                 X509_OBJECT* ret) {
  if (type != X509_LU_X509 || name == nullptr) return 0;
  auto* holder = static_cast<Holder*>(X509_LOOKUP_get_method_data(lookup));
  X509_STORE* store = X509_LOOKUP_get_store(lookup);
  if (holder == nullptr || store == nullptr) return 0;
  X509* found = nullptr;
  for (const auto& roots : *holder) {
    X509* one = roots->AddMatching(store, name);
    if (found == nullptr) found = one;
  }
  if (found == nullptr) return 0;
  if (ret == nullptr) return 1;
  // OpenSSL's caller borrows what a lookup returns (it takes its own
  // reference, and drops none), as with its hashed-directory lookup: hand
  // over a pointer without a reference. `found` lives as long as the roots.
  if (X509_OBJECT_set1_X509(ret, found) != 1) return 0;
  X509_free(found);
  return 1;
}

void FreeLookup(X509_LOOKUP* lookup) {
  std::unique_ptr<Holder> owned(static_cast<Holder*>(X509_LOOKUP_get_method_data(lookup)));
  X509_LOOKUP_set_method_data(lookup, nullptr);
}

X509_LOOKUP_METHOD* LookupMethod() {
  // One for the process, never freed: a store in any thread may use it until
  // the process ends.
  static X509_LOOKUP_METHOD* method = [] {
    X509_LOOKUP_METHOD* m = X509_LOOKUP_meth_new("tlswrap default roots");
    if (m != nullptr) {
      X509_LOOKUP_meth_set_get_by_subject(m, GetBySubject);
      X509_LOOKUP_meth_set_free(m, FreeLookup);
    }
    return m;
  }();
  return method;
}

}  // namespace

std::shared_ptr<RootCertificates> RootCertificates::FromPems(const std::vector<std::string>& pems,
                                                             Blocks blocks) {
  auto roots = std::make_shared<RootCertificates>();
  roots->blocks_ = blocks;
  // The end of each text reads as "no start line": nothing of this reading
  // stays on the caller's error queue.
  ERR_set_mark();
  for (const std::string& text : pems) {
    BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    if (!bio) continue;
    for (;;) {
      char* name = nullptr;
      char* header = nullptr;
      unsigned char* data = nullptr;
      long len = 0;
      // Only the base64 is decoded here, not the certificate.
      if (PEM_read_bio(bio.get(), &name, &header, &data, &len) != 1) break;
      bool wanted = IsWantedBlock(name, blocks);
      std::string der(reinterpret_cast<const char*>(data), wanted ? len : 0);
      OPENSSL_free(name);
      OPENSSL_free(header);
      OPENSSL_free(data);
      if (!wanted) continue;
      X509NamePtr subject = SubjectOf(der);
      // Not a certificate OpenSSL could read: it would stop at it too.
      if (!subject) break;
      size_t position = roots->entries_.size();
      roots->entries_.push_back(
          Entry{std::move(subject), std::move(der), position, nullptr, false});
    }
  }
  ERR_pop_to_mark();
  // By name, as OpenSSL orders a store's objects: a lookup is then a binary
  // search (most are for names that are not roots: a server's intermediate
  // is looked up here before the chain it sent).
  std::stable_sort(
      roots->entries_.begin(), roots->entries_.end(),
      [](const Entry& a, const Entry& b) { return NameLess(a.subject.get(), b.subject.get()); });
  return roots;
}

bool RootCertificates::Attach(const std::shared_ptr<RootCertificates>& roots, X509_STORE* store) {
  X509_LOOKUP_METHOD* method = LookupMethod();
  if (method == nullptr || !roots) return false;
  // A store has at most one lookup per method: a second set joins the first.
  X509_LOOKUP* lookup = X509_STORE_add_lookup(store, method);
  if (lookup == nullptr) return false;
  auto* holder = static_cast<Holder*>(X509_LOOKUP_get_method_data(lookup));
  if (holder == nullptr) {
    auto fresh = std::make_unique<Holder>();
    if (X509_LOOKUP_set_method_data(lookup, fresh.get()) != 1) return false;
    holder = fresh.release();  // freed by FreeLookup with the store
  }
  for (const auto& held : *holder) {
    if (held == roots) return true;
  }
  holder->push_back(roots);
  // OpenSSL asks a store's lookups only for a name the store holds no
  // certificate of. A set attached once verification has used the store
  // (addCACert()) would never be asked for a name already found: its
  // certificates of those names go in now.
  std::vector<X509NamePtr> present;
  X509_STORE_lock(store);
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(store);
  for (int i = 0; i < sk_X509_OBJECT_num(objects); i++) {
    X509* cert = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i));
    if (cert != nullptr) present.emplace_back(X509_NAME_dup(X509_get_subject_name(cert)));
  }
  X509_STORE_unlock(store);
  for (const X509NamePtr& name : present) {
    if (name) roots->AddMatching(store, name.get());
  }
  return true;
}

std::vector<const X509_NAME*> RootCertificates::SubjectsInOrder() const {
  std::vector<const X509_NAME*> names(entries_.size());
  for (const Entry& e : entries_) names[e.position] = e.subject.get();
  return names;
}

size_t RootCertificates::decoded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const Entry& e : entries_) n += e.cert ? 1 : 0;
  return n;
}

X509* RootCertificates::AddMatching(X509_STORE* store, const X509_NAME* name) {
  std::lock_guard<std::mutex> lock(mutex_);
  X509* first = nullptr;
  // Every match, not the first: verification then picks among them (a
  // renewed or cross-signed root shares its subject with the old one).
  auto from = std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const Entry& e, const X509_NAME* n) { return NameLess(e.subject.get(), n); });
  for (auto it = from; it != entries_.end() && X509_NAME_cmp(it->subject.get(), name) == 0; ++it) {
    Entry& e = *it;
    if (!e.tried) {
      e.tried = true;
      ERR_set_mark();
      const unsigned char* p = reinterpret_cast<const unsigned char*>(e.der.data());
      long len = static_cast<long>(e.der.size());
      // d2i_X509_AUX reads a plain certificate as well: what follows one, if
      // anything, is its trust settings.
      e.cert.reset(blocks_ == Blocks::kWithTrustSettings ? d2i_X509_AUX(nullptr, &p, len)
                                                         : d2i_X509(nullptr, &p, len));
      ERR_pop_to_mark();
    }
    if (!e.cert) continue;
    ERR_set_mark();
    bool added = X509_STORE_add_cert(store, e.cert.get()) == 1;
    ERR_pop_to_mark();
    if (added && first == nullptr) first = e.cert.get();
  }
  return first;
}

}  // namespace tlswrap
