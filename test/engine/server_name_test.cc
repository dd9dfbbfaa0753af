// The server name a server takes from a ClientHello: one per handshake,
// even across a HelloRetryRequest; and the session id context it binds the
// handshake's session to, derived from that name as node:tls derives it.
#include <openssl/evp.h>

#include <cstring>
#include <string>

#include "pair.h"

namespace enginetest {
namespace {

// A client that names `second` in the ClientHello it sends after a
// HelloRetryRequest: the message callback sees the retry request (a
// ServerHello with RFC 8446's fixed random) before the client answers it.
constexpr unsigned char kHelloRetryRandom[32] = {
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C};

void RenameOnRetry(int write_p, int /*version*/, int content_type, const void* buf, size_t len,
                   SSL* ssl, void* arg) {
  const auto* msg = static_cast<const unsigned char*>(buf);
  if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len >= 38 &&
      msg[0] == SSL3_MT_SERVER_HELLO &&
      std::memcmp(msg + 6, kHelloRetryRandom, sizeof kHelloRetryRandom) == 0) {
    SSL_set_tlsext_host_name(ssl, static_cast<const char*>(arg));
  }
}

// The server takes only P-256 and the client offers an X25519 share first,
// so the server asks again; the client names `first`, then `second`.
void HandshakeAcrossRetry(Pair& p, const char* first, const char* second) {
  SSL* client = p.client.engine->ssl();
  CHECK(SSL_set1_groups_list(p.server.engine->ssl(), "P-256") == 1);
  CHECK(SSL_set1_groups_list(client, "X25519:P-256") == 1);
  CHECK(SSL_set_tlsext_host_name(client, first) == 1);
  SSL_set_msg_callback(client, RenameOnRetry);
  SSL_set_msg_callback_arg(client, const_cast<char*>(second));
  p.client.engine->Start();
  p.server.engine->Start();
  p.Pump();
}

TEST(server_name_kept_across_hello_retry_completes) {
  Pair p(TLS1_3_VERSION);
  HandshakeAcrossRetry(p, "a.example", "a.example");
  CHECK(p.client.engine->established());
  CHECK(p.server.engine->established());
  CHECK_EQ(SSL_get_negotiated_group(p.server.engine->ssl()), NID_X9_62_prime256v1);
  CHECK(std::strcmp(SSL_get_servername(p.server.engine->ssl(), TLSEXT_NAMETYPE_host_name),
                    "a.example") == 0);
}

// The context, its certificate and its trust for client certificates were
// chosen by the first name: a second one must fail the handshake, not be
// reported (and bound to sessions) with the first one's verification.
TEST(server_name_changed_after_hello_retry_fails_the_handshake) {
  Pair p(TLS1_3_VERSION);
  HandshakeAcrossRetry(p, "a.example", "b.example");
  CHECK(!p.client.engine->established());
  CHECK(!p.server.engine->established());
  const Seen* s = p.server.Find(EventType::kError);
  const Seen* c = p.client.Find(EventType::kError);
  CHECK(s != nullptr && c != nullptr);
  CHECK_EQ(ERR_GET_REASON(s->value), SSL_R_CALLBACK_FAILED);
  CHECK_EQ(ERR_GET_REASON(c->value), SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER);
}

TEST(server_name_dropped_after_hello_retry_fails_the_handshake) {
  Pair p(TLS1_3_VERSION);
  HandshakeAcrossRetry(p, "a.example", nullptr);
  CHECK(!p.server.engine->established());
  const Seen* s = p.server.Find(EventType::kError);
  CHECK(s != nullptr);
  CHECK_EQ(ERR_GET_REASON(s->value), SSL_R_CALLBACK_FAILED);
}

// The session id context a TLS 1.2 server bound its session to, with
// `sid_ctx` as its sessionIdContext and `name` the client's SNI (none if
// null).
std::string BoundContext(const std::string& sid_ctx, bool bind_unnamed, const char* name) {
  Pair p(TLS1_2_VERSION);
  p.server.engine->SetSessionIdContext(sid_ctx, bind_unnamed);
  if (name != nullptr) CHECK(SSL_set_tlsext_host_name(p.client.engine->ssl(), name) == 1);
  p.Handshake();
  CHECK(p.server.engine->established());
  unsigned int len = 0;
  const unsigned char* id =
      SSL_SESSION_get0_id_context(SSL_get_session(p.server.engine->ssl()), &len);
  return std::string(reinterpret_cast<const char*>(id), len);
}

std::string Sha256(const std::string& input) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  CHECK(EVP_Digest(input.data(), input.size(), digest, &len, EVP_sha256(), nullptr) == 1);
  return std::string(reinterpret_cast<const char*>(digest), len);
}

// node:tls 22.23.5 and 24.22.3 bind every session to the context and the
// name, empty for a client that sent none; a server of a fleet of both must
// derive the same bytes for sessions to cross.
TEST(session_id_context_binds_the_empty_name_as_node_24_does) {
  using namespace std::string_literals;
  CHECK(BoundContext("fleet", true, nullptr) == Sha256("fleet\0"s));
  CHECK(BoundContext("fleet", true, "a.example") == Sha256("fleet\0a.example"s));
  // No context: left empty, as node:tls leaves it.
  CHECK(BoundContext("", true, nullptr).empty());
}

// node:tls 20 and 26 bind no name: an unnamed session is bound to the
// context as given, a named one stays bound to its name all the same.
TEST(session_id_context_without_a_name_is_the_context_as_node_20_has_it) {
  using namespace std::string_literals;
  CHECK(BoundContext("fleet", false, nullptr) == "fleet");
  CHECK(BoundContext("fleet", false, "a.example") == Sha256("fleet\0a.example"s));
}

}  // namespace
}  // namespace enginetest
