// A minimal test harness for the engine's C++ tests: TEST registers a case,
// CHECK fails it by throwing, main() runs them all and ends with
// "N passed, N failed" (non-zero exit status on any failure).
#ifndef TLSWRAP_TEST_ENGINE_HARNESS_H_
#define TLSWRAP_TEST_ENGINE_HARNESS_H_

#include <sstream>
#include <string>
#include <vector>

namespace harness {

struct Failure {
  std::string what;
};

struct Case {
  const char* name;
  void (*fn)();
};

inline std::vector<Case>& Cases() {
  static std::vector<Case> cases;
  return cases;
}

struct Register {
  Register(const char* name, void (*fn)()) { Cases().push_back({name, fn}); }
};

[[noreturn]] inline void Fail(const char* file, int line, const std::string& what) {
  std::ostringstream os;
  os << file << ":" << line << ": " << what;
  throw Failure{os.str()};
}

}  // namespace harness

#define TEST(name)                                         \
  static void name();                                      \
  static harness::Register name##_registered(#name, name); \
  static void name()

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) harness::Fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

// For numbers and short values: prints both sides on failure.
#define CHECK_EQ(a, b)                                             \
  do {                                                             \
    auto&& va_ = (a);                                              \
    auto&& vb_ = (b);                                              \
    if (!(va_ == vb_)) {                                           \
      std::ostringstream os_;                                      \
      os_ << "CHECK_EQ(" #a ", " #b "): " << va_ << " != " << vb_; \
      harness::Fail(__FILE__, __LINE__, os_.str());                \
    }                                                              \
  } while (0)

#endif  // TLSWRAP_TEST_ENGINE_HARNESS_H_
