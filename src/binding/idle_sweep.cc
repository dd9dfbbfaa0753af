#include "idle_sweep.h"

#include <memory>

namespace tlswrap {

// Closing a libuv handle is asynchronous, and the environment's loop must
// still run for it: only an async cleanup hook gives that at teardown. The
// handle outlives the sweep if the sweep goes first (it is shared by the
// connections and the environment's data, and either may be freed last).
struct IdleSweep::Timer {
  uv_timer_t handle;
  IdleSweep* sweep;
  napi_async_cleanup_hook_handle hook = nullptr;
};

IdleSweep::~IdleSweep() {
  if (timer_ != nullptr) {
    uv_timer_stop(&timer_->handle);
    timer_->sweep = nullptr;
  }
}

bool IdleSweep::Add(Entry* entry) {
  if (torn_down_) return false;
  if (entry->listed) return true;
  if (timer_ == nullptr) {
    uv_loop_t* loop = nullptr;
    if (napi_get_uv_event_loop(env_, &loop) != napi_ok || loop == nullptr) return false;
    // Owned by libuv from here: freed in the close callback.
    Timer* timer = std::make_unique<Timer>().release();
    timer->sweep = this;
    uv_timer_init(loop, &timer->handle);
    // Never what keeps a process alive.
    uv_unref(reinterpret_cast<uv_handle_t*>(&timer->handle));
    if (napi_add_async_cleanup_hook(env_, OnTeardown, timer, &timer->hook) != napi_ok) {
      uv_close(reinterpret_cast<uv_handle_t*>(&timer->handle), OnClosed);
      return false;
    }
    timer_ = timer;
  }
  if (head_ == nullptr) uv_timer_start(&timer_->handle, OnTick, kTickMs, 0);
  entry->listed = true;
  entry->prev = nullptr;
  entry->next = head_;
  if (head_ != nullptr) head_->prev = entry;
  head_ = entry;
  return true;
}

void IdleSweep::Remove(Entry* entry) {
  if (!entry->listed) return;
  if (entry->prev != nullptr) {
    entry->prev->next = entry->next;
  } else {
    head_ = entry->next;
  }
  if (entry->next != nullptr) entry->next->prev = entry->prev;
  entry->prev = entry->next = nullptr;
  entry->listed = false;
  if (head_ == nullptr && timer_ != nullptr) uv_timer_stop(&timer_->handle);
}

void IdleSweep::OnTick(uv_timer_t* handle) {
  auto* timer = reinterpret_cast<Timer*>(handle);
  if (timer->sweep != nullptr) timer->sweep->Tick();
}

// A connection busy at the tick is unlisted too: it is listed again when its
// engine next runs, which is how it stops being busy.
void IdleSweep::Tick() {
  Entry* entry = head_;
  head_ = nullptr;
  while (entry != nullptr) {
    Entry* next = entry->next;
    entry->prev = entry->next = nullptr;
    entry->listed = false;
    entry->engine->FreeIdleBuffers();
    entry = next;
  }
}

void IdleSweep::OnTeardown(napi_async_cleanup_hook_handle /*hook*/, void* arg) {
  auto* timer = static_cast<Timer*>(arg);
  if (timer->sweep != nullptr) {
    // Connections that go idle from now on free their buffers at once.
    timer->sweep->Tick();
    timer->sweep->torn_down_ = true;
    timer->sweep->timer_ = nullptr;
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&timer->handle), OnClosed);
}

void IdleSweep::OnClosed(uv_handle_t* handle) {
  std::unique_ptr<Timer> timer(reinterpret_cast<Timer*>(handle));
  if (timer->hook != nullptr) napi_remove_async_cleanup_hook(timer->hook);
}

}  // namespace tlswrap
