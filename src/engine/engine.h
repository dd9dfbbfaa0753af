// The TLS engine: one connection's SSL*, its ciphertext buffers, the write
// queue and the Cycle pump (ClearOut decrypts, ClearIn encrypts, as in Node's
// TLSWrap), with no N-API and no transport. The embedder owns all IO: it feeds
// ciphertext in (enc_in()), takes ciphertext out (enc_out()), and calls Step()
// until it returns false, delivering each Batch in order. The engine never
// runs JavaScript itself; the only calls out while OpenSSL is on the stack are
// the Delegate's, for answers needed at once.
#ifndef TLSWRAP_ENGINE_ENGINE_H_
#define TLSWRAP_ENGINE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cipher_buffer.h"
#include "events.h"
#include "fifo.h"
#include "openssl_ptr.h"

namespace tlswrap {

// The bytes of one plaintext write. The engine asks for a piece each time it
// reads it, never keeping a pointer across calls: memory the embedder does
// not own (a JS ArrayBuffer) can be taken away while a write waits.
class WriteSource {
 public:
  virtual ~WriteSource() = default;
  virtual size_t count() const = 0;
  // The length piece `i` had when the write was made.
  virtual size_t size(size_t i) const = 0;
  // Piece `i` as it is now, size(i) bytes; false if its memory is gone.
  virtual bool Get(size_t i, const char** data) = 0;
};

// A write that owns its bytes (tests, the fuzzer, copies).
class OwnedWriteSource : public WriteSource {
 public:
  explicit OwnedWriteSource(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {}
  size_t count() const override { return pieces_.size(); }
  size_t size(size_t i) const override { return pieces_[i].size(); }
  bool Get(size_t i, const char** data) override {
    *data = pieces_[i].data();
    return true;
  }

 private:
  std::vector<std::string> pieces_;
};

struct Event {
  EventType type;
  size_t offset;  // plaintext bytes of the batch that come before it
  std::string payload;
  uint64_t value = 0;  // an OpenSSL error, an errno, or a write id
};

// What one Step() produced, in wire order: plaintext with events between.
struct Batch {
  char* data = nullptr;  // in the Delegate's last ClearBuffer(), or in `owned`
  size_t len = 0;
  bool in_target = false;  // data lies in the Delegate's last ClearBuffer()
  std::string owned;       // plaintext decrypted where no target was given
  std::vector<Event> events;

  bool empty() const { return len == 0 && events.empty(); }
};

class Engine {
 public:
  class Delegate {
   public:
    // Server ALPNCallback, on OpenSSL's stack: the offset in `offer` of the
    // chosen entry's length byte, or -1 to fail the handshake.
    virtual int SelectAlpn(const unsigned char* offer, unsigned int len) = 0;
    // Server PSK, on OpenSSL's stack: the key for the client's `identity`
    // written to `psk` (at most `max_psk` bytes); its length, 0 to refuse.
    virtual unsigned int PskServer(const char* identity, unsigned char* psk,
                                   unsigned int max_psk) = 0;
    // Client PSK, on OpenSSL's stack: for the server's `hint` (nullptr if it
    // sent none, always in TLS 1.3), the identity (at most `max_identity`
    // bytes, into a buffer OpenSSL zeroed) and the key; the key's length, 0
    // to offer none.
    virtual unsigned int PskClient(const char* hint, char* identity, unsigned int max_identity,
                                   unsigned char* psk, unsigned int max_psk) = 0;
    // Memory for `want` bytes of plaintext, which the embedder keeps alive
    // until the batch is delivered; {nullptr, 0} lets the engine keep them.
    // With user buffers (onread) it may be any non-zero size.
    virtual char* ClearBuffer(size_t want, size_t* cap) = 0;

   protected:
    ~Delegate() = default;
  };

  // Plaintext handed over at once is at most this much.
  static constexpr size_t kMaxClearChunk = 64 * 1024;
  // Plaintext given to one SSL_write: bounds the ciphertext made before the
  // embedder has a chance to push back. Each slice is one transport write:
  // at 256 KiB a large HTTPS download made 2.6x the write system calls of
  // node:tls (which encrypts a whole write at once) and its server spent
  // 12-16% more CPU per GiB; at 1 MiB it is level.
  static constexpr size_t kWriteSlice = 1024 * 1024;
  // Chunks of a write smaller than this are staged into one block so they
  // share records; larger ones are encrypted where they are.
  static constexpr size_t kStageThreshold = 16 * 1024;
  // Ciphertext that reads provoke (KeyUpdate and renegotiation replies)
  // while the transport is blocked, beyond which reading stops until it
  // drains: a peer that never reads cannot grow our queue without bound. Data
  // alone never stops reading, or two peers writing to each other would
  // both wait for the other to read.
  static constexpr size_t kReplyBacklogLimit = 16 * 1024;

