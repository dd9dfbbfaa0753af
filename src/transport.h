// The seam between the TLS engine and whatever carries its ciphertext. The
// engine feeds a transport ciphertext and is fed by it; it never knows
// whether that is a JS Duplex or (later) a native TCP handle.
#ifndef TLSWRAP_TRANSPORT_H_
#define TLSWRAP_TRANSPORT_H_

#include <napi.h>

#include <cstdint>

#include "engine/cipher_buffer.h"

namespace tlswrap {

class Transport {
 public:
  virtual ~Transport() = default;

  // Takes all of `out` (leaving it empty). Returns false when the transport
  // would rather not be given more until it reports a drain.
  virtual bool Write(Napi::Env env, CipherBuffer* out) = 0;

  // Half-closes after everything given has been written. False when the
  // transport cannot (the JS side then ends its Duplex itself).
  virtual bool Shutdown() { return false; }

  // Bytes handed on so far (to the kernel, or to the Duplex once its write
  // completed): a write is done when its ciphertext is here, not queued.
  virtual uint64_t flushed() const = 0;

  // The async context JS is entered under changed (handle.asyncReset()).
  virtual void SetAsyncContext(napi_async_context /*context*/) {}
};

}  // namespace tlswrap

#endif  // TLSWRAP_TRANSPORT_H_
