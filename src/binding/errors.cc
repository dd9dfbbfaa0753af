#include "errors.h"

#include <openssl/err.h>
#include <openssl/x509_vfy.h>

#include <cctype>

namespace tlswrap {

namespace {

// "wrong version number" -> "WRONG_VERSION_NUMBER"
std::string ReasonToCode(const char* reason) {
  std::string code(reason);
  for (char& c : code) c = c == ' ' ? '_' : static_cast<char>(std::toupper(c));
  return code;
}

const char* LibraryCodePart(unsigned long err) {
#define LIB(name)      \
  case ERR_LIB_##name: \
    return #name "_";
  switch (ERR_GET_LIB(err)) {
    LIB(SYS)
    LIB(BN)
    LIB(RSA)
    LIB(DH)
    LIB(EVP)
    LIB(BUF)
    LIB(OBJ)
    LIB(PEM)
    LIB(DSA)
    LIB(X509)
    LIB(ASN1)
    LIB(CONF)
    LIB(CRYPTO)
    LIB(EC)
    LIB(SSL)
    LIB(BIO)
    LIB(PKCS7)
    LIB(X509V3)
    LIB(PKCS12)
    LIB(RAND)
    LIB(DSO)
    LIB(ENGINE)
    LIB(OCSP)
    LIB(UI)
    LIB(COMP)
    LIB(ECDSA)
    LIB(ECDH)
    LIB(OSSL_STORE)
    LIB(CMS)
    LIB(TS)
    LIB(HMAC)
    LIB(CT)
    LIB(ASYNC)
    LIB(KDF)
    LIB(SM2)
    LIB(USER)
    default:
      return "";
  }
#undef LIB
}

Napi::Error MakeError(Napi::Env env, unsigned long err, const char* fallback, bool tls,
                      const std::string& printed) {
  if (err == 0) {
    Napi::Error e = Napi::Error::New(env, fallback);
    return e;
  }
  char buf[256];
  ERR_error_string_n(err, buf, sizeof(buf));
  Napi::Error e = Napi::Error::New(env, printed.empty() ? std::string(buf) : printed);
  Napi::Object obj = e.Value();
  if (const char* lib = ERR_lib_error_string(err)) obj.Set("library", lib);
  const char* reason = ERR_reason_error_string(err);
  if (reason != nullptr) {
    obj.Set("reason", reason);
    std::string code;
    const char* lib = LibraryCodePart(err);
    if (tls || std::string(lib) == "SSL_") {
      code = "ERR_SSL_" + ReasonToCode(reason);
    } else {
      code = std::string("ERR_OSSL_") + lib + ReasonToCode(reason);
    }
    obj.Set("code", code);
  }
  return e;
}

}  // namespace

Napi::Error TlsError(Napi::Env env, unsigned long err, const char* fallback,
                     const std::string& printed) {
  return MakeError(env, err, fallback, true, printed);
}

Napi::Error CryptoError(Napi::Env env, unsigned long err, const char* fallback) {
  return MakeError(env, err, fallback, false, std::string());
}

void ThrowCryptoError(Napi::Env env, const char* fallback) {
  // The first error is the root cause; later ones are context added on the way up.
  unsigned long err = ERR_peek_error();
  ERR_clear_error();
  throw CryptoError(env, err, fallback);
}

void ThrowReasonError(Napi::Env env, const char* fallback) {
  unsigned long err = ERR_peek_error();
  ERR_clear_error();
  const char* reason = err != 0 ? ERR_reason_error_string(err) : nullptr;
  throw Napi::Error::New(env, reason != nullptr ? reason : fallback);
}

void ThrowCodedError(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Value().Set("code", code);
  throw e;
}

void ThrowCodedTypeError(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error e = Napi::TypeError::New(env, message);
  e.Value().Set("code", code);
  throw e;
}

Napi::Buffer<unsigned char> BufferArg(const Napi::CallbackInfo& info, size_t index,
                                      const char* name) {
  Napi::Value value = info[index];
  if (!value.IsBuffer()) {
    ThrowCodedTypeError(info.Env(), "ERR_INVALID_ARG_TYPE",
                        std::string("The \"") + name + "\" argument must be an instance of Buffer");
  }
  return value.As<Napi::Buffer<unsigned char>>();
}

const char* VerifyErrorCode(long verify_result) {
#define CODE(name)        \
  case X509_V_ERR_##name: \
    return #name;
  switch (verify_result) {
    CODE(UNABLE_TO_GET_ISSUER_CERT)
    CODE(UNABLE_TO_GET_CRL)
    CODE(UNABLE_TO_DECRYPT_CERT_SIGNATURE)
    CODE(UNABLE_TO_DECRYPT_CRL_SIGNATURE)
    CODE(UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY)
    CODE(CERT_SIGNATURE_FAILURE)
    CODE(CRL_SIGNATURE_FAILURE)
    CODE(CERT_NOT_YET_VALID)
    CODE(CERT_HAS_EXPIRED)
    CODE(CRL_NOT_YET_VALID)
    CODE(CRL_HAS_EXPIRED)
    CODE(ERROR_IN_CERT_NOT_BEFORE_FIELD)
    CODE(ERROR_IN_CERT_NOT_AFTER_FIELD)
    CODE(ERROR_IN_CRL_LAST_UPDATE_FIELD)
    CODE(ERROR_IN_CRL_NEXT_UPDATE_FIELD)
    CODE(OUT_OF_MEM)
    CODE(DEPTH_ZERO_SELF_SIGNED_CERT)
    CODE(SELF_SIGNED_CERT_IN_CHAIN)
    CODE(UNABLE_TO_GET_ISSUER_CERT_LOCALLY)
    CODE(UNABLE_TO_VERIFY_LEAF_SIGNATURE)
    CODE(CERT_CHAIN_TOO_LONG)
    CODE(CERT_REVOKED)
    CODE(INVALID_CA)
    CODE(PATH_LENGTH_EXCEEDED)
    CODE(INVALID_PURPOSE)
    CODE(CERT_UNTRUSTED)
    CODE(CERT_REJECTED)
    CODE(HOSTNAME_MISMATCH)
    default:
      return "UNSPECIFIED";
  }
#undef CODE
}

}  // namespace tlswrap
