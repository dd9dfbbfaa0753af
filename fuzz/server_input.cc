// A server engine fed arbitrary client bytes: ClientHello parsing, the
// record layer, alerts. The input is
//   flags (1 byte) | n (1 byte, low 3 bits; bit 3: an unnamed ClientHello's
//   sessions bound as node:tls 24's are) | n split sizes | bytes
// and the bytes arrive in chunks of the split sizes in turn (split byte s
// is s + 1 bytes; none: all at once), so records are cut at every boundary.
#include <openssl/err.h>

#include <cstdint>

#include "fuzz_common.h"

using enginetest::Endpoint;
using tlswrap::Engine;
using tlswrap::EventType;

namespace {

SSL_CTX* ServerContext() {
  static tlswrap::SslCtxPtr ctx = enginetest::MakeContext(true, 0);
  return ctx.get();
}

void RunOne(const uint8_t* data, size_t size) {
  if (size < 2) return;
  uint8_t flags = data[0];
  size_t nsplits = data[1] & 7;
  bool bind_unnamed = (data[1] & 8) != 0;
  data += 2;
  size -= 2;
  if (size < nsplits) return;
  size_t splits[8];
  for (size_t i = 0; i < nsplits; i++) splits[i] = size_t{data[i]} + 1;
  data += nsplits;
  size -= nsplits;

  auto pool = std::make_shared<tlswrap::BlockPool>();
  Endpoint server(ServerContext(), true, pool);
  FUZZ_CHECK(server.engine->ok());
  Engine& engine = *server.engine;
  // The server features whose callbacks read the ClientHello.
  static const unsigned char kAlpn[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  if (flags & 1) engine.SetAlpnProtocols(kAlpn, sizeof(kAlpn));
  if (flags & 2) engine.SetAlpnCallback(true);
  if (flags & 4) engine.EnableCertCb();
  if (flags & 8) engine.EnableSessionEvents(true, true);
  if (flags & 16) engine.SetVerifyMode(true, (flags & 32) != 0);
  if (flags & 64) engine.EnableKeylog();
  if (flags & 128) engine.SetUserBuffers(true);
  engine.SetSessionIdContext("fuzz", bind_unnamed);
  server.on_step = [&] {
    FUZZ_CHECK(engine.enc_out().size() < fuzz::kMaxBuffered);
    FUZZ_CHECK(engine.enc_in().size() < fuzz::kMaxBuffered);
  };
  engine.Start();

  // Answers the pauses the embedder would (no SNI context, no session).
  size_t answered = 0;
  auto answer = [&] {
    for (; answered < server.events.size(); answered++) {
      EventType t = server.events[answered].type;
      if (t == EventType::kCertCb) FUZZ_CHECK(engine.CertCbDone(nullptr));
      if (t == EventType::kResumeSession) engine.LoadSession(nullptr, 0);
    }
  };
  size_t at = 0;
  size_t turn = 0;
  while (at < size) {
    size_t n = nsplits == 0 ? size - at : std::min(splits[turn++ % nsplits], size - at);
    if (engine.WantsInput()) {
      engine.enc_in().Append(reinterpret_cast<const char*>(data) + at, n);
      at += n;
    }
    server.Run();
    answer();
    server.Run();
    server.wire.clear();
    server.wire_head = 0;
    if (!engine.WantsInput()) break;  // failed or closed: the rest is never read
  }
  engine.ReceiveEOF();
  server.Run();
  answer();
  server.Run();
  fuzz::CheckErrors(server);
  // Whatever plaintext a client that knows no keys got through would be a
  // hole in the record layer.
  FUZZ_CHECK(server.received.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Guard([&] { RunOne(data, size); });
  ERR_clear_error();
  return 0;
}
