// Runs every registered case (or those whose name contains argv[1]).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

#include "harness.h"

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  int passed = 0;
  int failed = 0;
  for (const harness::Case& c : harness::Cases()) {
    if (filter != nullptr && std::strstr(c.name, filter) == nullptr) continue;
    auto start = std::chrono::steady_clock::now();
    std::string error;
    try {
      c.fn();
    } catch (const harness::Failure& f) {
      error = f.what;
    } catch (const std::exception& e) {
      error = std::string("exception: ") + e.what();
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    if (error.empty()) {
      passed++;
      std::printf("ok   %s (%lld ms)\n", c.name, static_cast<long long>(ms));
    } else {
      failed++;
      std::printf("FAIL %s: %s\n", c.name, error.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
