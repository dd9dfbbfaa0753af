// Module init. The addon resolves OpenSSL's symbols from the running node
// binary; lib/binding.js turns a failed load into an actionable message.
#include "addon.h"

#include "buffer_release.h"
#include "engine/events.h"
#include "errors.h"
#include "secure_context.h"
#include "tls_wrap.h"

namespace tlswrap {

X509_STORE* AddonData::RootStore(Napi::Value pems, uint32_t version, bool default_paths) {
  if (root_store && version == root_store_version) return root_store.get();
  ErrorQueueGuard guard;
  X509StorePtr store(X509_STORE_new());
  if (!store) ThrowCryptoError(pems.Env(), "X509_STORE_new failed");
  // --use-openssl-ca: SSL_CERT_FILE / SSL_CERT_DIR or OpenSSL's built-in
  // paths, as node's store does; a path that does not exist adds nothing.
  if (default_paths) X509_STORE_set_default_paths(store.get());
  std::vector<std::string> texts;
  if (pems.IsArray()) {
    Napi::Array list = pems.As<Napi::Array>();
    texts.reserve(list.Length());
    for (uint32_t i = 0; i < list.Length(); i++)
      texts.push_back(list.Get(i).ToString().Utf8Value());
  }
  std::shared_ptr<RootCertificates> roots = RootCertificates::FromPems(texts);
  if (!RootCertificates::Attach(roots, store.get())) {
    ThrowCryptoError(pems.Env(), "Failed to set up the default trust store");
  }
  root_store = std::move(store);
  root_certs = std::move(roots);
  root_store_version = version;
  return root_store.get();
}

std::shared_ptr<RootCertificates> AddonData::CASet(const std::vector<std::string>& texts) {
  constexpr size_t kMaxEntries = 64;
  constexpr size_t kMaxBytes = 4 << 20;
  // Each text's length first: where one text ends is part of the list (a
  // text is read up to its first malformed block).
  std::string key;
  for (const std::string& text : texts) {
    key += std::to_string(text.size());
    key += ':';
    key += text;
  }
  auto found = ca_sets.find(key);
  if (found != ca_sets.end()) return found->second;
  auto set = RootCertificates::FromPems(texts, RootCertificates::Blocks::kWithTrustSettings);
  if (ca_sets.size() >= kMaxEntries || ca_sets_bytes + key.size() > kMaxBytes) {
    ca_sets.clear();
    ca_sets_bytes = 0;
  }
  ca_sets_bytes += key.size();
  ca_sets.emplace(std::move(key), set);
  return set;
}

SslSessionPtr AddonData::DecodeSession(const unsigned char* der, size_t len) {
  constexpr size_t kMaxEntries = 64;
  constexpr size_t kMaxBytes = 1 << 20;
  std::string key(reinterpret_cast<const char*>(der), len);
  auto found = decoded_sessions.find(key);
  if (found == decoded_sessions.end()) {
    const unsigned char* p = der;
    SslSessionPtr decoded(d2i_SSL_SESSION(nullptr, &p, static_cast<long>(len)));
    if (!decoded) return nullptr;
    if (decoded_sessions.size() >= kMaxEntries || decoded_sessions_bytes + len > kMaxBytes) {
      decoded_sessions.clear();
      decoded_sessions_bytes = 0;
    }
    decoded_sessions_bytes += len;
    found = decoded_sessions.emplace(std::move(key), std::move(decoded)).first;
  }
  return SslSessionPtr(SSL_SESSION_dup(found->second.get()));
}

Napi::Value DerOf(Napi::Env env, X509* cert) {
  int len = i2d_X509(cert, nullptr);
  if (len <= 0) return env.Undefined();
  Napi::Buffer<unsigned char> out = Napi::Buffer<unsigned char>::New(env, len);
  unsigned char* p = out.Data();
  i2d_X509(cert, &p);
  return out;
}

namespace {

void SetSlabMarker(const Napi::CallbackInfo& info) {
  AddonData* data = AddonData::Get(info.Env());
  if (info[0].IsFunction()) data->slab_marker = Napi::Persistent(info[0].As<Napi::Function>());
}

void BindUnnamedSessions(const Napi::CallbackInfo& info) {
  AddonData::Get(info.Env())->bind_unnamed_sessions = info[0].ToBoolean().Value();
}

}  // namespace

Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  env.SetInstanceData(data);  // node-addon-api deletes it at environment teardown
  data->idle_sweep = std::make_shared<IdleSweep>(env);
  Napi::Function secure_context = SecureContext::Init(env);
  Napi::Function tls_wrap = TLSWrap::Init(env);
  data->secure_context_ctor = Napi::Persistent(secure_context);
  data->tls_wrap_ctor = Napi::Persistent(tls_wrap);
  exports.Set("SecureContext", secure_context);
  exports.Set("TLSWrap", tls_wrap);
  exports.Set("opensslVersion", OpenSSL_version(OPENSSL_VERSION_STRING));
  exports.Set("releaseArrayBuffers",
              Napi::Function::New<ReleaseArrayBuffers>(env, "releaseArrayBuffers"));
  exports.Set("setSlabMarker", Napi::Function::New<SetSlabMarker>(env, "setSlabMarker"));
  exports.Set("bindUnnamedSessions",
              Napi::Function::New<BindUnnamedSessions>(env, "bindUnnamedSessions"));
  // The engine's event codes, from their one definition.
  Napi::Object events = Napi::Object::New(env);
#define TLSWRAP_EXPORT_EVENT(name, js, code) events.Set(js, code);
  TLSWRAP_ENGINE_EVENTS(TLSWRAP_EXPORT_EVENT)
#undef TLSWRAP_EXPORT_EVENT
  exports.Set("events", events);
  Napi::Object constants = Napi::Object::New(env);
  constants.Set("TLS1_VERSION", TLS1_VERSION);
  constants.Set("TLS1_1_VERSION", TLS1_1_VERSION);
  constants.Set("TLS1_2_VERSION", TLS1_2_VERSION);
  constants.Set("TLS1_3_VERSION", TLS1_3_VERSION);
  exports.Set("constants", constants);
  return exports;
}

}  // namespace tlswrap

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  return tlswrap::InitModule(env, exports);
}

NODE_API_MODULE(tlswrap, Init)
