// The engine's own tests: two engines joined in memory (pair.h), each
// behaviour checked on what an embedder sees (plaintext, events in order,
// ciphertext leaving).
#include <cstring>

#include "pair.h"

namespace enginetest {
namespace {

constexpr int kTls12 = TLS1_2_VERSION;
constexpr int kTls13 = TLS1_3_VERSION;

// Index of the first event of `type` after index `from`, or -1.
int IndexOf(const Endpoint& e, EventType type, int from = 0) {
  for (size_t i = static_cast<size_t>(from); i < e.events.size(); i++) {
    if (e.events[i].type == type) return static_cast<int>(i);
  }
  return -1;
}

// ---- 1. Handshake and data ----

void HandshakeAndData(int version, size_t chunk) {
  Pair p(version);
  p.chunk = chunk;
  std::string up = Pattern(100000, 1);
  std::string down = Pattern(70000, 2);
  p.client.engine->Start();
  p.server.engine->Start();
  // Queued before the handshake: sent once it is over.
  p.client.Write(up.substr(0, 1000), 1);
  p.Pump();
  CHECK(p.client.engine->established());
  CHECK(p.server.engine->established());
  CHECK_EQ(p.client.Count(EventType::kHandshakeDone), 1u);
  CHECK_EQ(p.server.Count(EventType::kHandshakeDone), 1u);
  CHECK_EQ(SSL_version(p.client.engine->ssl()), version);
  p.client.Write(up.substr(1000, 50000), 2);
  p.server.Write(down.substr(0, 30000));
  p.client.Write(up.substr(51000), 3);
  p.server.Write(down.substr(30000));
  p.Pump();
  CHECK_EQ(p.server.received.size(), up.size());
  CHECK(p.server.received == up);
  CHECK_EQ(p.client.received.size(), down.size());
  CHECK(p.client.received == down);
  // Each write completes, in order.
  std::vector<uint64_t> done;
  for (const Seen& s : p.client.events) {
    if (s.type == EventType::kWriteDone) done.push_back(s.value);
  }
  CHECK(done == (std::vector<uint64_t>{1, 2, 3}));
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
}

TEST(handshake_tls12_data_both_ways) {
  HandshakeAndData(kTls12, static_cast<size_t>(-1));
}
TEST(handshake_tls13_data_both_ways) {
  HandshakeAndData(kTls13, static_cast<size_t>(-1));
}
TEST(handshake_tls12_slow_network) {
  HandshakeAndData(kTls12, 333);
}
TEST(handshake_tls13_slow_network) {
  HandshakeAndData(kTls13, 333);
}

// ---- 2. Coalescing ----

void Coalescing(int version) {
  Pair p(version);
  p.Handshake();
  p.client.data_batches = 0;
  p.client.clear_buffer_calls = 0;
  std::string all;
  for (int i = 0; i < 60; i++) {
    std::string record = Pattern(1024, 100 + i);
    all += record;
    p.server.Write(record);  // one write, one record
  }
  p.server.Run();
  CHECK(p.server.Unsent().size() > 60 * 1024);
  // All 60 records arrive at once.
  CHECK(p.Transfer(p.server, p.client));
  p.client.Run();
  CHECK(p.client.received == all);
  CHECK(p.client.data_batches >= 1);
  CHECK(p.client.data_batches <= 2);
  CHECK(p.client.clear_buffer_calls <= 2);
}

TEST(coalescing_60_records_tls13) {
  Coalescing(kTls13);
}
TEST(coalescing_60_records_tls12) {
  Coalescing(kTls12);
}

// ---- 3. Ordering ----

// The server writes `before`, a ticket and `after`; the client reads all
// of it at once. Returns the plaintext the client had before.
size_t DataTicketData(Pair& p, bool session_listener, const std::string& before,
                      const std::string& after) {
  if (session_listener) p.client.engine->EnableSessionEvents(true, false);
  p.Handshake();
  p.client.events.clear();
  size_t base = p.client.received.size();
  p.server.Write(before);
  CHECK(p.server.engine->NewSessionTicket());
  p.server.Run();
  p.server.Write(after);
  p.server.Run();
  CHECK(p.Transfer(p.server, p.client));
  p.client.data_batches = 0;
  p.client.Run();
  CHECK(p.client.received.substr(base) == before + after);
  return base;
}

// One read takes the data up to the ticket, and the session ends that batch
// (nothing after it is read until it is delivered); the rest is the next.
TEST(session_event_between_data_it_came_between) {
  Pair p(kTls13);
  std::string before = Pattern(100, 3);
  size_t base = DataTicketData(p, true, before, Pattern(200, 4));
  CHECK_EQ(p.client.data_batches, 2u);
  const Seen* session = p.client.Find(EventType::kSession);
  CHECK(session != nullptr);
  CHECK_EQ(session->at, base + before.size());
  CHECK_EQ(p.client.Count(EventType::kSession), 1u);
}

// With no 'session' listener the client encodes and delivers no session,
// and the ticket does not split the data around it into two batches.
TEST(no_session_event_unless_asked) {
  Pair p(kTls13);
  DataTicketData(p, false, Pattern(100, 3), Pattern(200, 4));
  CHECK_EQ(p.client.data_batches, 1u);
  CHECK_EQ(p.client.Count(EventType::kSession), 0u);
  // The session is still there to be read.
  CHECK(SSL_SESSION_is_resumable(SSL_get_session(p.client.engine->ssl())) == 1);
}

// Two tickets read at once: as each session is delivered, the client's SSL
// holds that session, not the next one (what getSession() reads), and a
// transport EOF behind them waits for everything before it.
std::string Der(SSL_SESSION* session) {
  int len = i2d_SSL_SESSION(session, nullptr);
  CHECK(len > 0);
  std::string der(static_cast<size_t>(len), '\0');
  auto* p = reinterpret_cast<unsigned char*>(&der[0]);
  i2d_SSL_SESSION(session, &p);
  return der;
}

TEST(each_session_is_the_live_one_when_delivered) {
  Pair p(kTls13);
  p.client.engine->EnableSessionEvents(true, false);  // a 'session' listener
  p.Handshake();
  p.client.events.clear();
  size_t base = p.client.received.size();
  std::string data = Pattern(300, 6);
  CHECK(p.server.engine->NewSessionTicket());
  p.server.Run();
  CHECK(p.server.engine->NewSessionTicket());
  p.server.Run();
  p.server.Write(data);
  p.server.Run();
  CHECK(p.Transfer(p.server, p.client));
  p.client.engine->ReceiveEOF();
  size_t matched = 0;
  p.client.on_event = [&](const Seen& s) {
    if (s.type != EventType::kSession) return;
    CHECK(s.payload == Der(SSL_get_session(p.client.engine->ssl())));
    matched++;
  };
  p.client.Run();
  CHECK_EQ(matched, 2u);
  CHECK(p.client.received.substr(base) == data);
  const Seen* end = p.client.Find(EventType::kEnd);
  CHECK(end != nullptr);
  CHECK_EQ(end->at, base + data.size());
  CHECK(p.client.events.back().type == EventType::kEnd);
}

// A write that reaches the engine after the ticket was asked for, before
// the engine ran again (both from one JS handler), goes out behind it.
TEST(write_queued_after_ticket_request_goes_behind_it) {
  Pair p(kTls13);
  p.client.engine->EnableSessionEvents(true, false);  // a 'session' listener
  p.Handshake();
  p.client.events.clear();
  std::string after = Pattern(200, 5);
  size_t base = p.client.received.size();
  CHECK(p.server.engine->NewSessionTicket());
  p.server.Write(after);
  p.server.Run();
  CHECK(p.Transfer(p.server, p.client));
  p.client.Run();
  CHECK(p.client.received.substr(base) == after);
  const Seen* session = p.client.Find(EventType::kSession);
  CHECK(session != nullptr);
  CHECK_EQ(session->at, base);
}

TEST(end_after_all_data_on_close_notify) {
  Pair p(kTls13);
  p.Handshake();
  std::string tail = Pattern(40000, 5);
  p.server.Write(tail, 1);
  p.server.engine->Shutdown();
  p.Pump();
  CHECK(p.client.received == tail);
  const Seen* end = p.client.Find(EventType::kEnd);
  CHECK(end != nullptr);
  CHECK_EQ(end->at, tail.size());
  CHECK(p.client.events.back().type == EventType::kEnd);
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK_EQ(p.server.Count(EventType::kShutdown), 1u);
  CHECK_EQ(p.server.Count(EventType::kWriteDone), 1u);
}

// A transport reads on after the read side is closed (to see the peer's
// FIN); whatever a peer sends then must not pile up in enc_in.
void FloodAfterReadClosed(bool by_error) {
  Pair p(kTls13);
  p.Handshake();
  if (by_error) {
    p.client.engine->TransportError(104, "read");
  } else {
    p.server.engine->Shutdown();
  }
  p.Pump();
  CHECK(p.client.Find(by_error ? EventType::kTransportError : EventType::kEnd) != nullptr);
  std::string junk(64 * 1024, '\x17');
  for (int i = 0; i < 64; i++) {
    CHECK(p.client.engine->WantsInput() || by_error);
    p.client.engine->enc_in().Append(junk.data(), junk.size());
    p.client.Run();
    CHECK(p.client.engine->enc_in().empty());
  }
  CHECK(p.client.received.empty());
}

TEST(input_after_close_notify_is_dropped) {
  FloodAfterReadClosed(false);
}

TEST(input_after_transport_error_is_dropped) {
  FloodAfterReadClosed(true);
}

// As node:tls: a transport write that fails once shutdown was asked for,
// with no write of the embedder's outstanding, lost only our close_notify;
// no error, and the read side still reports its own.
TEST(write_error_after_shutdown_is_not_an_error) {
  Pair p(kTls13);
  p.Handshake();
  p.client.engine->Shutdown();
  p.client.Run();
  CHECK_EQ(p.client.Count(EventType::kShutdown), 1u);
  p.client.engine->TransportWriteError(32);
  p.client.Run();
  CHECK(p.client.Find(EventType::kTransportError) == nullptr);
  p.client.engine->TransportError(104, "read");
  p.client.Run();
  const Seen* error = p.client.Find(EventType::kTransportError);
  CHECK(error != nullptr);
  CHECK_EQ(error->value, 104u);
  CHECK(error->payload == "read");
}

// Before shutdown, or with a write whose ciphertext it lost, it is one.
TEST(write_error_before_shutdown_or_losing_a_write_is_an_error) {
  for (bool shutdown : {false, true}) {
    Pair p(kTls13);
    p.Handshake();
    p.client.auto_flush = false;
    if (shutdown) {
      p.client.Write("lost", 7);
      p.client.engine->Shutdown();
    }
    p.client.Run();
    p.client.engine->TransportWriteError(32);
    p.client.Run();
    const Seen* error = p.client.Find(EventType::kTransportError);
    CHECK(error != nullptr);
    CHECK_EQ(error->value, 32u);
    CHECK(error->payload == "write");
    CHECK(p.client.Find(EventType::kWriteDone) == nullptr);
  }
}

// ---- 4. Write completion ----

TEST(write_done_only_once_ciphertext_is_flushed) {
  Pair p(kTls13);
  p.Handshake();
  Endpoint& c = p.client;
  c.auto_flush = false;
  uint64_t start = c.taken;
  c.Write(Pattern(100000, 6), 1);
  c.Run();
  uint64_t end1 = c.taken;
  c.Write(Pattern(3000, 7), 2);
  c.Run();
  uint64_t end2 = c.taken;
  CHECK(end1 > start + 100000);
  CHECK(end2 > end1);
  CHECK_EQ(c.Count(EventType::kWriteDone), 0u);
  // All but the last byte of write 1 flushed: not done yet.
  c.engine->SetFlushed(end1 - 1);
  c.Run();
  CHECK_EQ(c.Count(EventType::kWriteDone), 0u);
  c.engine->SetFlushed(end1);
  c.Run();
  CHECK_EQ(c.Count(EventType::kWriteDone), 1u);
  CHECK_EQ(c.Find(EventType::kWriteDone)->value, 1u);
  c.engine->SetFlushed(end2 - 1);
  c.Run();
  CHECK_EQ(c.Count(EventType::kWriteDone), 1u);
  c.engine->SetFlushed(end2);
  c.Run();
  CHECK_EQ(c.Count(EventType::kWriteDone), 2u);
  CHECK_EQ(c.events.back().value, 2u);
  p.Pump();
  CHECK_EQ(p.server.received.size(), 103000u);
}

// ---- 5. Detached memory ----

// A write whose memory the embedder can take away (a detached ArrayBuffer).
class DetachableSource : public tlswrap::WriteSource {
 public:
  DetachableSource(std::vector<std::string> pieces, std::shared_ptr<std::vector<bool>> gone)
      : pieces_(std::move(pieces)), gone_(std::move(gone)) {}
  size_t count() const override { return pieces_.size(); }
  size_t size(size_t i) const override { return pieces_[i].size(); }
  bool Get(size_t i, const char** data) override {
    if ((*gone_)[i]) return false;
    *data = pieces_[i].data();
    return true;
  }

