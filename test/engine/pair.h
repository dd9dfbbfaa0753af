// Two engines (client and server) joined in memory by a pump that plays
// both embedders: it steps each engine as the binding's Cycle() does,
// takes its ciphertext out, reports it flushed, and hands it to the peer
// (all at once, or `chunk` bytes per hop to simulate a slow network).
#ifndef TLSWRAP_TEST_ENGINE_PAIR_H_
#define TLSWRAP_TEST_ENGINE_PAIR_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../../src/engine/engine.h"
#include "harness.h"

namespace enginetest {

using tlswrap::Batch;
using tlswrap::BlockPool;
using tlswrap::Engine;
using tlswrap::EventType;

// The path of a test fixture (test/fixtures, or $TLSWRAP_FIXTURES).
std::string Fixture(const char* name);

// An event as the embedder saw it: `at` is the plaintext received before it.
struct Seen {
  EventType type;
  size_t at;
  uint64_t value;
  std::string payload;
};

// 0 allows every version.
tlswrap::SslCtxPtr MakeContext(bool server, int version);

class Endpoint : public Engine::Delegate {
 public:
  Endpoint(SSL_CTX* ctx, bool server, std::shared_ptr<BlockPool> pool)
      : engine(std::make_unique<Engine>(ctx, server, std::move(pool), this)) {}

  // Steps until Step() returns false and no ciphertext came out, delivering
  // each batch; true if anything happened.
  bool Run();
  // Takes what enc_out() holds onto the wire; true if there was any.
  bool TakeCipher();
  size_t Count(EventType type) const;
  // The first such event, or nullptr.
  const Seen* Find(EventType type) const;
  std::string Unsent() const { return wire.substr(wire_head); }
  void Sent(size_t n);
  void Write(const std::string& data, uint64_t id = 0);

  char* ClearBuffer(size_t want, size_t* cap) override;
  int SelectAlpn(const unsigned char* offer, unsigned int len) override;
  unsigned int PskServer(const char* identity, unsigned char* psk, unsigned int max_psk) override;
  unsigned int PskClient(const char* hint, char* identity, unsigned int max_identity,
                         unsigned char* psk, unsigned int max_psk) override;

  std::unique_ptr<Engine> engine;
  std::string received;
  std::vector<Seen> events;
  std::string wire;  // ciphertext taken out; wire_head bytes of it handed over
  size_t wire_head = 0;
  uint64_t taken = 0;      // ciphertext taken out of enc_out() in all
  bool auto_flush = true;  // report all of it flushed at once
  bool tap = false;        // keep a copy of all ciphertext taken out in `tapped`
  std::string tapped;
  size_t cipher_takes = 0;  // TakeCipher() calls that found ciphertext
  size_t data_batches = 0;
  size_t clear_buffer_calls = 0;
  std::function<void()> on_clear_buffer;
  // After each Step(), before its ciphertext is taken (the fuzzers check
  // buffer bounds here).
  std::function<void()> on_step;
  // As each event is delivered, after the plaintext before it.
  std::function<void(const Seen&)> on_event;
  std::function<int(const unsigned char*, unsigned int)> on_select_alpn;
  // Unset: no key.
  std::function<unsigned int(const char*, unsigned char*, unsigned int)> on_psk_server;
  std::function<unsigned int(const char*, char*, unsigned int, unsigned char*, unsigned int)>
      on_psk_client;

 private:
  void Deliver(const Batch& batch);
  // ClearBuffer() memory, alive until its batch is delivered (so ASan sees
  // any use after that).
  std::vector<std::unique_ptr<char[]>> clear_;
};

class Pair {
 public:
  explicit Pair(int version = 0);
  // Starts both and pumps until the handshake is over.
  void Handshake();
  // Moves at most `chunk` bytes of `from`'s ciphertext to `to`, if `to`
  // wants input; true if it moved any.
  bool Transfer(Endpoint& from, Endpoint& to);
  // Runs both and moves ciphertext until nothing happens any more.
  void Pump();

  std::shared_ptr<BlockPool> pool = std::make_shared<BlockPool>();
  tlswrap::SslCtxPtr client_ctx;
  tlswrap::SslCtxPtr server_ctx;
  Endpoint client;
  Endpoint server;
  size_t chunk = static_cast<size_t>(-1);
};

// Deterministic bytes: offset-dependent, so a reordering or a loss shows.
std::string Pattern(size_t len, uint32_t seed);

}  // namespace enginetest

#endif  // TLSWRAP_TEST_ENGINE_PAIR_H_
