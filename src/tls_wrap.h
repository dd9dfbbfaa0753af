// One TLS connection: the SSL*, its ciphertext buffers, the read path
// (coalesced ClearOut), the write path (grouped, sliced ClearIn), the ordered
// output queue, and the lifetime rules. Names mirror Node's TLSWrap where the
// role is the same: ClearOut decrypts, ClearIn encrypts, EncOut flushes
// ciphertext to the transport.
#ifndef TLSWRAP_TLS_WRAP_H_
#define TLSWRAP_TLS_WRAP_H_

#include <napi.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cipher_buffer.h"
#include "openssl_ptr.h"
#include "transport.h"
#include "transport_uv.h"

namespace tlswrap {

class TLSWrap : public Napi::ObjectWrap<TLSWrap>, private UvTransport::Owner {
 public:
  // Plaintext handed to JS at once is at most this much.
  static constexpr size_t kMaxClearChunk = 64 * 1024;
  // Mid-handshake plaintext is decrypted into a stack buffer this big and
  // copied out: it is rare and small, and a connection keeps no memory for it.
  static constexpr size_t kScratchSize = 16 * 1024;
  // Plaintext given to one SSL_write: bounds the ciphertext produced before
  // the transport has a chance to push back.
  static constexpr size_t kWriteSlice = 256 * 1024;
  // Chunks of a writev smaller than this are staged into one block so they
  // share records; larger ones are encrypted where they are.
  static constexpr size_t kStageThreshold = 16 * 1024;

  static Napi::Function Init(Napi::Env env);
  // Installs the OpenSSL callbacks every SSL_CTX needs to reach its TLSWrap.
  static void ConfigureContext(SSL_CTX* ctx);

  explicit TLSWrap(const Napi::CallbackInfo& info);
  ~TLSWrap() override;

 private:
  // What OpenSSL produced between plaintext bytes. Each is stamped with the
  // number of plaintext bytes decrypted before it, so delivery keeps wire order.
  enum class EventType : int {
    kHandshakeStart = 1,
    kHandshakeDone = 2,
    kSession = 3,
    kKeylog = 4,
    kCertCb = 5,
    kEnd = 6,
    kError = 7,
    kShutdown = 8,         // close_notify (if any) handed over: end the transport
    kNewSession = 9,       // server: payload is id length (1 byte), id, DER
    kResumeSession = 10,   // server: payload is the session id the client offers
    kTransportError = 11,  // native transport: `error` is the libuv code, payload the syscall
  };
  struct Event {
    EventType type;
    size_t offset;
    std::string payload;
    unsigned long error = 0;
  };
  struct WriteReq {
    Napi::ObjectReference chunks;  // keeps the JS buffers alive while we read them
    std::vector<std::pair<const char*, size_t>> pieces;
    size_t piece = 0;   // next piece to encrypt
    size_t offset = 0;  // bytes of that piece already encrypted
    double id;
  };
  enum class CertCbState { kNone, kWaiting, kDone };

  // OpenSSL callbacks (informative ones only queue events).
  static void InfoCallback(const SSL* ssl, int where, int ret);
  static int NewSessionCallback(SSL* ssl, SSL_SESSION* session);
  static void KeylogCallback(const SSL* ssl, const char* line);
  static int AlpnSelectCallback(SSL* ssl, const unsigned char** out, unsigned char* outlen,
                                const unsigned char* in, unsigned int inlen, void* arg);
  static int CertCallback(SSL* ssl, void* arg);
  static int ClientHelloCallback(SSL* ssl, int* alert, void* arg);
  static SSL_SESSION* GetSessionCallback(SSL* ssl, const unsigned char* id, int len, int* copy);
  static int VerifyCallback(int preverify_ok, X509_STORE_CTX* ctx);
  static TLSWrap* FromSSL(const SSL* ssl);
  int RunALPNCallback(const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                      unsigned int inlen);

  // JS methods.
  void SetCallbacks(const Napi::CallbackInfo& info);
  void Start(const Napi::CallbackInfo& info);
  void Receive(const Napi::CallbackInfo& info);
  void ReceiveEOF(const Napi::CallbackInfo& info);
  void TransportDrained(const Napi::CallbackInfo& info);
  void Writev(const Napi::CallbackInfo& info);
  void Shutdown(const Napi::CallbackInfo& info);
  void Destroy(const Napi::CallbackInfo& info);
  void ReadStart(const Napi::CallbackInfo& info);
  void ReadStop(const Napi::CallbackInfo& info);
  void SetReadBuffer(const Napi::CallbackInfo& info);
  void SetServername(const Napi::CallbackInfo& info);
  void SetSession(const Napi::CallbackInfo& info);
  void SetALPNProtocols(const Napi::CallbackInfo& info);
  void SetVerifyMode(const Napi::CallbackInfo& info);
  void EnableKeylog(const Napi::CallbackInfo& info);
  void EnableCertCb(const Napi::CallbackInfo& info);
  void CertCbDone(const Napi::CallbackInfo& info);
  Napi::Value UseNativeTransport(const Napi::CallbackInfo& info);
  void SetNoDelay(const Napi::CallbackInfo& info);
  void SetKeepAlive(const Napi::CallbackInfo& info);
  void RefHandle(const Napi::CallbackInfo& info);
  void UnrefHandle(const Napi::CallbackInfo& info);
  void EnableSessionEvents(const Napi::CallbackInfo& info);
  void LoadSession(const Napi::CallbackInfo& info);
  Napi::Value Renegotiate(const Napi::CallbackInfo& info);
  Napi::Value NewSessionTicket(const Napi::CallbackInfo& info);
  Napi::Value SetMaxSendFragment(const Napi::CallbackInfo& info);
  Napi::Value VerifyError(const Napi::CallbackInfo& info);
  Napi::Value GetPeerCertChain(const Napi::CallbackInfo& info);
  Napi::Value GetCertificate(const Napi::CallbackInfo& info);
  Napi::Value GetCipher(const Napi::CallbackInfo& info);
  Napi::Value GetProtocol(const Napi::CallbackInfo& info);
  Napi::Value GetSession(const Napi::CallbackInfo& info);
  Napi::Value IsSessionReused(const Napi::CallbackInfo& info);
  Napi::Value GetTLSTicket(const Napi::CallbackInfo& info);
  void EnableALPNCallback(const Napi::CallbackInfo& info);
  Napi::Value GetFinished(const Napi::CallbackInfo& info);
  Napi::Value GetPeerFinished(const Napi::CallbackInfo& info);
  Napi::Value GetALPNProtocol(const Napi::CallbackInfo& info);
  Napi::Value GetServername(const Napi::CallbackInfo& info);
  Napi::Value ExportKeyingMaterial(const Napi::CallbackInfo& info);
  Napi::Value GetEphemeralKeyInfo(const Napi::CallbackInfo& info);
  Napi::Value GetSharedSigalgs(const Napi::CallbackInfo& info);
  Napi::Value IsInitFinished(const Napi::CallbackInfo& info);

