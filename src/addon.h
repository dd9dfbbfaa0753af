// Per-environment state (one per main thread or worker): constructors and the
// shared default trust store. Nothing here is a process-wide mutable global.
#ifndef TLSWRAP_ADDON_H_
#define TLSWRAP_ADDON_H_

#include <napi.h>

#include "openssl_ptr.h"

namespace tlswrap {

struct AddonData {
  static AddonData* Get(Napi::Env env) { return env.GetInstanceData<AddonData>(); }

  // The default trust store, built on first use from `pems` (an array of PEM
  // strings: tls.rootCertificates plus NODE_EXTRA_CA_CERTS).
  X509_STORE* RootStore(Napi::Value pems);

  Napi::FunctionReference secure_context_ctor;
  Napi::FunctionReference tls_wrap_ctor;
  X509StorePtr root_store;
};

// The DER encoding of `cert` as a Buffer.
Napi::Value DerOf(Napi::Env env, X509* cert);

}  // namespace tlswrap

#endif  // TLSWRAP_ADDON_H_
