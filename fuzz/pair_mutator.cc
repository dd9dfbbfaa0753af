// An engine pair after a real handshake (TLS 1.2 or 1.3, from the first
// input byte's bit 0; bit 1: while it is still under way), driven by the rest of the input as a
// program of operations: writes both ways, deliveries in chunks, a mutator on the ciphertext in
// flight (corrupt, truncate, drop, duplicate, reorder records), read pauses,
// renegotiation (1.2), KeyUpdate (1.3), tickets, shutdown, EOF, blocked
// transports, writes whose memory goes away, and Destroy() at any point,
// also from inside a Delegate call. Checked on every run (abort() on a
// violation):
//  - plaintext delivered is a prefix of what the peer wrote, in order; with
//    nothing disturbed, all of it after draining, and no error at all;
//  - nothing leaves a destroyed engine: no event, no plaintext, no ciphertext;
//  - every kError carries an OpenSSL code (or follows kWriteGone);
//  - enc_in()/enc_out() stay below a generous bound.
// FUZZ_TRACE=1 prints the operations, and the events when a check fails.
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_common.h"

using enginetest::Endpoint;
using tlswrap::Engine;
using tlswrap::EventType;

namespace {

constexpr size_t kMaxOps = 400;
// What a transport hands over per read (the binding reads 64 KiB at most).
constexpr size_t kMaxDelivery = 64 * 1024;

SSL_CTX* Context(bool server, int version) {
  static tlswrap::SslCtxPtr ctx[2][2] = {{enginetest::MakeContext(false, TLS1_2_VERSION),
                                          enginetest::MakeContext(false, TLS1_3_VERSION)},
                                         {enginetest::MakeContext(true, TLS1_2_VERSION),
                                          enginetest::MakeContext(true, TLS1_3_VERSION)}};
  return ctx[server][version == TLS1_3_VERSION].get();
}

// Byte `i` of the stream one side writes: position-dependent, so a loss, a
// duplicate or a reordering shows in the comparison.
char StreamByte(int side, size_t i) {
  uint32_t x = static_cast<uint32_t>(i) * 2654435761u + static_cast<uint32_t>(side) * 40503u;
  return static_cast<char>((x >> 13) ^ (x >> 24) ^ i);
}

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  size_t Short() { return size_t{Byte()} | size_t{Byte()} << 8; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// A write whose memory the embedder can take away (a detached ArrayBuffer).
class DetachableSource : public tlswrap::WriteSource {
 public:
  DetachableSource(std::string bytes, std::shared_ptr<bool> gone)
      : bytes_(std::move(bytes)), gone_(std::move(gone)) {}
  size_t count() const override { return 2; }
  size_t size(size_t i) const override { return i == 0 ? split() : bytes_.size() - split(); }
  bool Get(size_t i, const char** data) override {
    if (*gone_) return false;
    *data = bytes_.data() + (i == 0 ? 0 : split());
    return true;
  }

 private:
  size_t split() const { return bytes_.size() / 3; }
  std::string bytes_;
  std::shared_ptr<bool> gone_;
};

struct Side {
  Side(bool server, int version, std::shared_ptr<tlswrap::BlockPool> pool)
      : ep(Context(server, version), server, std::move(pool)) {}
  Endpoint ep;
  std::string sent;  // everything handed to Write(), in order
  std::vector<std::shared_ptr<bool>> detachable;
  bool destroyed = false;
  bool destroy_in_clear_buffer = false;
  // What had come out when Destroy() was called.
  size_t events_at_destroy = 0;
  size_t received_at_destroy = 0;
  uint64_t taken_at_destroy = 0;

  Engine& engine() { return *ep.engine; }
  void Destroy() {
    if (destroyed) return;
    destroyed = true;
    events_at_destroy = ep.events.size();
    received_at_destroy = ep.received.size();
    taken_at_destroy = ep.taken;
    engine().Destroy();
  }
  void Write(int side, size_t len, bool detachable_source) {
    std::string bytes(len, '\0');
    for (size_t i = 0; i < len; i++) bytes[i] = StreamByte(side, sent.size() + i);
    bool queued = !engine().dead();
    if (detachable_source) {
      auto gone = std::make_shared<bool>(false);
      detachable.push_back(gone);
      engine().Write(std::make_unique<DetachableSource>(bytes, gone), sent.size());
    } else {
      ep.Write(bytes, sent.size());
    }
    if (queued) sent += bytes;
  }
};

// Record boundaries of the ciphertext in flight from `e` (offsets into
// e.wire); a partial record at the end counts as one.
std::vector<size_t> Records(const Endpoint& e) {
  std::vector<size_t> starts;
  size_t at = e.wire_head;
  while (at < e.wire.size()) {
    starts.push_back(at);
    if (e.wire.size() - at < 5) break;
    size_t len =
        (size_t{static_cast<uint8_t>(e.wire[at + 3])} << 8) | static_cast<uint8_t>(e.wire[at + 4]);
    at += 5 + len;
  }
  starts.push_back(std::min(at, e.wire.size()));
  return starts;
}

class Fuzz {
 public:
  Fuzz(int version)
      : version_(version),
        pool_(std::make_shared<tlswrap::BlockPool>()),
        client_(false, version, pool_),
        server_(true, version, pool_) {
    // As with a 'session' listener: each ticket becomes an event that holds
    // the reads behind it, the path with ordering to keep.
    client_.engine().EnableSessionEvents(true, false);
    for (Side* s : {&client_, &server_}) {
      FUZZ_CHECK(s->engine().ok());
      s->ep.on_step = [s] {
        FUZZ_CHECK(s->engine().enc_out().size() < fuzz::kMaxBuffered);
        FUZZ_CHECK(s->engine().enc_in().size() < fuzz::kMaxBuffered);
        if (s->destroyed) FUZZ_CHECK(s->engine().enc_out().empty());
      };
      s->ep.on_clear_buffer = [s] {
        if (s->destroy_in_clear_buffer) s->Destroy();
      };
    }
  }

  // With `complete` false the operations start while it is under way.
  void Handshake(bool complete) {
    client_.engine().Start();
    server_.engine().Start();
    if (!complete) return;
    Settle(true);
    FUZZ_CHECK(client_.engine().established());
    FUZZ_CHECK(server_.engine().established());
    FUZZ_CHECK(SSL_version(client_.engine().ssl()) == version_);
  }

  void Execute(Input& in) {
    for (size_t ops = 0; ops < kMaxOps && !in.done(); ops++) {
      uint8_t op = in.Byte();
      if (std::getenv("FUZZ_TRACE") != nullptr) std::fprintf(stderr, "op %02x\n", op);
      Side& s = (op & 0x80) ? server_ : client_;
      Side& peer = (op & 0x80) ? client_ : server_;
      int side = (op & 0x80) ? 1 : 0;
      switch (op & 0x7f) {
        case 0:
          s.Write(side, in.Short() % 20000, false);
          break;
        case 1:
          s.Write(side, in.Short() * 4, false);  // up to 256 KiB: several slices
          break;
        case 2:
        case 3:
        case 4: {
          size_t n = in.Byte();
          Deliver(s, peer, n == 0 ? kMaxDelivery : n * (op & 3 ? 1 : 64));
          break;
        }
        case 5:
          RunBoth();
          break;
        case 6:
          Corrupt(s, in.Short(), in.Byte());
          break;
        case 7:
          Truncate(s, in.Short());
          break;
        case 8:
          Drop(s, in.Byte());
          break;
        case 9:
          Duplicate(s, in.Byte());
          break;
        case 10:
          Reorder(s, in.Byte());
          break;
        case 11:
          s.engine().SetReading(false);
          break;
        case 12:
          s.engine().SetReading(true);
          break;
        case 13: {
          unsigned long err = 0;
          bool ok = s.engine().Renegotiate(&err);
          // Refused at once: with OpenSSL's reason.
          if (!ok && !s.engine().dead()) FUZZ_CHECK(err != 0);
          break;
        }
        case 14:
          if (!s.engine().dead() && s.engine().established() &&
              SSL_version(s.engine().ssl()) >= TLS1_3_VERSION) {
            SSL_key_update(s.engine().ssl(), (in.Byte() & 1) ? SSL_KEY_UPDATE_REQUESTED
                                                             : SSL_KEY_UPDATE_NOT_REQUESTED);
            ERR_clear_error();
          }
          break;
        case 15:
          s.engine().NewSessionTicket();
          break;
        case 16:
          s.engine().Shutdown();
          disturbed_ = true;
          break;
        case 17:
          s.engine().ReceiveEOF();
          disturbed_ = true;
          break;
        case 18:
          s.engine().SetTransportBlocked(true);
          break;
        case 19:
          s.engine().SetTransportBlocked(false);
          break;
        case 20:
          s.Write(side, in.Short() % 40000, true);
          break;
        case 21:
          for (auto& gone : s.detachable) *gone = true;
          if (!s.detachable.empty()) disturbed_ = true;
          break;
        case 22:
          s.Destroy();
          disturbed_ = true;
          break;
        case 23:
          s.destroy_in_clear_buffer = true;
          disturbed_ = true;
          break;
        case 24:
          s.engine().TransportError(104, "read");
          disturbed_ = true;
          break;
        default:
          break;
      }
      CheckPrefixes();
    }
  }

  // Lets everything settle as a well-behaved embedder would, then checks.
  void Finish() {
    for (Side* s : {&client_, &server_}) {
      s->engine().SetReading(true);
      s->engine().SetTransportBlocked(false);
    }
    Settle(false);
    CheckPrefixes();
    for (Side* s : {&client_, &server_}) {
      fuzz::CheckErrors(s->ep);
      if (s->destroyed) {
        FUZZ_CHECK(s->ep.events.size() == s->events_at_destroy);
        FUZZ_CHECK(s->ep.received.size() == s->received_at_destroy);
        FUZZ_CHECK(s->ep.taken == s->taken_at_destroy);
        FUZZ_CHECK(s->engine().enc_out().empty());
      }
    }
    if (!disturbed_) {
      // Nothing lost on the wire and nobody closed: all of it, no error.
      FUZZ_CHECK(client_.ep.Find(EventType::kError) == nullptr);
      FUZZ_CHECK(server_.ep.Find(EventType::kError) == nullptr);
      if (std::getenv("FUZZ_TRACE") != nullptr) {
        std::fprintf(stderr, "sent %zu/%zu received %zu/%zu\n", client_.sent.size(),
                     server_.sent.size(), server_.ep.received.size(), client_.ep.received.size());
        for (Side* s : {&client_, &server_}) {
          SSL* ssl = s->engine().ssl();
          std::fprintf(stderr, "  unsent %zu in %zu wants %d init %d reneg %d\n",
                       s->ep.Unsent().size(), s->engine().enc_in().size(), s->engine().WantsInput(),
                       SSL_in_init(ssl), SSL_renegotiate_pending(ssl));
        }
        for (Side* s : {&client_, &server_}) {
          for (const enginetest::Seen& e : s->ep.events) {
            std::fprintf(stderr, "  %s event %d at %zu value %llu\n",
                         s == &client_ ? "client" : "server", static_cast<int>(e.type), e.at,
                         static_cast<unsigned long long>(e.value));
          }
        }
      }
      FUZZ_CHECK(server_.ep.received == client_.sent);
      FUZZ_CHECK(client_.ep.received == server_.sent);
    }
  }

 private:
  void RunBoth() {
    client_.ep.Run();
    server_.ep.Run();
  }

  // Moves up to `n` bytes of `from`'s ciphertext in flight to `to`, if it
  // reads now.
  bool Deliver(Side& from, Side& to, size_t n) {
    Endpoint& f = from.ep;
    size_t avail = f.wire.size() - f.wire_head;
    if (avail == 0 || !to.engine().WantsInput()) return false;
    n = std::min({n, avail, kMaxDelivery});
    to.engine().enc_in().Append(f.wire.data() + f.wire_head, n);
    f.Sent(n);
    to.ep.Run();
    return true;
  }

  void Settle(bool handshake) {
    for (int i = 0; i < 100000; i++) {
      bool any = client_.ep.Run();
      any |= server_.ep.Run();
      any |= Deliver(client_, server_, kMaxDelivery);
      any |= Deliver(server_, client_, kMaxDelivery);
      if (!any) return;
      if (handshake && client_.engine().established() && server_.engine().established() &&
          client_.ep.Unsent().empty() && server_.ep.Unsent().empty()) {
        return;
      }
    }
    FUZZ_CHECK(!"the pair never settled");
  }

  // Compares only what arrived since the last check.
  void CheckPrefixes() {
    CheckPrefix(client_.sent, server_.ep.received, &checked_up_);
    CheckPrefix(server_.sent, client_.ep.received, &checked_down_);
  }
  static void CheckPrefix(const std::string& sent, const std::string& received, size_t* checked) {
    FUZZ_CHECK(received.size() <= sent.size());
    size_t n = received.size() - *checked;
    FUZZ_CHECK(std::memcmp(sent.data() + *checked, received.data() + *checked, n) == 0);
    *checked = received.size();
  }

  // ---- The mutator: each marks the run disturbed only if it changed bytes.
  void Corrupt(Side& s, size_t pos, uint8_t mask) {
    Endpoint& e = s.ep;
    size_t avail = e.wire.size() - e.wire_head;
    if (avail == 0 || mask == 0) return;
    e.wire[e.wire_head + pos % avail] ^= static_cast<char>(mask);
    disturbed_ = true;
  }
  void Truncate(Side& s, size_t keep) {
    Endpoint& e = s.ep;
    size_t avail = e.wire.size() - e.wire_head;
    if (keep >= avail) return;
    e.wire.resize(e.wire_head + keep);
    disturbed_ = true;
  }
  void Drop(Side& s, uint8_t which) {
    std::vector<size_t> r = Records(s.ep);
    if (r.size() < 2) return;
    size_t i = which % (r.size() - 1);
    s.ep.wire.erase(r[i], r[i + 1] - r[i]);
    disturbed_ = true;
  }
  void Duplicate(Side& s, uint8_t which) {
    std::vector<size_t> r = Records(s.ep);
    if (r.size() < 2) return;
    size_t i = which % (r.size() - 1);
    std::string copy = s.ep.wire.substr(r[i], r[i + 1] - r[i]);
    s.ep.wire.insert(r[i + 1], copy);
    disturbed_ = true;
  }
  void Reorder(Side& s, uint8_t which) {
    std::vector<size_t> r = Records(s.ep);
    if (r.size() < 3) return;
    size_t i = which % (r.size() - 2);
    std::string a = s.ep.wire.substr(r[i], r[i + 1] - r[i]);
    std::string b = s.ep.wire.substr(r[i + 1], r[i + 2] - r[i + 1]);
    if (a == b) return;
    s.ep.wire.replace(r[i], a.size() + b.size(), b + a);
    disturbed_ = true;
  }

  int version_;
  std::shared_ptr<tlswrap::BlockPool> pool_;
  Side client_;
  Side server_;
  bool disturbed_ = false;
  size_t checked_up_ = 0;  // client-to-server bytes already compared
  size_t checked_down_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  fuzz::Guard([&] {
    Fuzz f((data[0] & 1) ? TLS1_3_VERSION : TLS1_2_VERSION);
    f.Handshake((data[0] & 2) == 0);
    Input in(data + 1, size - 1);
    f.Execute(in);
    f.Finish();
  });
  ERR_clear_error();
  return 0;
}
