// OpenSSL failures as JS Errors shaped like node:tls's: `code`, `library`,
// `reason`, and the X509 verify codes by name.
#ifndef TLSWRAP_ERRORS_H_
#define TLSWRAP_ERRORS_H_

#include <napi.h>

#include <string>

namespace tlswrap {

// An Error for a failure inside a TLS connection: code is "ERR_SSL_<REASON>"
// whatever library the reason came from, as node:tls names them. `printed`,
// when given, is the message (the error as OpenSSL prints it, which is how
// node:tls words it); otherwise the message is the error's string.
Napi::Error TlsError(Napi::Env env, unsigned long err, const char* fallback,
                     const std::string& printed = std::string());

// An Error for configuration (key, cert, options): code is "ERR_OSSL_<LIB>_<REASON>"
// ("ERR_SSL_<REASON>" for the SSL library), as node:crypto names them.
Napi::Error CryptoError(Napi::Env env, unsigned long err, const char* fallback);

// Pops the most recent error from the queue (0 when empty) and throws it as a
// CryptoError. Always throws.
[[noreturn]] void ThrowCryptoError(Napi::Env env, const char* fallback);

// Throws an Error whose message is only the reason of the first queued error
// and that has no code: what node:tls throws for a bad PFX.
[[noreturn]] void ThrowReasonError(Napi::Env env, const char* fallback);

// Throws a plain Error with a node-style code.
[[noreturn]] void ThrowCodedError(Napi::Env env, const char* code, const std::string& message);

// The same as a TypeError (ERR_INVALID_ARG_TYPE and friends, as node throws them).
[[noreturn]] void ThrowCodedTypeError(Napi::Env env, const char* code, const std::string& message);

// info[index] as a Buffer. The native methods are reachable from JS
// (`secureContext.context`), so anything else is a TypeError with
// ERR_INVALID_ARG_TYPE rather than node-addon-api's uncoded "Invalid argument".
Napi::Buffer<unsigned char> BufferArg(const Napi::CallbackInfo& info, size_t index,
                                      const char* name);

// "UNABLE_TO_VERIFY_LEAF_SIGNATURE" and friends, as node:tls names them.
const char* VerifyErrorCode(long verify_result);

}  // namespace tlswrap

#endif  // TLSWRAP_ERRORS_H_
