// Per-environment state (one per main thread or worker): constructors, the
// shared default trust store and the ciphertext block pool. Nothing here is
// a process-wide mutable global.
#ifndef TLSWRAP_ADDON_H_
#define TLSWRAP_ADDON_H_

#include <napi.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/block_pool.h"
#include "engine/openssl_ptr.h"
#include "engine/root_store.h"
#include "idle_sweep.h"

namespace tlswrap {

struct AddonData {
  static AddonData* Get(Napi::Env env) { return env.GetInstanceData<AddonData>(); }

  // The default trust store, built on first use from `pems` (an array of PEM
  // strings: tls.rootCertificates plus NODE_EXTRA_CA_CERTS), and again when
  // `version` changes (setDefaultCACertificates()). Contexts made before keep
  // their reference to the old store. Its certificates are decoded only as
  // verification asks for them (root_certs, see engine/root_store.h).
  X509_STORE* RootStore(Napi::Value pems, uint32_t version, bool default_paths);

  // The certificates of a `ca` option (its PEM texts), read once per
  // distinct list and decoded as verification asks for them, as the default
  // roots are: node:tls programs pass the same `ca` to every connect(), and
  // often all of tls.rootCertificates in it. Bounded; emptied when full.
  std::shared_ptr<RootCertificates> CASet(const std::vector<std::string>& texts);

  // A session to offer, decoded from its DER. d2i_SSL_SESSION re-parses the
  // peer certificate, and OpenSSL 3's key decoder made that ~9% of a resumed
  // connection's CPU; a client cache offers the same DER many times. The
  // decoded session is kept only as a template: each caller gets its own
  // copy (SSL_SESSION_dup), so nothing a connection does to its session
  // reaches another, and a template is found only by the exact same bytes.
  // Bounded; emptied when full. Null if the bytes are not a session.
  SslSessionPtr DecodeSession(const unsigned char* der, size_t len);

  Napi::FunctionReference secure_context_ctor;
  Napi::FunctionReference tls_wrap_ctor;
  X509StorePtr root_store;
  std::shared_ptr<RootCertificates> root_certs;  // what root_store looks up
  uint32_t root_store_version = 0;
  std::unordered_map<std::string, std::shared_ptr<RootCertificates>> ca_sets;
  size_t ca_sets_bytes = 0;
  std::unordered_map<std::string, SslSessionPtr> decoded_sessions;
  size_t decoded_sessions_bytes = 0;
  // Ciphertext blocks for every connection of this environment.
  std::shared_ptr<BlockPool> block_pool = std::make_shared<BlockPool>();
  // Frees idle connections' OpenSSL buffers; made at module init (it needs
  // the env).
  std::shared_ptr<IdleSweep> idle_sweep;
  // Small plaintext chunks (a request, a short message) are handed to JS as
  // slices of one shared Buffer, as node's Buffer pool does, instead of a
  // new ArrayBuffer each: that allocation was ~5% of a keep-alive request.
  // Used only up to `clear_slab_used`; a new one once it is full.
  Napi::ObjectReference clear_slab;
  size_t clear_slab_used = 0;
  // node's markAsUntransferable, run on each new slab (lib/binding.js), as
  // node marks its own pool: a program that transfers one chunk's
  // `.buffer` to a worker must not detach other connections' chunks.
  Napi::FunctionReference slab_marker;
  // Whether the running node:tls binds a session made with no server name
  // to the empty name (lib/session_state.js knows which Node does), so that
  // tlswrap's servers derive the session id context as its servers do.
  bool bind_unnamed_sessions = false;
};

// The DER encoding of `cert` as a Buffer.
Napi::Value DerOf(Napi::Env env, X509* cert);

}  // namespace tlswrap

#endif  // TLSWRAP_ADDON_H_
