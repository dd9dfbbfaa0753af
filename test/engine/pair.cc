#include "pair.h"

#include <cstdlib>

namespace enginetest {

std::string Fixture(const char* name) {
  const char* dir = std::getenv("TLSWRAP_FIXTURES");
  return std::string(dir != nullptr ? dir : TLSWRAP_FIXTURES_DIR) + "/" + name;
}

// Set up as src/binding/secure_context.cc sets up a node:tls context.
tlswrap::SslCtxPtr MakeContext(bool server, int version) {
  tlswrap::SslCtxPtr ctx(SSL_CTX_new(TLS_method()));
  CHECK(ctx != nullptr);
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3);
  SSL_CTX_set_options(ctx.get(), SSL_OP_ALLOW_CLIENT_RENEGOTIATION);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_SERVER |
                                                SSL_SESS_CACHE_NO_INTERNAL |
                                                SSL_SESS_CACHE_NO_AUTO_CLEAR);
  if (version != 0) {
    CHECK(SSL_CTX_set_min_proto_version(ctx.get(), version) == 1);
    CHECK(SSL_CTX_set_max_proto_version(ctx.get(), version) == 1);
  }
  if (server) {
    CHECK(SSL_CTX_use_certificate_chain_file(ctx.get(), Fixture("server-cert.pem").c_str()) == 1);
    CHECK(SSL_CTX_use_PrivateKey_file(ctx.get(), Fixture("server-key.pem").c_str(),
                                      SSL_FILETYPE_PEM) == 1);
  } else {
    CHECK(SSL_CTX_load_verify_locations(ctx.get(), Fixture("ca-cert.pem").c_str(), nullptr) == 1);
  }
  Engine::ConfigureContext(ctx.get());
  return ctx;
}

std::string Pattern(size_t len, uint32_t seed) {
  std::string s(len, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = static_cast<char>(x);
  }
  return s;
}

// ---- Endpoint ----

void Endpoint::Write(const std::string& data, uint64_t id) {
  engine->Write(std::make_unique<tlswrap::OwnedWriteSource>(std::vector<std::string>{data}), id);
}

bool Endpoint::TakeCipher() {
  tlswrap::CipherBuffer& out = engine->enc_out();
  if (out.empty()) return false;
  size_t n = out.size();
  size_t at = wire.size();
  wire.resize(at + n);
  CHECK_EQ(out.Read(&wire[at], n), n);
  if (tap) tapped.append(wire, at, n);
  cipher_takes++;
  taken += n;
  if (auto_flush) engine->SetFlushed(taken);
  return true;
}

void Endpoint::Sent(size_t n) {
  wire_head += n;
  if (wire_head == wire.size()) {
    wire.clear();
    wire_head = 0;
  }
}

bool Endpoint::Run() {
  bool any = false;
  for (int i = 0; i < 1000000; i++) {
    Batch batch;
    bool more = engine->Step(&batch);
    if (on_step) on_step();
    bool flushed = TakeCipher();
    Deliver(batch);
    if (!more && !flushed) return any;
    any = true;
  }
  harness::Fail(__FILE__, __LINE__, "Run() never settled");
}

void Endpoint::Deliver(const Batch& batch) {
  if (batch.len > 0) {
    data_batches++;
    CHECK(batch.data != nullptr);
    if (batch.in_target) {
      // In the last ClearBuffer() memory, as the flag says.
      CHECK(!clear_.empty());
      CHECK(batch.data >= clear_.back().get());
    } else {
      CHECK(batch.data == batch.owned.data());
    }
  }
  size_t pos = 0;
  for (const tlswrap::Event& e : batch.events) {
    // Stamped within the batch, in order.
    CHECK(e.offset >= pos && e.offset <= batch.len);
    received.append(batch.data + pos, e.offset - pos);
    pos = e.offset;
    events.push_back(Seen{e.type, received.size(), e.value, e.payload});
    if (on_event) on_event(events.back());
  }
  if (batch.len > pos) received.append(batch.data + pos, batch.len - pos);
  clear_.clear();
}

size_t Endpoint::Count(EventType type) const {
  return static_cast<size_t>(
      std::count_if(events.begin(), events.end(), [&](const Seen& s) { return s.type == type; }));
}

const Seen* Endpoint::Find(EventType type) const {
  for (const Seen& s : events) {
    if (s.type == type) return &s;
  }
  return nullptr;
}

char* Endpoint::ClearBuffer(size_t want, size_t* cap) {
  clear_buffer_calls++;
  if (on_clear_buffer) on_clear_buffer();
  clear_.emplace_back(new char[want]);
  *cap = want;
  return clear_.back().get();
}

int Endpoint::SelectAlpn(const unsigned char* offer, unsigned int len) {
  return on_select_alpn ? on_select_alpn(offer, len) : 0;
}

unsigned int Endpoint::PskServer(const char* identity, unsigned char* psk, unsigned int max_psk) {
  return on_psk_server ? on_psk_server(identity, psk, max_psk) : 0;
}

unsigned int Endpoint::PskClient(const char* hint, char* identity, unsigned int max_identity,
                                 unsigned char* psk, unsigned int max_psk) {
  return on_psk_client ? on_psk_client(hint, identity, max_identity, psk, max_psk) : 0;
}

// ---- Pair ----

Pair::Pair(int version)
    : client_ctx(MakeContext(false, version)),
      server_ctx(MakeContext(true, version)),
      client(client_ctx.get(), false, pool),
      server(server_ctx.get(), true, pool) {
  CHECK(client.engine->ok());
  CHECK(server.engine->ok());
}

void Pair::Handshake() {
  client.engine->Start();
  server.engine->Start();
  Pump();
  CHECK(client.engine->established());
  CHECK(server.engine->established());
}

bool Pair::Transfer(Endpoint& from, Endpoint& to) {
  size_t avail = from.wire.size() - from.wire_head;
  if (avail == 0 || !to.engine->WantsInput()) return false;
  size_t n = std::min(chunk, avail);
  to.engine->enc_in().Append(from.wire.data() + from.wire_head, n);
  from.Sent(n);
  return true;
}

void Pair::Pump() {
  for (int i = 0; i < 1000000; i++) {
    bool any = client.Run();
    any |= server.Run();
    any |= Transfer(client, server);
    any |= Transfer(server, client);
    if (!any) return;
  }
  harness::Fail(__FILE__, __LINE__, "Pump() never settled");
}

}  // namespace enginetest