  // Installs the callbacks every SSL_CTX needs to reach its Engine.
  static void ConfigureContext(SSL_CTX* ctx);

  // Throws nothing; check ok() (false: OpenSSL could not make the SSL).
  Engine(SSL_CTX* ctx, bool is_server, std::shared_ptr<BlockPool> pool, Delegate* delegate);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  bool ok() const { return ssl_ != nullptr; }
  SSL* ssl() const { return ssl_.get(); }
  bool is_server() const { return is_server_; }
  CipherBuffer& enc_in() { return enc_in_; }
  // The block small writes are copied into before SSL_write (tests).
  size_t staging_capacity() const { return staging_.capacity(); }
  CipherBuffer& enc_out() { return enc_out_; }

  // ---- Input ----
  void Start();
  void Write(std::unique_ptr<WriteSource> source, uint64_t id);
  void Shutdown();
  void ReceiveEOF();
  void TransportError(int error, const char* syscall);
  // A write to the transport failed: an error of the connection, unless
  // Shutdown() was asked for and no write of the embedder's is outstanding.
  // Then what was lost is ours (close_notify, a reply) and the peer is
  // gone: as node:tls, it is ignored and the read side tells what happened.
  void TransportWriteError(int error);
  void SetTransportBlocked(bool blocked) {
    transport_blocked_ = blocked;
    if (!blocked) reply_backlog_ = 0;
  }
  // Ciphertext bytes the transport has written so far (a running total).
  void SetFlushed(uint64_t total) { flushed_ = total; }
  void SetReading(bool reading) { reading_ = reading; }
  // From now on nothing leaves the engine: no data, events or ciphertext.
  void Destroy();
  // Encrypts the next slice of the queued writes into enc_out(), as Step
  // would, and nothing else: for an embedder about to destroy the connection
  // from a callback, or sending a write at once. False once nothing more can
  // be encrypted now; events it made wait for the next Step().
  bool EncryptQueuedWrite();
  // Completes write `id` now, if it is the oldest write and its ciphertext
  // is flushed, rather than as a kWriteDone event of a later Step().
  bool TakeFlushedWrite(uint64_t id);
  // Idle (nothing queued either way): OpenSSL's record buffers and the
  // staging block go back to malloc, to be made again for the next record.
  // Step() does it each time the connection goes idle, unless the embedder
  // takes it over (SetFreeBuffersWhenIdle(false)) to do it less often.
  void FreeIdleBuffers();
  void SetFreeBuffersWhenIdle(bool free) { free_buffers_when_idle_ = free; }
  // Whether OpenSSL may hold record buffers: it ran since they were last
  // freed (tests).
  bool record_buffers_held() const { return record_buffers_held_; }
  // The source of write `id` while the engine still holds it (not all of it
  // encrypted yet), else null.
  WriteSource* QueuedWrite(uint64_t id);
  // Work other than writes that Step() must order them against.
  bool control_pending() const {
    return kick_handshake_ || shutdown_ != CloseState::kNone || !events_.empty();
  }

  // Runs the pump until it has something for the embedder (a batch to
  // deliver, ciphertext to flush) or nothing is left to do (false). The
  // embedder flushes enc_out() after every call.
  bool Step(Batch* out);

  // Whether ciphertext should be read from the network now.
  bool WantsInput() const;
  bool dead() const { return phase_ == Phase::kDestroyed || !ssl_; }
  bool established() const { return phase_ == Phase::kOpen; }
  // Start() was called: before that, Step() reads nothing and only buffers.
  bool started() const { return phase_ != Phase::kNew; }
  bool shutdown_wanted() const { return shutdown_ != CloseState::kNone; }