  // The engine.
  void Cycle();
  void ClearOut();
  void ClearIn();
  void EncOut();
  void QueueEvent(EventType type, std::string payload = std::string(), unsigned long error = 0);
  // A fatal TLS error (`err_code` from the error queue, 0 if none): flushes
  // the alert, stops reading and writing, queues 'error'. False if the
  // connection was destroyed meanwhile.
  bool Fail(unsigned long err_code);
  void KickHandshake();
  // Hands `len` decrypted bytes at `data` and the queued events to JS, in
  // wire order. Returns false if the connection was destroyed meanwhile.
  // `target` is the JS buffer `data` lies in (none: a copy is made); with
  // `user_buffer` it is onread's, whose callbacks see data at its start.
  bool Deliver(char* data, size_t len, Napi::Object target, bool user_buffer);
  bool DeliverEvent(const Event& event);
  bool DeliverData(const char* data, size_t len, Napi::Object target, bool user_buffer);
  void CompleteWrites();
  bool dead() const { return destroyed_ || !ssl_; }
  void Release();
  void FinishRelease();
  void StopForTeardown();
  static void CleanupHook(void* arg);
  static void AsyncCleanupHook(napi_async_cleanup_hook_handle handle, void* arg);

  // UvTransport::Owner: libuv callbacks, with no JS on the stack.
  void OnTransportRead() override;
  void OnTransportEOF() override;
  void OnTransportError(int uv_error, const char* syscall) override;
  void OnTransportDrain() override;
  void OnTransportShutdown() override;
  void OnTransportClosed() override;
  // Runs `f` as an entry from the event loop: a handle scope, and a JS
  // exception turned into an uncaught one (no C++ exception reaches libuv).
  template <typename F>
  void FromLoop(F&& f);
  SSL* ssl() const { return ssl_.get(); }

  SslPtr ssl_;
  bool is_server_;
  Napi::ObjectReference context_;      // the SecureContext the SSL_CTX belongs to
  Napi::ObjectReference sni_context_;  // one chosen by SNI, kept alive likewise
  CipherBuffer enc_in_;
  CipherBuffer enc_out_;
  std::unique_ptr<Transport> transport_;
  UvTransport* native_ = nullptr;  // transport_, when it is the native one
  bool native_closed_ = false;
  napi_async_cleanup_hook_handle async_cleanup_ = nullptr;
  std::unique_ptr<Napi::AsyncContext> async_context_;
  Napi::FunctionReference on_data_;
  Napi::FunctionReference on_event_;
  Napi::FunctionReference on_write_done_;
  Napi::ObjectReference read_buffer_;  // onread: a Buffer, or a function returning one

  size_t read_fill_ = 0;  // plaintext bytes in the current chunk: the stamp for events
  std::vector<Event> events_;

  std::deque<WriteReq> writes_;
  std::vector<double> completed_writes_;
  std::vector<char> staging_;
  const char* retry_data_ = nullptr;  // a slice SSL_write must be given again
  size_t retry_len_ = 0;

  std::vector<unsigned char> alpn_protos_;  // server: our preference list, wire format
  Napi::FunctionReference alpn_callback_;   // server: ALPNCallback, run on OpenSSL's stack
  CertCbState cert_cb_state_ = CertCbState::kNone;
  // Server session cache in JS ('newSession'/'resumeSession'): the ClientHello
  // waits (SSL_CLIENT_HELLO_RETRY) while JS looks the offered id up.
  bool new_session_events_ = false;
  CertCbState resume_state_ = CertCbState::kDone;  // kNone once a listener asks
  SslSessionPtr loaded_session_;

  bool started_ = false;
  bool established_ = false;
  bool reading_ = true;
  bool read_closed_ = false;  // close_notify seen, EOF or a fatal error delivered
  bool transport_eof_ = false;
  bool transport_blocked_ = false;
  bool shutdown_ = false;
  bool keylog_ = false;
  bool destroyed_ = false;
  bool cycling_ = false;  // the engine is on the stack: destroy() is deferred
  bool cycle_again_ = false;
  bool self_ref_ = false;
  bool cleanup_hook_ = false;
  bool fatal_ = false;
  bool shutdown_sent_ = false;
  bool kick_handshake_ = false;
  bool ticket_wanted_ = false;
  bool renegotiate_wanted_ = false;
};

}  // namespace tlswrap

#endif  // TLSWRAP_TLS_WRAP_H_
