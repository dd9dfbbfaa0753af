// When idle connections give OpenSSL's record buffers back (about 34 KiB a
// connection): at the next tick of one timer per environment, not the
// moment each goes idle. A keep-alive connection goes idle between every two
// requests; freeing the buffers there and making them again for the next
// request was about 3% of a small HTTPS request's instructions. A connection
// still idle at the tick frees them then, so an idle connection holds none
// after at most kTickMs.
#ifndef TLSWRAP_BINDING_IDLE_SWEEP_H_
#define TLSWRAP_BINDING_IDLE_SWEEP_H_

#include <napi.h>
#include <uv.h>

#include <cstdint>

#include "engine/engine.h"

namespace tlswrap {

class IdleSweep {
 public:
  static constexpr uint64_t kTickMs = 100;

  // One per connection, kept in the connection: listing and unlisting cost
  // no allocation.
  struct Entry {
    Engine* engine = nullptr;
    Entry* prev = nullptr;
    Entry* next = nullptr;
    bool listed = false;
  };

  explicit IdleSweep(napi_env env) : env_(env) {}
  ~IdleSweep();
  IdleSweep(const IdleSweep&) = delete;
  IdleSweep& operator=(const IdleSweep&) = delete;

  // After a connection's engine ran: its buffers are freed at the next tick
  // if it is idle then. False if the environment is going away (no more
  // ticks): the caller frees them itself.
  bool Add(Entry* entry);
  // Before the engine goes.
  void Remove(Entry* entry);

 private:
  struct Timer;  // the libuv handle, closed at environment teardown
  static void OnTick(uv_timer_t* handle);
  static void OnTeardown(napi_async_cleanup_hook_handle hook, void* arg);
  static void OnClosed(uv_handle_t* handle);
  void Tick();

  napi_env env_;
  Timer* timer_ = nullptr;
  bool torn_down_ = false;
  Entry* head_ = nullptr;
};

}  // namespace tlswrap

#endif  // TLSWRAP_BINDING_IDLE_SWEEP_H_