  // ---- Control ----
  // Both false with an OpenSSL error code in *err when refused at once.
  bool Renegotiate(unsigned long* err);
  bool NewSessionTicket();
  void SetAlpnProtocols(const unsigned char* wire, size_t len);
  void SetAlpnCallback(bool enabled) { alpn_callback_ = enabled; }
  // Asks the Delegate for pre-shared keys (TLS 1.2 PSK suites, TLS 1.3
  // external PSKs).
  void EnablePsk();
  bool psk_enabled() const { return psk_; }
  // Server: the client showed no certificate and proved itself with a
  // pre-shared key, on this TLS 1.3 handshake (a key pskCallback gave) or on
  // the one that sealed the ticket it resumed with.
  bool PeerProvedByPsk() const;
  // The hint a TLS 1.2 server sends; false if OpenSSL refused it (too long).
  bool SetPskIdentityHint(const std::string& hint);
  void SetVerifyMode(bool request_cert, bool reject_unauthorized);
  void EnableKeylog();
  void EnableCertCb();
  // Ends the pause the SNI callback asked for, serving the certificate of
  // `ctx` if given. False if OpenSSL refused it.
  bool CertCbDone(SSL_CTX* ctx);
  // tlsSocket.setKeyCert(): serve `ctx`'s certificate, key and chain (and
  // check client certificates against its CAs). Servers only, as in node.
  bool UseKeyCert(SSL_CTX* ctx);
  // Client: ask the server for a stapled OCSP response (status_request);
  // kOCSPResponse reports what came. Before Start().
  void RequestOCSP();
  // Server: the OCSP response to staple, given while the certificate
  // callback pauses (before CertCbDone()); sent once.
  void SetOCSPResponse(const unsigned char* data, size_t len);
  // OpenSSL's protocol trace (SSL_trace) of every message from now on, to
  // stderr as node:tls's enableTrace() writes it.
  bool EnableTrace();
  // Client, before Start(): send a key share for `group` alone (a value
  // NegotiatedGroup() gave on an earlier connection to this server),
  // keeping every group of `configured` (the context's group list, empty
  // for OpenSSL's default) in supported_groups. False when the group is not
  // among them or nothing would change.
  bool PredictKeyShare(int group, const std::string& configured);
  // The key exchange group of the finished handshake, as OpenSSL numbers
  // it (a NID, or TLSEXT_nid_unknown | the IANA id); 0 before.
  int NegotiatedGroup() const;
  // The server's sessionIdContext, from which the session id context bound
  // to each ClientHello's server name is derived. `bind_unnamed`: a
  // ClientHello with no server name binds to the empty name too, as the
  // running node:tls does (22.23.5 and 24.22.3 on), rather than to the
  // context as given (node:tls 20 and 26), so that sessions cross between
  // the two servers of a fleet.
  void SetSessionIdContext(const std::string& sid_ctx, bool bind_unnamed);
  // Server: 'newSession' (each new session, holding the handshake until
  // NewSessionDone()) and 'resumeSession' (the ClientHello waits for
  // LoadSession()) listeners. Client: `new_session` turns on kSession, for
  // a 'session' listener; without one no session is encoded or delivered.
  void EnableSessionEvents(bool new_session, bool resume_session);
  // Ends the pause a resumeSession listener asked for, with the session it
  // found (DER, may be empty).
  void LoadSession(const unsigned char* der, size_t len);
  // A 'newSession' listener stored one of the sessions it was handed.
  void NewSessionDone();
  // Server, with a 'newSession' listener: what OpenSSL wrote since it made a
  // session stays here until the listener has stored it (as node:tls does),
  // so a client that reconnects as soon as it can finds the session. Not
  // once the client has closed its side: the program's end() would wait
  // behind it, and a listener that never calls back would keep the
  // connection open for good (node:tls closes it).
  bool output_held() const { return new_sessions_pending_ > 0 && !transport_eof_; }
  // The transport is not the engine's to write on yet: a takeover waits for
  // node's own queued bytes, which must reach the wire first. The handshake
  // runs and reads meanwhile, as node:tls's does (it queues its flight
  // behind those bytes), so what the peer sends is judged, and bounded, by
  // OpenSSL; nothing is flushed, an alert included, and close_notify waits.
  void HoldTransport(bool held) { transport_held_ = held; }
  bool transport_held() const { return transport_held_; }
  void SetUserBuffers(bool enabled) { user_buffers_ = enabled; }

 private:
  // The connection's life: kOpen from the first completed handshake (a
  // renegotiation stays there) until a fatal error or Destroy().
  enum class Phase { kNew, kHandshake, kOpen, kFailed, kDestroyed };
  enum class Pause { kNone, kWaiting, kDone };
  enum class CloseState { kNone, kWanted, kSent };
  struct PendingWrite {
    std::unique_ptr<WriteSource> source;
    size_t piece = 0;   // next piece to encrypt
    size_t offset = 0;  // bytes of that piece already encrypted
    uint64_t id = 0;
    uint64_t seq = 0;  // order of arrival, against kick_seq_
  };
  struct DoneMark {
    uint64_t id;
    uint64_t ciphertext_end;  // complete once this much ciphertext is flushed
  };

