// The per-connection queue (src/engine/fifo.h): order, and that it lets go
// of memory as soon as it can (an idle connection must hold none).
#include "../../src/engine/fifo.h"

#include <memory>

#include "harness.h"

namespace enginetest {
namespace {

// Counts live instances, so a test sees when an element is really freed.
struct Tracked {
  explicit Tracked(int v, int* live) : value(v), owner(new Counter{live}) {}
  struct Counter {
    int* live;
    explicit Counter(int* l) : live(l) { ++*live; }
    ~Counter() { --*live; }
  };
  int value;
  std::unique_ptr<Counter> owner;
};

TEST(fifo_keeps_order_across_compaction) {
  int live = 0;
  tlswrap::Fifo<Tracked> q;
  int next_in = 0;
  int next_out = 0;
  // Interleaved so the head passes the compaction point several times.
  for (int round = 0; round < 50; round++) {
    for (int i = 0; i < 7; i++) q.push_back(Tracked(next_in++, &live));
    for (int i = 0; i < 5; i++) {
      CHECK_EQ(q.front().value, next_out++);
      q.pop_front();
    }
    CHECK_EQ(q.size(), static_cast<size_t>(next_in - next_out));
    CHECK_EQ(live, next_in - next_out);
    int expect = next_out;
    for (const Tracked& t : q) CHECK_EQ(t.value, expect++);
    CHECK_EQ(q.back().value, next_in - 1);
    // Popped slots are reclaimed: what is held tracks what is queued.
    CHECK(q.capacity() <= 4 * q.size() + 64);
  }
  while (!q.empty()) {
    CHECK_EQ(q.front().value, next_out++);
    q.pop_front();
  }
  CHECK_EQ(live, 0);
}

TEST(fifo_pop_front_frees_at_once) {
  int live = 0;
  tlswrap::Fifo<Tracked> q;
  q.push_back(Tracked(1, &live));
  q.push_back(Tracked(2, &live));
  q.pop_front();
  // Not left in the popped slot until it is reused.
  CHECK_EQ(live, 1);
  q.pop_back();
  CHECK_EQ(live, 0);
  CHECK(q.empty());
}

TEST(fifo_drained_burst_keeps_no_capacity) {
  tlswrap::Fifo<std::unique_ptr<int>> q;
  for (int i = 0; i < 1000; i++) q.push_back(std::make_unique<int>(i));
  for (int i = 0; i < 1000; i++) {
    CHECK_EQ(*q.front(), i);
    q.pop_front();
  }
  CHECK(q.empty());
  CHECK_EQ(q.capacity(), 0u);
  // The same queue, reused: still in order after the release.
  q.push_back(std::make_unique<int>(7));
  CHECK_EQ(*q.front(), 7);
  q.clear();
  CHECK(q.empty());
  CHECK_EQ(q.size(), 0u);
}

}  // namespace
}  // namespace enginetest
