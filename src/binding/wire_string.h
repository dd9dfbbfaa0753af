// Names a peer sends (SNI, ALPN protocol names) as JS strings, decoded the
// way node:tls decodes them: one character per byte (latin1). UTF-8 would turn
// each invalid sequence into U+FFFD, so names that differ on the wire could
// compare equal in JS (SNICallback lookups, addContext patterns).
#ifndef TLSWRAP_WIRE_STRING_H_
#define TLSWRAP_WIRE_STRING_H_

#include <napi.h>

#include <cstring>

namespace tlswrap {

inline Napi::String WireString(Napi::Env env, const char* data, size_t len) {
  napi_value out;
  napi_status status = napi_create_string_latin1(env, data, len, &out);
  NAPI_THROW_IF_FAILED(env, status, Napi::String());
  return Napi::String(env, out);
}

inline Napi::String WireString(Napi::Env env, const char* data) {
  return WireString(env, data, std::strlen(data));
}

}  // namespace tlswrap

#endif  // TLSWRAP_WIRE_STRING_H_
