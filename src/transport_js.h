// The generic transport: ciphertext goes out through a JS function (which
// writes it to any Duplex) and comes in through TLSWrap.receive().
#ifndef TLSWRAP_TRANSPORT_JS_H_
#define TLSWRAP_TRANSPORT_JS_H_

#include <napi.h>

#include "engine/fifo.h"
#include "transport.h"

namespace tlswrap {

class JsTransport : public Transport {
 public:
  // `write` is called as write.call(receiver, buffer) and returns the
  // underlying stream's write() result.
  JsTransport(Napi::Object receiver, Napi::Function write, napi_async_context async_context);

  bool Write(Napi::Env env, CipherBuffer* out) override;
  uint64_t flushed() const override { return flushed_; }
  // The Duplex completed the oldest write still out.
  void Flushed();
  // Every write has called back: the Duplex holds nothing of ours.
  bool idle() const { return in_flight_.empty(); }
  void SetAsyncContext(napi_async_context context) override { async_context_ = context; }

 private:
  Fifo<size_t> in_flight_;  // lengths of the writes the Duplex holds
  uint64_t flushed_ = 0;
  Napi::ObjectReference receiver_;
  Napi::FunctionReference write_;
  napi_async_context async_context_;
};

}  // namespace tlswrap

#endif  // TLSWRAP_TRANSPORT_JS_H_