 private:
  std::vector<std::string> pieces_;
  std::shared_ptr<std::vector<bool>> gone_;
};

void CheckGone(const Endpoint& e, uint64_t id) {
  int gone = IndexOf(e, EventType::kWriteGone);
  CHECK(gone >= 0);
  CHECK_EQ(e.events[gone].value, id);
  CHECK(IndexOf(e, EventType::kError, gone) > gone);
  for (const Seen& s : e.events) CHECK(!(s.type == EventType::kWriteDone && s.value == id));
}

TEST(write_memory_gone_before_handshake) {
  Pair p(kTls13);
  auto gone = std::make_shared<std::vector<bool>>(1, false);
  p.client.engine->Start();
  p.server.engine->Start();
  p.client.engine->Write(
      std::make_unique<DetachableSource>(std::vector<std::string>{Pattern(5000, 8)}, gone), 9);
  (*gone)[0] = true;
  p.Pump();
  CheckGone(p.client, 9);
  CHECK(p.server.received.empty());
}

// EncryptQueuedWrite() also runs for a live connection (the binding sends a
// reply from inside a 'data' handler at once): what it finds wrong must
// still come out of the next Step(), not be dropped.
TEST(write_memory_gone_found_by_encrypt_queued_write) {
  Pair p(kTls13);
  p.Handshake();
  auto gone = std::make_shared<std::vector<bool>>(1, true);
  p.client.engine->Write(
      std::make_unique<DetachableSource>(std::vector<std::string>{Pattern(100, 12)}, gone), 4);
  CHECK(!p.client.engine->EncryptQueuedWrite());
  p.client.Run();
  CheckGone(p.client, 4);
}

TEST(write_memory_gone_while_transport_blocked) {
  Pair p(kTls13);
  p.Handshake();
  auto gone = std::make_shared<std::vector<bool>>(3, false);
  std::vector<std::string> pieces{Pattern(100, 9), Pattern(100, 10), Pattern(20000, 11)};
  p.client.engine->SetTransportBlocked(true);
  p.client.engine->Write(std::make_unique<DetachableSource>(pieces, gone), 4);
  p.client.Run();
  (*gone)[1] = true;
  p.client.engine->SetTransportBlocked(false);
  p.Pump();
  CheckGone(p.client, 4);
  // Nothing of the pieces that were gone (or came after them).
  CHECK(p.server.received.size() <= pieces[0].size());
  CHECK(pieces[0].compare(0, p.server.received.size(), p.server.received) == 0);
}

// ---- 6. KeyUpdate flood from a peer that never reads ----

TEST(key_update_flood_stops_reading_while_blocked) {
  Pair p(kTls13);
  p.Handshake();
  p.chunk = 4096;
  Endpoint& s = p.server;
  s.engine->SetTransportBlocked(true);
  // The client asks for a KeyUpdate reply again and again and never reads.
  // A byte of data after each keeps OpenSSL's limit on consecutive
  // KeyUpdates out of the way.
  SSL* peer = p.client.engine->ssl();
  const int kUpdates = 3000;
  std::string sent;
  for (int i = 0; i < kUpdates; i++) {
    CHECK(SSL_key_update(peer, SSL_KEY_UPDATE_REQUESTED) == 1);
    char byte = static_cast<char>('a' + i % 26);
    CHECK(SSL_write(peer, &byte, 1) == 1);
    sent.push_back(byte);
  }
  ERR_clear_error();
  p.client.TakeCipher();
  uint64_t before = s.taken;
  for (int i = 0; i < 10000 && p.Transfer(p.client, s); i++) s.Run();
  uint64_t replies = s.taken - before;
  CHECK(!s.engine->WantsInput());
  CHECK(!p.client.Unsent().empty());
  CHECK(replies >= Engine::kReplyBacklogLimit);
  // At most one read past the limit: one chunk's worth of KeyUpdates.
  CHECK(replies <= Engine::kReplyBacklogLimit + p.chunk);
  CHECK(sent.compare(0, s.received.size(), s.received) == 0);
  // Drained: reading resumes and everything arrives.
  s.engine->SetTransportBlocked(false);
  CHECK(s.engine->WantsInput());
  p.Pump();
  CHECK(s.received == sent);
  CHECK(s.Find(EventType::kError) == nullptr);
}

// ---- 7. Partial records ----

void Trickle(int version) {
  Pair p(version);
  p.Handshake();
  Endpoint& c = p.client;
  c.data_batches = 0;
  c.clear_buffer_calls = 0;
  std::string all;
  for (size_t len : {5000, 5000, 5000, 20000}) {
    std::string data = Pattern(len, static_cast<uint32_t>(len + all.size()));
    all += data;
    p.server.Write(data);
  }
  p.server.Run();
  p.chunk = 1;
  while (p.Transfer(p.server, c)) c.Run();
  CHECK(c.received == all);
  // 5 records (the last write is two): one chunk of memory for each, asked
  // for once the record was decrypted.
  CHECK_EQ(c.data_batches, 5u);
  CHECK_EQ(c.clear_buffer_calls, 5u);
}

TEST(trickled_records_ask_for_memory_once_each_tls13) {
  Trickle(kTls13);
}
TEST(trickled_records_ask_for_memory_once_each_tls12) {
  Trickle(kTls12);
}

// ---- 8. Destroy ----

TEST(destroy_stops_everything) {
  Pair p(kTls13);
  p.Handshake();
  p.server.Write(Pattern(30000, 12));
  p.server.Run();
  p.Transfer(p.server, p.client);
  p.client.Write(Pattern(30000, 13));
  // Encrypted but not yet taken by the transport: Destroy() drops it.
  for (int i = 0; i < 10 && p.client.engine->enc_out().empty(); i++) {
    tlswrap::Batch step;
    p.client.engine->Step(&step);
  }
  CHECK(!p.client.engine->enc_out().empty());
  p.client.engine->Shutdown();
  p.client.engine->Destroy();
  // Gone at once, not at the next Step(): an embedder may flush in between.
  CHECK(p.client.engine->enc_out().empty());
  tlswrap::Batch batch;
  CHECK(!p.client.engine->Step(&batch));
  CHECK(batch.empty());
  CHECK(p.client.engine->enc_out().empty());
  CHECK(!p.client.engine->WantsInput());
}

void DestroyInClearBuffer(size_t len) {
  Pair p(kTls13);
  p.Handshake();
  Endpoint& c = p.client;
  size_t events = 0;
  size_t received = 0;
  uint64_t taken = 0;
  c.on_clear_buffer = [&] {
    c.engine->Destroy();
    events = c.events.size();
    received = c.received.size();
    taken = c.taken;
  };
  p.server.Write(Pattern(len, 15));
  p.server.Run();
  CHECK(p.Transfer(p.server, c));
  c.Write(Pattern(1000, 14));  // would go out after the read
  p.Pump();
  CHECK_EQ(c.clear_buffer_calls, 1u);
  CHECK_EQ(c.received.size(), received);
  CHECK_EQ(c.events.size(), events);
  CHECK_EQ(c.taken, taken);
  CHECK(c.engine->enc_out().empty());
  CHECK(p.server.received.empty());
}

// Small: decrypted first, memory asked for after. Large: asked for first.
TEST(destroy_in_clear_buffer_small_read) {
  DestroyInClearBuffer(100);
}
TEST(destroy_in_clear_buffer_large_read) {
  DestroyInClearBuffer(60000);
}

TEST(destroy_in_select_alpn_sends_nothing) {
  Pair p(kTls13);
  Endpoint& s = p.server;
  s.engine->SetAlpnCallback(true);
  static const unsigned char kProtos[] = "\x02h2\x08http/1.1";
  p.client.engine->SetAlpnProtocols(kProtos, sizeof(kProtos) - 1);
  int calls = 0;
  size_t events = 0;
  uint64_t taken = 0;
  s.on_select_alpn = [&](const unsigned char*, unsigned int) {
    calls++;
    s.engine->Destroy();
    events = s.events.size();
    taken = s.taken;
    return 0;
  };
  p.client.engine->Start();
  s.engine->Start();
  p.Pump();
  CHECK_EQ(calls, 1);
  CHECK_EQ(s.events.size(), events);
  CHECK_EQ(s.taken, taken);  // not even an alert
  CHECK(s.engine->enc_out().empty());
  tlswrap::Batch batch;
  CHECK(!s.engine->Step(&batch));
  CHECK(p.client.received.empty());
  CHECK(!p.client.engine->established());
}

TEST(destroy_in_select_alpn_after_choosing) {
  // Destroyed, yet answering with a valid protocol: still nothing leaves.
  Pair p(kTls12);
  Endpoint& s = p.server;
  s.engine->SetAlpnCallback(true);
  static const unsigned char kProtos[] = "\x02h2";
  p.client.engine->SetAlpnProtocols(kProtos, sizeof(kProtos) - 1);
  size_t events = 0;
  uint64_t taken = 0;
  s.on_select_alpn = [&](const unsigned char*, unsigned int) {
    s.engine->Destroy();
    events = s.events.size();
    taken = s.taken;
    return 0;
  };
  p.client.engine->Start();
  s.engine->Start();
  p.Pump();
  CHECK_EQ(s.events.size(), events);
  CHECK_EQ(s.taken, taken);
  CHECK(s.engine->enc_out().empty());
}

// ---- PSK: the Delegate answers on OpenSSL's stack ----

const std::string kPsk("\xd7\x31\xef\x57\xbe\x09\xe5\x20\x4f\x0b\x20\x5b\x60\x62\x70\x28", 16);

// Both sides use PSK; the server accepts `client1` only. Records what the
// callbacks were given.
struct PskPair {
  explicit PskPair(int version) : p(version) {
    if (version == kTls12) {
      CHECK(SSL_set_cipher_list(p.client.engine->ssl(), "PSK-AES128-CBC-SHA256") == 1);
      CHECK(SSL_set_cipher_list(p.server.engine->ssl(), "PSK-AES128-CBC-SHA256") == 1);
    } else {
      // A server with a certificate picks its preferred suite, and the PSK
      // (SHA-256, as TLS 1.3 defines one given without a hash) is only
      // used under a suite of that hash.
      CHECK(SSL_set_ciphersuites(p.server.engine->ssl(), "TLS_AES_128_GCM_SHA256") == 1);
    }
    p.client.engine->EnablePsk();
    p.server.engine->EnablePsk();
    p.server.on_psk_server = [this](const char* identity, unsigned char* psk, unsigned int max) {
      server_calls++;
      seen_identity = identity;
      if (seen_identity != "client1" || max < kPsk.size()) return 0u;
      std::memcpy(psk, kPsk.data(), kPsk.size());
      return static_cast<unsigned int>(kPsk.size());
    };
    p.client.on_psk_client = [this](const char* hint, char* identity, unsigned int max_identity,
                                    unsigned char* psk, unsigned int max) {
      client_calls++;
      seen_hint = hint != nullptr ? hint : "(null)";
      CHECK(max_identity >= 7 && max >= kPsk.size());
      std::memcpy(identity, "client1", 7);
      std::memcpy(psk, kPsk.data(), kPsk.size());
      return static_cast<unsigned int>(kPsk.size());
    };
  }
  Pair p;
  int server_calls = 0;
  int client_calls = 0;
  std::string seen_identity;
  std::string seen_hint;
};

void PskHandshakeAndData(int version) {
  PskPair pp(version);
  Pair& p = pp.p;
  CHECK(p.server.engine->SetPskIdentityHint("hint1"));
  p.Handshake();
  CHECK(p.client.engine->established());
  CHECK(p.server.engine->established());
  CHECK_EQ(pp.server_calls, 1);
  CHECK(pp.client_calls >= 1);
  CHECK(pp.seen_identity == "client1");
  // TLS 1.3 has no hint: OpenSSL asks the client before it has heard from
  // the server.
  CHECK(pp.seen_hint == (version == kTls12 ? "hint1" : "(null)"));
  // No certificate was needed.
  CHECK(SSL_get0_peer_certificate(p.client.engine->ssl()) == nullptr);
  CHECK_EQ(SSL_session_reused(p.client.engine->ssl()), version == kTls13 ? 1 : 0);
  if (version == kTls12) {
    CHECK_EQ(SSL_CIPHER_get_auth_nid(SSL_get_current_cipher(p.client.engine->ssl())), NID_auth_psk);
  }
  std::string up = Pattern(20000, 3);
  std::string down = Pattern(30000, 4);
  p.client.Write(up);
  p.server.Write(down);
  p.Pump();
  CHECK(p.server.received == up);
  CHECK(p.client.received == down);
}

TEST(psk_tls12_handshake_and_data) {
  PskHandshakeAndData(kTls12);
}
TEST(psk_tls13_handshake_and_data) {
  PskHandshakeAndData(kTls13);
}

TEST(psk_unknown_identity_fails_both_sides_tls12) {
  PskPair pp(kTls12);
  Pair& p = pp.p;
  p.client.on_psk_client = [](const char*, char* identity, unsigned int, unsigned char* psk,
                              unsigned int) {
    std::memcpy(identity, "nobody", 6);
    std::memcpy(psk, kPsk.data(), kPsk.size());
    return static_cast<unsigned int>(kPsk.size());
  };
  p.client.engine->Start();
  p.server.engine->Start();
  p.Pump();
  CHECK(pp.seen_identity == "nobody");
  CHECK(!p.client.engine->established());
  CHECK(!p.server.engine->established());
  const Seen* s = p.server.Find(EventType::kError);
  const Seen* c = p.client.Find(EventType::kError);
  CHECK(s != nullptr && c != nullptr);
  CHECK_EQ(ERR_GET_REASON(s->value), SSL_R_PSK_IDENTITY_NOT_FOUND);
  CHECK_EQ(ERR_GET_REASON(c->value), SSL_R_TLSV1_ALERT_UNKNOWN_PSK_IDENTITY);
  // The error's text is OpenSSL's printed line for it, one line.
  CHECK(s->payload.find(":error:0A0000DF:SSL routines:") != std::string::npos);
  CHECK(s->payload.find("psk identity not found") != std::string::npos);
  CHECK_EQ(s->payload.find('\n'), s->payload.size() - 1);
}

TEST(psk_key_longer_than_allowed_is_refused) {
  PskPair pp(kTls12);
  Pair& p = pp.p;
  p.server.on_psk_server = [](const char*, unsigned char*, unsigned int max) { return max + 1; };
  p.client.engine->Start();
  p.server.engine->Start();
  p.Pump();
  CHECK(!p.server.engine->established());
  const Seen* s = p.server.Find(EventType::kError);
  CHECK(s != nullptr);
  CHECK_EQ(ERR_GET_REASON(s->value), SSL_R_PSK_IDENTITY_NOT_FOUND);
}

TEST(psk_identity_hint_too_long_is_refused) {
  PskPair pp(kTls12);
  CHECK(pp.p.server.engine->SetPskIdentityHint(std::string(PSK_MAX_IDENTITY_LEN, 'h')));
  CHECK(!pp.p.server.engine->SetPskIdentityHint(std::string(PSK_MAX_IDENTITY_LEN + 1, 'h')));
  CHECK_EQ(ERR_peek_error(), 0ul);
}

void DestroyInPsk(int version, bool server) {
  PskPair pp(version);
  Pair& p = pp.p;
  Endpoint& e = server ? p.server : p.client;
  int calls = 0;
  size_t events = 0;
  uint64_t taken = 0;
  auto destroy = [&]() {
    calls++;
    e.engine->Destroy();
    events = e.events.size();
    taken = e.taken;
  };
  // Destroyed, yet answering with the right key: nothing more leaves.
  auto server_cb = p.server.on_psk_server;
  auto client_cb = p.client.on_psk_client;
  if (server) {
    p.server.on_psk_server = [&](const char* identity, unsigned char* psk, unsigned int max) {
      destroy();
      return server_cb(identity, psk, max);
    };
  } else {
    p.client.on_psk_client = [&](const char* hint, char* identity, unsigned int max_identity,
                                 unsigned char* psk, unsigned int max) {
      destroy();
      return client_cb(hint, identity, max_identity, psk, max);
    };
  }
  p.client.engine->Start();
  p.server.engine->Start();
  p.Pump();
  CHECK_EQ(calls, 1);
  CHECK_EQ(e.events.size(), events);
  CHECK_EQ(e.taken, taken);  // not even an alert
  CHECK(e.engine->enc_out().empty());
  tlswrap::Batch batch;
  CHECK(!e.engine->Step(&batch));
  Endpoint& peer = server ? p.client : p.server;
  CHECK(!peer.engine->established());
  CHECK(peer.received.empty());
}

TEST(destroy_in_psk_server_sends_nothing_tls12) {
  DestroyInPsk(kTls12, true);
}
TEST(destroy_in_psk_server_sends_nothing_tls13) {
  DestroyInPsk(kTls13, true);
}
TEST(destroy_in_psk_client_sends_nothing_tls12) {
  DestroyInPsk(kTls12, false);
}
TEST(destroy_in_psk_client_sends_nothing_tls13) {
  DestroyInPsk(kTls13, false);
}

// A renegotiation's PSK callback runs under SSL_write when the server's
// reading is paused (SSL_write drives the handshake, and on the server it
// completes there), and the callback writes: the write queue grows under
// ClearIn, which must not go on with a pointer into the queue's old memory
// (ASan: heap-use-after-free).
TEST(write_from_psk_callback_under_ssl_write_tls12) {
  PskPair pp(kTls12);
  Pair& p = pp.p;
  p.Handshake();
  bool renegotiating = false;
  int writes_in_callback = 0;
  std::string down = "first";
  auto server_cb = p.server.on_psk_server;
  p.server.on_psk_server = [&](const char* identity, unsigned char* psk, unsigned int max) {
    if (renegotiating && writes_in_callback == 0) {
      for (int i = 0; i < 64; i++) {
        std::string chunk = Pattern(100, 50 + i);
        down += chunk;
        p.server.Write(chunk, 10 + i);
        writes_in_callback++;
      }
    }
    return server_cb(identity, psk, max);
  };
  renegotiating = true;
  unsigned long err = 0;
  CHECK(p.client.engine->Renegotiate(&err));
  // ClientHello, the server's flight, the client's second flight: it waits,
  // unread, at the server.
  p.client.Run();
  CHECK(p.Transfer(p.client, p.server));
  p.server.Run();
  CHECK(p.Transfer(p.server, p.client));
  p.client.Run();
  CHECK(p.Transfer(p.client, p.server));
  CHECK_EQ(writes_in_callback, 0);
  p.server.engine->SetReading(false);
  p.server.Write("first", 1);
  p.server.Run();
  CHECK_EQ(writes_in_callback, 64);
  p.server.engine->SetReading(true);
  p.Pump();
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
  CHECK(p.client.received == down);
  CHECK_EQ(p.server.Count(EventType::kWriteDone), 65u);
  CHECK(!SSL_in_init(p.server.engine->ssl()));
}

// A write of small pieces (an HTTP response's head and body) is staged in a
// block of its own size, not of a whole write slice: that block was made
// and freed again for every keep-alive request. Reading is paused with input
// waiting, so the engine is not idle and keeps the block to be looked at.
void SmallWriteStagesItsSize(int version) {
  Pair p(version);
  p.Handshake();
  p.client.Write("request", 1);
  p.client.Run();
  CHECK(p.Transfer(p.client, p.server));
  p.server.engine->SetReading(false);
  std::string head = Pattern(150, 7);
  std::string body = Pattern(1024, 8);
  p.server.engine->Write(
      std::make_unique<tlswrap::OwnedWriteSource>(std::vector<std::string>{head, body}), 2);
  p.server.Run();
  CHECK(p.server.engine->staging_capacity() >= head.size() + body.size());
  CHECK(p.server.engine->staging_capacity() < 4096);
  p.server.engine->SetReading(true);
  p.Pump();
  CHECK(p.server.received == "request");
  CHECK(p.client.received == head + body);
  CHECK_EQ(p.server.Count(EventType::kWriteDone), 1u);
}

TEST(small_write_stages_its_size_tls12) {
  SmallWriteStagesItsSize(kTls12);
}
TEST(small_write_stages_its_size_tls13) {
  SmallWriteStagesItsSize(kTls13);
}

// The lengths of the application-data records in `wire` from `from` on.
std::vector<size_t> RecordLengths(const std::string& wire, size_t from) {
  std::vector<size_t> out;
  size_t at = from;
  while (at + 5 <= wire.size()) {
    size_t len =
        (static_cast<unsigned char>(wire[at + 3]) << 8) | static_cast<unsigned char>(wire[at + 4]);
    if (static_cast<unsigned char>(wire[at]) == 23) out.push_back(len);
    at += 5 + len;
  }
  return out;
}

// HTTP/2's writes: a 9-byte frame header before each payload. The header and
// the start of the payload after it share a record, so the records are full
// (each header alone was a record of its own), and no more than a record of
// each payload is copied to get there. The records, made one SSL_write each,
// still leave together: one take of ciphertext, not one per record.
void FrameHeadersShareRecords(int version) {
  Pair p(version);
  p.Handshake();
  p.server.tap = true;
  p.server.cipher_takes = 0;
  std::vector<std::string> pieces;
  std::string expected;
  for (uint32_t i = 0; i < 8; i++) {
    pieces.push_back(Pattern(9, 100 + i));
    pieces.push_back(Pattern(16384, 200 + i));
    expected += pieces[pieces.size() - 2] + pieces.back();
  }
  p.server.engine->Write(std::make_unique<tlswrap::OwnedWriteSource>(std::move(pieces)), 3);
  p.Pump();
  CHECK(p.client.received == expected);
  CHECK_EQ(p.server.Count(EventType::kWriteDone), 1u);
  std::vector<size_t> records = RecordLengths(p.server.tapped, 0);
  // 8 * 16393 bytes: 8 full records and one of 72 bytes (each record adds
  // the same overhead: AEAD tag, explicit nonce or content type).
  CHECK_EQ(records.size(), 9u);
  size_t sum = 0;
  for (size_t len : records) sum += len;
  CHECK_EQ((sum - expected.size()) % records.size(), 0u);
  const size_t overhead = (sum - expected.size()) / records.size();
  size_t full = 0;
  for (size_t len : records) full += len - overhead == 16384 ? 1 : 0;
  CHECK_EQ(full, 8u);
  CHECK_EQ(p.server.cipher_takes, 1u);
}

TEST(frame_headers_share_records_tls12) {
  FrameHeadersShareRecords(kTls12);
}
TEST(frame_headers_share_records_tls13) {
  FrameHeadersShareRecords(kTls13);
}

// ---- 9. Garbage ----

TEST(garbage_to_server_is_an_error_not_a_crash) {
  for (uint32_t seed = 1; seed <= 50; seed++) {
    Pair p(0);
    p.server.engine->Start();
    // More than any record header can announce, so OpenSSL decides.
    std::string junk = Pattern(70000, 1000 + seed);
    p.server.engine->enc_in().Append(junk.data(), junk.size());
    p.server.Run();
    const Seen* error = p.server.Find(EventType::kError);
    CHECK(error != nullptr);
    CHECK(error->value != 0);
    CHECK(p.server.received.empty());
    CHECK(!p.server.engine->established());
  }
}

TEST(garbage_after_handshake_is_an_error) {
  for (uint32_t seed = 1; seed <= 20; seed++) {
    Pair p(seed % 2 ? kTls13 : kTls12);
    p.Handshake();
    p.server.Write("before");
    p.Pump();
    std::string junk = Pattern(70000, 2000 + seed);
    p.client.engine->enc_in().Append(junk.data(), junk.size());
    p.client.Run();
    const Seen* error = p.client.Find(EventType::kError);
    CHECK(error != nullptr);
    CHECK(error->value != 0);
    CHECK(p.client.received == "before");
  }
}

// ---- 10. Renegotiation ----

TEST(renegotiation_tls12_with_data_both_ways) {
  Pair p(kTls12);
  p.Handshake();
  p.chunk = 1000;
  std::string up;
  std::string down;
  auto send = [&](uint32_t seed) {
    std::string u = Pattern(7000, seed);
    std::string d = Pattern(9000, seed + 1000);
    up += u;
    down += d;
    p.client.Write(u);
    p.server.Write(d);
  };
  send(1);
  unsigned long err = 0;
  CHECK(p.client.engine->Renegotiate(&err));
  CHECK_EQ(err, 0ul);
  send(2);
  // A few hops only, so data is in flight while the handshake runs.
  for (int i = 0; i < 3; i++) {
    p.client.Run();
    p.server.Run();
    p.Transfer(p.client, p.server);
    p.Transfer(p.server, p.client);
    send(10 + i);
  }
  p.Pump();
  send(20);
  p.Pump();
  CHECK(p.server.received == up);
  CHECK(p.client.received == down);
  CHECK_EQ(p.client.Count(EventType::kHandshakeDone), 2u);
  CHECK_EQ(p.server.Count(EventType::kHandshakeDone), 2u);
  CHECK(!SSL_renegotiate_pending(p.client.engine->ssl()));
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
}

TEST(renegotiation_refused_on_tls13) {
  Pair p(kTls13);
  p.Handshake();
  unsigned long err = 0;
  CHECK(!p.client.engine->Renegotiate(&err));
  CHECK(err != 0);
}

// The server renegotiates and ends as soon as its handshake is done: its
// Finished, HelloRequest and close_notify reach the client in one read. What
// the client writes when told of its handshake goes out before OpenSSL
// reads the HelloRequest (as node:tls's 'secureConnect' write does), not
// behind a renegotiation the server will never finish.
TEST(write_at_handshake_done_goes_before_a_hello_request_behind_it_tls12) {
  Pair p(kTls12);
  p.client.engine->Start();
  p.server.engine->Start();
  for (int i = 0; i < 100 && !p.server.engine->established(); i++) {
    p.client.Run();
    p.Transfer(p.client, p.server);
    p.server.Run();
    if (!p.server.engine->established()) p.Transfer(p.server, p.client);
  }
  CHECK(p.server.engine->established());
  CHECK(!p.client.engine->established());
  unsigned long err = 0;
  CHECK(p.server.engine->Renegotiate(&err));
  p.server.engine->Shutdown();
  p.server.Run();
  p.client.on_event = [&](const Seen& seen) {
    if (seen.type == EventType::kHandshakeDone) p.client.Write("at handshake done", 7);
  };
  CHECK(p.Transfer(p.server, p.client));
  p.client.Run();
  const Seen* done = p.client.Find(EventType::kWriteDone);
  CHECK(done != nullptr);
  CHECK_EQ(done->value, 7u);
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.client.Find(EventType::kEnd) != nullptr);
  p.Transfer(p.client, p.server);
  p.server.Run();
  CHECK(p.server.received == "at handshake done");
}

// ---- Found by fuzzing (fuzz/) ----

// An empty write (socket.write('')) is a write like any other: it completes
// and the connection goes on.
void EmptyWrite(int version) {
  Pair p(version);
  p.Handshake();
  p.client.Write("", 1);
  p.client.engine->Write(
      std::make_unique<tlswrap::OwnedWriteSource>(std::vector<std::string>{"", "", ""}), 2);
  p.client.Write("after", 3);
  p.Pump();
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
  CHECK(p.server.received == "after");
  CHECK_EQ(p.client.Count(EventType::kWriteDone), 3u);
}

TEST(empty_write_tls12) {
  EmptyWrite(kTls12);
}
TEST(empty_write_tls13) {
  EmptyWrite(kTls13);
}

// A renegotiation asked for while one is still under way: the one under way
// serves, and data keeps flowing (a second SSL_renegotiate() left the client
// in init with no ClientHello sent, its writes stuck).
TEST(renegotiate_while_renegotiating_tls12) {
  Pair p(kTls12);
  p.Handshake();
  unsigned long err = 0;
  CHECK(p.client.engine->Renegotiate(&err));
  p.client.Write(std::string(10000, 'a'), 1);
  p.client.Run();
  p.server.Run();
  // The ClientHello reaches the server; the client has no answer yet.
  p.Transfer(p.client, p.server);
  p.server.Run();
  CHECK(SSL_renegotiate_pending(p.client.engine->ssl()));
  CHECK(p.client.engine->Renegotiate(&err));
  p.client.Write(std::string(10000, 'b'), 2);
  p.Pump();
  CHECK(p.server.received == std::string(10000, 'a') + std::string(10000, 'b'));
  CHECK_EQ(p.client.Count(EventType::kWriteDone), 2u);
  CHECK(!SSL_in_init(p.client.engine->ssl()));
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
}

// Both ends ask at once: the server's HelloRequest reaches the client
// after its renegotiate() but before it ran. The renegotiation the
// HelloRequest starts serves; a second SSL_renegotiate() on top of it left
// the client in init afterwards, its writes stuck (fuzz/pair_mutator).
// The setup of both: the server's HelloRequest is on the wire when the
// client asks too, with 12,000 bytes written after its ask.
void BothAskToRenegotiate(Pair& p) {
  p.Handshake();
  unsigned long err = 0;
  CHECK(p.server.engine->Renegotiate(&err));
  p.server.Run();
  CHECK(p.client.engine->Renegotiate(&err));
  p.client.Write(std::string(12000, 'c'), 1);
}

TEST(renegotiate_asked_when_peer_starts_one_tls12) {
  Pair p(kTls12);
  BothAskToRenegotiate(p);
  // The client reads the HelloRequest before its own ask is acted on.
  p.Transfer(p.server, p.client);
  p.Pump();
  CHECK(p.server.received == std::string(12000, 'c'));
  CHECK_EQ(p.client.Count(EventType::kWriteDone), 1u);
  CHECK(!SSL_in_init(p.client.engine->ssl()));
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
}

// The client asks while OpenSSL holds the first bytes of the server's
// HelloRequest record, then the rest arrives with application data behind
// it. An SSL_renegotiate() made then stayed pending (OpenSSL waits for an
// empty read buffer), and the handshake the HelloRequest started rejected
// the data as an unexpected record (fuzz/pair_mutator).
void RenegotiateWithPartOfARecordHeld(bool paused) {
  Pair p(kTls12);
  BothAskToRenegotiate(p);
  p.chunk = 2;
  CHECK(p.Transfer(p.server, p.client));
  p.client.Run();
  p.chunk = static_cast<size_t>(-1);
  // Paused, the client still runs (its writes go out) with the bytes held.
  if (paused) p.client.engine->SetReading(false);
  std::string down = Pattern(300000, 9);
  p.server.Write(down, 2);
  p.Pump();
  if (paused) {
    p.client.engine->SetReading(true);
    p.Pump();
  }
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
  CHECK(p.client.received == down);
  CHECK(p.server.received == std::string(12000, 'c'));
  CHECK(!SSL_in_init(p.client.engine->ssl()));
}

TEST(renegotiate_asked_with_part_of_a_record_held_tls12) {
  RenegotiateWithPartOfARecordHeld(false);
}

TEST(renegotiate_asked_with_part_of_a_record_held_while_paused_tls12) {
  RenegotiateWithPartOfARecordHeld(true);
}

// The same while the first handshake is under way: it serves.
void RenegotiateMidFirstHandshake(bool server) {
  Pair p(kTls12);
  p.client.engine->Start();
  p.server.engine->Start();
  p.client.Run();
  p.Transfer(p.client, p.server);
  p.server.Run();
  unsigned long err = 0;
  CHECK((server ? p.server : p.client).engine->Renegotiate(&err));
  p.client.Write("hello", 1);
  p.server.Write("world", 2);
  p.Pump();
  CHECK(p.server.received == "hello");
  CHECK(p.client.received == "world");
  CHECK(!SSL_in_init(p.client.engine->ssl()));
  CHECK(p.client.Find(EventType::kError) == nullptr);
  CHECK(p.server.Find(EventType::kError) == nullptr);
}

TEST(renegotiate_mid_first_handshake_client_tls12) {
  RenegotiateMidFirstHandshake(false);
}
TEST(renegotiate_mid_first_handshake_server_tls12) {
  RenegotiateMidFirstHandshake(true);
}

// A handshake asked for (renegotiation, ticket) but not yet started when a
// fatal error comes in is dropped: the connection gets one error, with its
// code (the handshake tried on the failed SSL added a second, code 0).
void HandshakeAskedThenFatal(int version) {
  Pair p(version);
  p.Handshake();
  unsigned long err = 0;
  if (version == kTls12) {
    CHECK(p.server.engine->Renegotiate(&err));
  } else {
    CHECK(p.server.engine->NewSessionTicket());
  }
  std::string junk = Pattern(1000, 77);
  p.server.engine->enc_in().Append(junk.data(), junk.size());
  p.server.Run();
  CHECK_EQ(p.server.Count(EventType::kError), 1u);
  CHECK(p.server.Find(EventType::kError)->value != 0);
}

TEST(renegotiate_asked_then_fatal_error_tls12) {
  HandshakeAskedThenFatal(kTls12);
}
TEST(ticket_asked_then_fatal_error_tls13) {
  HandshakeAskedThenFatal(kTls13);
}

// ---- OCSP stapling ----

// The server pauses in the certificate callback, told whether the client
// asked for a status; what it staples then reaches the client as
// kOCSPResponse, before the handshake is done.
void OcspStaple(int version, bool request, bool staple) {
  Pair p(version);
  if (request) p.client.engine->RequestOCSP();
  p.server.engine->EnableCertCb();
  p.client.engine->Start();
  p.server.engine->Start();
  p.Pump();
  CHECK(!p.server.engine->established());
  const Seen* cert_cb = p.server.Find(EventType::kCertCb);
  CHECK(cert_cb != nullptr);
  CHECK_EQ(cert_cb->value, request ? 1u : 0u);
  std::string response = Pattern(2000, 5);
  if (staple) {
    p.server.engine->SetOCSPResponse(reinterpret_cast<const unsigned char*>(response.data()),
                                     response.size());
  }
  CHECK(p.server.engine->CertCbDone(nullptr));
  p.Pump();
  CHECK(p.client.engine->established());
  CHECK(p.server.engine->established());
  if (!request) {
    CHECK_EQ(p.client.Count(EventType::kOCSPResponse), 0u);
    return;
  }
  CHECK_EQ(p.client.Count(EventType::kOCSPResponse), 1u);
  const Seen* got = p.client.Find(EventType::kOCSPResponse);
  CHECK_EQ(got->value, staple ? 1u : 0u);
  CHECK(got->payload == (staple ? response : std::string()));
  CHECK(IndexOf(p.client, EventType::kOCSPResponse) < IndexOf(p.client, EventType::kHandshakeDone));
}

TEST(ocsp_staple_reaches_client_tls12) {
  OcspStaple(kTls12, true, true);
}
TEST(ocsp_staple_reaches_client_tls13) {
  OcspStaple(kTls13, true, true);
}
TEST(ocsp_asked_nothing_stapled_tls13) {
  OcspStaple(kTls13, true, false);
}
TEST(ocsp_not_asked_tls12) {
  OcspStaple(kTls12, false, true);
}
TEST(ocsp_not_asked_tls13) {
  OcspStaple(kTls13, false, true);
}

}  // namespace
}  // namespace enginetest
