// What the engine fuzzers share: invariant checks that abort() (libFuzzer
// reports an abort as a crash, with the input), and the checks every
// endpoint's events must pass.
#ifndef TLSWRAP_FUZZ_FUZZ_COMMON_H_
#define TLSWRAP_FUZZ_FUZZ_COMMON_H_

#include <cstdio>
#include <cstdlib>

#include "../test/engine/pair.h"

#define FUZZ_CHECK(cond)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

namespace fuzz {

// Ciphertext an engine may hold at once: one write slice with its record
// overhead, plus the replies reading may provoke. Far above what it needs.
constexpr size_t kMaxBuffered = 4 * 1024 * 1024;

// Every kError carries OpenSSL's code, unless it ends a write whose memory
// was gone (kWriteGone just before it).
inline void CheckErrors(const enginetest::Endpoint& e) {
  for (size_t i = 0; i < e.events.size(); i++) {
    if (e.events[i].type != tlswrap::EventType::kError) continue;
    bool after_gone = i > 0 && e.events[i - 1].type == tlswrap::EventType::kWriteGone;
    if (e.events[i].value == 0 && !after_gone) {
      std::fprintf(stderr, "kError with no error code (event %zu of %zu): %s\n", i, e.events.size(),
                   e.engine->is_server() ? "server" : "client");
      for (const enginetest::Seen& s : e.events) {
        std::fprintf(stderr, "  event %d at %zu value %llu\n", static_cast<int>(s.type), s.at,
                     static_cast<unsigned long long>(s.value));
      }
      std::abort();
    }
  }
}

// Runs `fn`, turning a harness CHECK failure (pair.cc) into an abort.
template <typename Fn>
void Guard(Fn&& fn) {
  try {
    fn();
  } catch (const harness::Failure& f) {
    std::fprintf(stderr, "harness check failed: %s\n", f.what.c_str());
    std::abort();
  }
}

}  // namespace fuzz

#endif  // TLSWRAP_FUZZ_FUZZ_COMMON_H_
