// The N-API face of one connection: owns an Engine and its transport, runs
// the engine's pump and delivers each batch to JS in order. An exception a
// listener throws surfaces before anything more is delivered, as each of
// node:tls's callbacks does (see Thrown()). Teardown has one owner,
// Release(), run at once or from the scope guard of the outermost engine
// call.
#ifndef TLSWRAP_BINDING_TLS_WRAP_H_
#define TLSWRAP_BINDING_TLS_WRAP_H_

#include <napi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "idle_sweep.h"
#include "transport.h"
#include "transport_uv.h"

namespace tlswrap {

class JsWriteSource;

class TLSWrap : public Napi::ObjectWrap<TLSWrap>,
                private Engine::Delegate,
                private UvTransport::Owner {
 public:
  static Napi::Function Init(Napi::Env env);

  explicit TLSWrap(const Napi::CallbackInfo& info);
  ~TLSWrap() override;

 private:
  friend class CycleScope;

  // JS methods.
  void SetCallbacks(const Napi::CallbackInfo& info);
  void Start(const Napi::CallbackInfo& info);
  // Both may throw a listener's exception with the rest of its batch
  // undelivered: finishBatch() (on the next tick) delivers it.
  void Receive(const Napi::CallbackInfo& info);
  void ReceiveEOF(const Napi::CallbackInfo& info);
  void FinishBatch(const Napi::CallbackInfo& info);
  void TransportDrained(const Napi::CallbackInfo& info);
  void CiphertextFlushed(const Napi::CallbackInfo& info);
  Napi::Value Writev(const Napi::CallbackInfo& info);
  void Shutdown(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  void ReadStart(const Napi::CallbackInfo& info);
  void ReadStop(const Napi::CallbackInfo& info);
  void SetReadBuffer(const Napi::CallbackInfo& info);
  void SetServername(const Napi::CallbackInfo& info);
  void SetSession(const Napi::CallbackInfo& info);
  Napi::Value PredictKeyShare(const Napi::CallbackInfo& info);
  Napi::Value GetNegotiatedGroup(const Napi::CallbackInfo& info);
  void SetALPNProtocols(const Napi::CallbackInfo& info);
  void SetVerifyMode(const Napi::CallbackInfo& info);
  void EnableKeylog(const Napi::CallbackInfo& info);
  void EnableCertCb(const Napi::CallbackInfo& info);
  void CertCbDone(const Napi::CallbackInfo& info);
  void SetKeyCert(const Napi::CallbackInfo& info);
  void RequestOCSP(const Napi::CallbackInfo& info);
  void SetOCSPResponse(const Napi::CallbackInfo& info);
  void EnableTrace(const Napi::CallbackInfo& info);
  Napi::Value UseNativeTransport(const Napi::CallbackInfo& info);
  void ReleaseTransport(const Napi::CallbackInfo& info);
  Napi::Value GetAddress(const Napi::CallbackInfo& info);
  void SetNoDelay(const Napi::CallbackInfo& info);
  void SetKeepAlive(const Napi::CallbackInfo& info);
  void RefHandle(const Napi::CallbackInfo& info);
  void UnrefHandle(const Napi::CallbackInfo& info);
  void ResetOnClose(const Napi::CallbackInfo& info);
  void EnableSessionEvents(const Napi::CallbackInfo& info);
  void LoadSession(const Napi::CallbackInfo& info);
  void NewSessionDone(const Napi::CallbackInfo& info);
  Napi::Value Renegotiate(const Napi::CallbackInfo& info);
  Napi::Value NewSessionTicket(const Napi::CallbackInfo& info);
  Napi::Value SetMaxSendFragment(const Napi::CallbackInfo& info);
  Napi::Value VerifyError(const Napi::CallbackInfo& info);
  Napi::Value GetPeerCertChain(const Napi::CallbackInfo& info);
  Napi::Value GetPeerLeaf(const Napi::CallbackInfo& info);
  Napi::Value GetCertificate(const Napi::CallbackInfo& info);
  Napi::Value GetCipher(const Napi::CallbackInfo& info);
  Napi::Value GetProtocol(const Napi::CallbackInfo& info);
  Napi::Value GetSession(const Napi::CallbackInfo& info);
  Napi::Value IsSessionReused(const Napi::CallbackInfo& info);
  Napi::Value GetTLSTicket(const Napi::CallbackInfo& info);
  void EnableALPNCallback(const Napi::CallbackInfo& info);
  void EnablePskCallback(const Napi::CallbackInfo& info);
  Napi::Value SetPskIdentityHint(const Napi::CallbackInfo& info);
  Napi::Value GetFinished(const Napi::CallbackInfo& info);
  Napi::Value GetPeerFinished(const Napi::CallbackInfo& info);
  Napi::Value GetALPNProtocol(const Napi::CallbackInfo& info);
  Napi::Value GetServername(const Napi::CallbackInfo& info);
  Napi::Value ExportKeyingMaterial(const Napi::CallbackInfo& info);
  Napi::Value GetEphemeralKeyInfo(const Napi::CallbackInfo& info);
  Napi::Value GetSharedSigalgs(const Napi::CallbackInfo& info);
  Napi::Value IsInitFinished(const Napi::CallbackInfo& info);
  Napi::Value RunInAsyncContext(const Napi::CallbackInfo& info);
  Napi::Value GetFd(const Napi::CallbackInfo& info);
  Napi::Value WriteProgressed(const Napi::CallbackInfo& info);
  Napi::Value RecordBuffersHeld(const Napi::CallbackInfo& info);
  void AsyncReset(const Napi::CallbackInfo& info);

  // Engine::Delegate.
  int SelectAlpn(const unsigned char* offer, unsigned int len) override;
  char* ClearBuffer(size_t want, size_t* cap) override;
  unsigned int PskServer(const char* identity, unsigned char* psk, unsigned int max_psk) override;
  unsigned int PskClient(const char* hint, char* identity, unsigned int max_identity,
                         unsigned char* psk, unsigned int max_psk) override;
  // Runs a JS callback on OpenSSL's stack; false if the connection went
  // away meanwhile. A JS exception is thrown as a Napi::Error.
  bool CallUnderOpenSSL(const Napi::FunctionReference& fn, std::initializer_list<napi_value> args,
                        Napi::Value* answer);

  // UvTransport::Owner: libuv callbacks, with no JS on the stack.
  void OnTransportRead() override;
  void OnTransportEOF() override;
  void OnTransportReadError(int uv_error) override;
  void OnTransportWriteError(int uv_error) override;
  void OnTransportDrain() override;
  void OnTransportShutdown() override;
  void OnTransportClosed() override;

  // Runs the engine until it is idle, delivering what it produces (first
  // what an exception left of the last batch). Throws the exception Thrown()
  // kept for the JS caller.
  void Cycle();
  // Cycle() for receive()/receiveEOF(): JS fed ciphertext in.
  void CycleForCaller();
  // Hands the engine's ciphertext to the transport and tells the engine how
  // far the transport got. True if there was any.
  bool Flush(bool force = false);
  // Sends what JS wrote before a destroy() it calls from a delivery.
  void SendQueuedWrites();
  // Delivers `batch` from its `*event`th event and `*byte`th plaintext byte
  // on, moving both along. False if it stopped for an exception kept for the
  // JS caller: the rest starts there.
  bool Deliver(const Batch& batch, size_t* event, size_t* byte);
  void KeepRest(Batch* batch, size_t event, size_t byte);
  // False if the rest could not all be delivered (another exception).
  bool DeliverRest();
  // Delivers batch.data[from, to); `*byte` (to, on entry) goes back to the
  // first byte no callback was given if an exception stopped it short.
  void DeliverData(const Batch& batch, size_t from, size_t to, size_t* byte);
  void DeliverOnread(const Batch& batch, size_t from, size_t to, size_t* byte);
  // onread's buffer at this moment (the fixed one, or the function's answer)
  // made the clear target; null, reported, if it gave none.
  char* OnreadBuffer(size_t* cap);
  void CopyOnreadBytes(JsWriteSource* source);
  bool TargetIntact() const;
  void ReadGone();
  void DeliverEvent(const Event& event);
  // Calls a listener; an exception goes to Thrown().
  void Call(const Napi::FunctionReference& fn, std::initializer_list<napi_value> args);
  // As node:tls's callbacks: the exception goes back to the JS that fed the
  // ciphertext in (receive(), as to a JS stream's readBuffer()), kept until
  // the cycle returns, delivering nothing more meanwhile; else it is
  // uncaught and reported at once ('uncaughtException' runs, or the process
  // dies of it), and delivery goes on if the process lives. Either way it
  // surfaces before any later event, and a later one cannot hide it.
  void Thrown(const Napi::Error& error);
  void SyncReading();
  // The transport's EOF came before start(): reported to JS at once. False
  // if the engine has started (the cycle reports it, behind what came first).
  bool ReportEOFBeforeStart();
  // Ciphertext (or, `eof`, the transport's EOF) came to a client before
  // start(): JS is told, once, and starts the engine if it is a client made
  // by hand, whose handshake node:tls begins there too (after an EOF, at its
  // end(): see the .cc).
  void ReportInputBeforeStart(bool eof = false);
  // Ciphertext an unstarted engine reads ahead: a ClientHello or two.
  static constexpr size_t kUnstartedInput = 64 * 1024;
  // Engine ciphertext the transports have taken so far (this one's count
  // on top of what earlier ones took); transport_ must be set.
  uint64_t FlushedTotal() const { return flushed_base_ + transport_->flushed(); }
  // Runs `f` as an entry from the event loop: a handle scope, and a JS
  // exception turned into an uncaught one (no C++ exception reaches libuv).
  template <typename F>
  void FromLoop(F&& f);

  bool dead() const { return destroyed_ || !engine_ || engine_->dead(); }
  SSL* ssl() const { return engine_ ? engine_->ssl() : nullptr; }
  void MarkDestroyed();
  void Release();
  void FinishRelease();
  static void CleanupHook(void* arg);
  static void AsyncCleanupHook(napi_async_cleanup_hook_handle handle, void* arg);

  std::unique_ptr<Engine> engine_;
  std::shared_ptr<IdleSweep> idle_sweep_;
  IdleSweep::Entry idle_entry_;  // in idle_sweep_'s list while engine_ may hold buffers
  std::unique_ptr<Transport> transport_;
  UvTransport* native_ = nullptr;  // transport_, when it is the native one
  bool native_closed_ = false;
  uint64_t flushed_base_ = 0;          // engine ciphertext handed to a transport before this one
  uint64_t progress_mark_ = 0;         // ciphertext flushed at the last write or progress check
  Napi::ObjectReference context_;      // the SecureContext the SSL_CTX belongs to
  Napi::ObjectReference sni_context_;  // one chosen by SNI, kept alive likewise
  napi_async_cleanup_hook_handle async_cleanup_ = nullptr;
  std::unique_ptr<Napi::AsyncContext> async_context_;
  std::unique_ptr<Napi::AsyncContext>
      retired_async_context_;  // the one before the last asyncReset()
  Napi::FunctionReference on_data_;
  Napi::FunctionReference on_event_;
  Napi::ObjectReference read_buffer_;      // onread: a Buffer, or a function returning one
  Napi::FunctionReference alpn_callback_;  // server: ALPNCallback, run on OpenSSL's stack
  Napi::FunctionReference psk_callback_;   // pskCallback's adapter, likewise
  Napi::Object clear_target_;              // the Buffer of the batch being made
  // What clear_target_ viewed when handed to the engine: JS that runs before
  // its bytes are delivered (a callback under OpenSSL, a listener of an
  // earlier part of the batch) can detach it, and the bytes go with it.
  const char* target_base_ = nullptr;
  size_t target_size_ = 0;
  std::optional<Napi::Error> thrown_;  // a listener's exception, for the JS caller
  // onread: what a burst had after its first part, taken out of the user's
  // buffer before that part's callback (see DeliverOnread).
  std::string onread_rest_;
  const char* onread_rest_batch_ = nullptr;  // the batch.data it came from
  size_t onread_rest_from_ = 0;              // its offset there

  // What a batch had left when an exception stopped it.
  struct Rest {
    Batch batch;
    size_t event = 0;
    size_t byte = 0;
    Napi::ObjectReference target;  // the memory batch.data lies in, if in_target
    const char* target_base = nullptr;
    size_t target_size = 0;
  };
  std::unique_ptr<Rest> rest_;
  bool to_caller_ = false;  // the cycle runs for receive()/receiveEOF()

  int depth_ = 0;  // engine calls on the stack: Release() waits for 0
  bool cycle_again_ = false;
  bool delivering_ = false;  // JS is handling a batch (not under OpenSSL)
  // JS called from an OpenSSL callback is on the stack: OpenSSL must not be
  // entered again for this connection (a write from it waits for the cycle).
  int under_openssl_ = 0;
  // The batch being delivered is plaintext alone and left no ciphertext
  // behind: a write from its handler may be encrypted and sent at once.
  bool quiet_batch_ = false;
  uint64_t sync_write_id_ = 0;  // the write writev() completes itself, not by event
  bool sync_write_done_ = false;
  bool destroyed_ = false;
  bool self_ref_ = false;
  bool cleanup_hook_ = false;
  bool input_reported_ = false;  // see ReportInputBeforeStart
};

}  // namespace tlswrap

#endif  // TLSWRAP_BINDING_TLS_WRAP_H_