  static Engine* FromSSL(const SSL* ssl);
  static void InfoCallback(const SSL* ssl, int where, int ret);
  static int NewSessionCallback(SSL* ssl, SSL_SESSION* session);
  static void KeylogCallback(const SSL* ssl, const char* line);
  static int AlpnSelectCallback(SSL* ssl, const unsigned char** out, unsigned char* outlen,
                                const unsigned char* in, unsigned int inlen, void* arg);
  static int CertCallback(SSL* ssl, void* arg);
  static int NoopCertCallback(SSL* ssl, void* arg);
  static unsigned int PskServerCallback(SSL* ssl, const char* identity, unsigned char* psk,
                                        unsigned int max_psk);
  static unsigned int PskClientCallback(SSL* ssl, const char* hint, char* identity,
                                        unsigned int max_identity, unsigned char* psk,
                                        unsigned int max_psk);
  static bool KeyKeptByOpenSsl(const SSL* ssl);
  static int StatusCallback(SSL* ssl, void* arg);
  static int GenerateTicketCallback(SSL* ssl, void* arg);
  static int ClientHelloCallback(SSL* ssl, int* alert, void* arg);
  static SSL_SESSION* GetSessionCallback(SSL* ssl, const unsigned char* id, int len, int* copy);
  static int VerifyCallback(int preverify_ok, X509_STORE_CTX* ctx);
  void BindSessionsToServerName(std::string_view name);

  // Step() but for what a Destroy() from a Delegate call leaves behind.
  bool Pump(Batch* out);
  // Decrypts one chunk; true if it produced anything.
  bool ClearOut(Batch* out);
  // Encrypts one slice; true if it did.
  bool ClearIn(Batch* out);
  bool RenegotiationUnderway() const;
  static size_t StagedSize(const PendingWrite& w);
  // False when it has to wait (the ask stays queued).
  bool KickHandshake();
  // A failed SSL call: OpenSSL's packed error code (0: none, e.g. a write
  // whose memory was taken away) and the message node:tls would give it.
  struct Failure {
    unsigned long code = 0;
    std::string text;
  };
  static Failure FailureOf(int err);
  void Fail(Failure failure);
  void QueueEvent(EventType type, std::string payload = std::string(), uint64_t value = 0);
  void TakeEvents(Batch* out);
  bool CollectFlushedWrites(Batch* out);
  bool replies_blocked() const {
    return transport_blocked_ && reply_backlog_ >= kReplyBacklogLimit;
  }

  SslPtr ssl_;
  bool is_server_;
  Delegate* delegate_;
  CipherBuffer enc_in_;
  CipherBuffer enc_out_;
  uint64_t flushed_ = 0;
  size_t reply_backlog_ = 0;  // ciphertext reads made while the transport was blocked

  size_t read_fill_ = 0;  // plaintext in the current chunk: the stamp for events
  std::vector<Event> events_;

  Fifo<PendingWrite> writes_;
  Fifo<DoneMark> done_;
  std::vector<char> staging_;
  // A slice SSL_write must be offered again (mid-renegotiation): a copy, so
  // the retry does not depend on memory the embedder may lose meanwhile.
  std::vector<char> retry_;
  bool retrying_ = false;
  bool free_buffers_when_idle_ = true;
  bool record_buffers_held_ = false;

  std::vector<unsigned char> alpn_protos_;  // server: our preference list, wire format
  bool alpn_callback_ = false;
  bool psk_ = false;
  bool psk_key_given_ = false;  // server: pskCallback gave a key OpenSSL kept
  Pause cert_cb_ = Pause::kNone;
  std::string ocsp_response_;  // server: the staple for the status callback
  bool has_ocsp_response_ = false;
  BioPtr trace_bio_;  // stderr, once tracing is on
  // Server session cache outside OpenSSL ('newSession'/'resumeSession'): the
  // ClientHello waits (SSL_CLIENT_HELLO_RETRY) while it is looked up. On a
  // client, new_session_events_ means a 'session' listener.
  bool new_session_events_ = false;
  unsigned new_sessions_pending_ = 0;
  Pause resume_ = Pause::kDone;  // kNone once a listener asks
  SslSessionPtr loaded_session_;
  std::string sid_ctx_;  // the server context's sessionIdContext
  bool bind_unnamed_ = false;
  // The server name of the handshake's first ClientHello ("" for none).
  std::optional<std::string> hello_name_;

  Phase phase_ = Phase::kNew;
  bool reading_ = true;
  bool read_closed_ = false;  // close_notify, EOF or a fatal error queued
  bool transport_eof_ = false;
  bool transport_blocked_ = false;
  bool transport_held_ = false;
  bool keylog_ = false;
  bool user_buffers_ = false;
  CloseState shutdown_ = CloseState::kNone;
  bool kick_handshake_ = false;
  uint64_t write_seq_ = 0;  // writes queued so far
  // Writes queued after a renegotiation or ticket was asked for (seq above
  // this) wait until it has gone out.
  uint64_t kick_seq_ = 0;
  bool ticket_wanted_ = false;
  bool renegotiate_wanted_ = false;
  // A TLS 1.2 client's handshake just finished: the next Step encrypts the
  // writes queued by then before it reads again.
  bool writes_first_ = false;
};

}  // namespace tlswrap

#endif  // TLSWRAP_ENGINE_ENGINE_H_
