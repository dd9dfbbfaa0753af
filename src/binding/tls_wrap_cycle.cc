// The cycle: the engine pumped (ciphertext in, plaintext and events out) and
// its batches delivered to JS in wire order, data before the events that
// came after it; writes and the transport fed in the same turn.

#include <algorithm>
#include <cstring>

#include "addon.h"
#include "errors.h"
#include "js_call.h"
#include "js_write_source.h"
#include "tls_wrap.h"
#include "transport_js.h"
#include "wire_string.h"

namespace tlswrap {

// Marks engine code as on the stack for the lifetime of the scope. A
// destroy() from JS it calls only marks the connection; the outermost scope
// releases it on the way out, however it is left (an exception included).
class CycleScope {
 public:
  explicit CycleScope(TLSWrap* wrap) : wrap_(wrap) { wrap_->depth_++; }
  ~CycleScope() {
    if (--wrap_->depth_ == 0 && wrap_->destroyed_) wrap_->Release();
  }
  CycleScope(const CycleScope&) = delete;
  CycleScope& operator=(const CycleScope&) = delete;

 private:
  TLSWrap* wrap_;
};

void TLSWrap::Cycle() {
  if (dead()) return;
  if (depth_ > 0) {
    // Reentered from JS we called (a write from a 'data' handler, say): the
    // outer cycle picks the new work up before it returns, keeping order.
    cycle_again_ = true;
    return;
  }
  Napi::Env env = Env();
  {
    CycleScope scope(this);
    Batch batch;
    // Every caller has a handle scope open (an N-API callback's, or
    // FromLoop's): the first step uses it, later ones open their own, so a
    // keep-alive request's one step pays for no scope of its own.
    bool first_step = true;
    do {
      if (rest_ && !DeliverRest()) break;
      while (!dead()) {
        std::optional<Napi::HandleScope> handles;
        if (!first_step) handles.emplace(env);
        first_step = false;
        // What JS asked of a reentered cycle until now (a response written
        // from a 'data' handler) this step does: the flag only has to carry
        // a request made after the last step past the end of the loop.
        cycle_again_ = false;
        batch.len = 0;
        batch.data = nullptr;
        batch.in_target = false;
        batch.events.clear();
        clear_target_ = Napi::Object();
        onread_rest_batch_ = nullptr;
        bool more = engine_->Step(&batch);
        if (dead()) break;
        // Ciphertext goes out after JS has seen what came with it, so a
        // destroy() there stops it (a client rejecting the server's
        // certificate sends no Finished); but an alert goes out before the
        // error, and a close_notify before the transport's end.
        bool first = std::any_of(batch.events.begin(), batch.events.end(), [](const Event& e) {
          return e.type == EventType::kError || e.type == EventType::kWriteGone ||
                 e.type == EventType::kShutdown;
        });
        bool flushed = first && Flush(true);
        if (dead()) break;
        size_t event = 0;
        size_t byte = 0;
        delivering_ = true;
        quiet_batch_ = batch.events.empty() && engine_->enc_out().empty();
        bool whole = Deliver(batch, &event, &byte);
        delivering_ = false;
        quiet_batch_ = false;
        if (dead()) break;
        if (!whole) {
          KeepRest(&batch, event, byte);
          break;
        }
        if (!first) flushed = Flush();
        if (!more && !flushed) break;
      }
    } while (cycle_again_ && !dead() && !thrown_);
    if (!dead()) {
      SyncReading();
      if (!idle_sweep_->Add(&idle_entry_)) engine_->FreeIdleBuffers();
    }
  }
  if (thrown_) {
    Napi::Error error = std::move(*thrown_);
    thrown_.reset();
    throw error;
  }
}

void TLSWrap::CycleForCaller() {
  bool outer = depth_ == 0;
  if (outer) to_caller_ = true;
  struct Reset {
    TLSWrap* wrap;
    bool outer;
    ~Reset() {
      if (outer) wrap->to_caller_ = false;
    }
  } reset{this, outer};
  Cycle();
}

void TLSWrap::KeepRest(Batch* batch, size_t event, size_t byte) {
  auto rest = std::make_unique<Rest>();
  bool owned = batch->len > 0 && !batch->in_target;
  rest->batch = std::move(*batch);
  // A short string keeps its bytes inside itself: they moved.
  if (owned) rest->batch.data = &rest->batch.owned[0];
  rest->event = event;
  rest->byte = byte;
  if (rest->batch.in_target && !clear_target_.IsEmpty()) {
    rest->target = Napi::Persistent(clear_target_);
    rest->target_base = target_base_;
    rest->target_size = target_size_;
  }
  rest_ = std::move(rest);
}

bool TLSWrap::DeliverRest() {
  std::unique_ptr<Rest> rest = std::move(rest_);
  Napi::HandleScope handles(Env());
  clear_target_ = rest->target.IsEmpty() ? Napi::Object() : rest->target.Value();
  target_base_ = rest->target_base;
  target_size_ = rest->target_size;
  delivering_ = true;
  bool whole = Deliver(rest->batch, &rest->event, &rest->byte);
  delivering_ = false;
  if (dead()) return false;
  if (!whole) {
    rest_ = std::move(rest);
    return false;
  }
  // What came with the batch, held until JS had seen all of it.
  Flush();
  return !dead();
}

void TLSWrap::SendQueuedWrites() {
  while (!dead() && engine_->EncryptQueuedWrite()) Flush();
  if (!dead()) Flush();
}

bool TLSWrap::Flush(bool force) {
  // Not even a forced alert: node's bytes have to reach the wire first.
  if (!transport_ || engine_->transport_held()) return false;
  // Held for a 'newSession' listener, unless an alert must go out first.
  if (!force && engine_->output_held()) return false;
  CipherBuffer& out = engine_->enc_out();
  bool any = !out.empty();
  if (any) {
    bool ok = true;
    try {
      ok = transport_->Write(Env(), &out);
    } catch (const Napi::Error& e) {
      // As node:tls does with an exception from a JS stream's write: it is
      // uncaught, and the write fails with EPROTO (its bytes are lost).
      ReportUncaught(Env(), e.Value());
      if (!out.empty()) {
        // The ciphertext was not even handed to JS (a worker being
        // terminated fails every N-API call, Buffer::New included): trying
        // again would spin in Cycle() for ever and terminate() would never
        // return.
        MarkDestroyed();
      } else if (!dead()) {
        engine_->TransportWriteError(-UV_EPROTO);
      }
    }
    if (!dead()) engine_->SetTransportBlocked(!ok);
  }
  if (!dead()) engine_->SetFlushed(FlushedTotal());
  return any;
}

void TLSWrap::SyncReading() {
  if (native_ == nullptr) return;
  // An engine not started yet (a client made by hand starts at its first
  // write or the peer's first bytes; a takeover's as soon as this handle is
  // open, or once node's own writes are out) reads only to see the peer's
  // EOF or reset, or bytes that start it: what it buffers meanwhile has a
  // bound.
  bool room = engine_->started() || engine_->enc_in().size() < kUnstartedInput;
  if (engine_->WantsInput() && room) {
    native_->ReadStart();
  } else {
    native_->ReadStop();
  }
}

void TLSWrap::Thrown(const Napi::Error& error) {
  if (to_caller_ && !thrown_) {
    thrown_.emplace(error);
  } else {
    ReportUncaught(Env(), error.Value());
  }
}

void TLSWrap::Call(const Napi::FunctionReference& fn, std::initializer_list<napi_value> args) {
  try {
    if (CallJs(Env(), Value(), fn, args, *async_context_) != JsCallResult::kOk) {
      // JS can no longer run here: behave as destroyed; the environment's
      // cleanup hook closes what is left.
      MarkDestroyed();
    }
  } catch (const Napi::Error& e) {
    Thrown(e);
  }
}

bool TLSWrap::Deliver(const Batch& batch, size_t* event, size_t* byte) {
  // Each position moves on before its call: what a listener threw at was
  // delivered.
  while (*event < batch.events.size()) {
    const Event& next = batch.events[*event];
    size_t at = std::min(next.offset, batch.len);
    if (at > *byte) {
      if (dead()) return true;
      size_t from = *byte;
      *byte = at;
      DeliverData(batch, from, at, byte);
      if (thrown_) return false;
    }
    if (dead()) return true;
    ++*event;
    DeliverEvent(next);
    if (thrown_) return false;
  }
  if (batch.len > *byte && !dead()) {
    size_t from = *byte;
    *byte = batch.len;
    DeliverData(batch, from, batch.len, byte);
    if (thrown_) return false;
  }
  return true;
}

// Deliver*() make their handles in the scope of the step or rest that calls
// them.
void TLSWrap::DeliverData(const Batch& batch, size_t from, size_t to, size_t* byte) {
  Napi::Env env = Env();
  const char* data = batch.data + from;
  size_t len = to - from;
  if (!batch.in_target || clear_target_.IsEmpty()) {
    Call(on_data_, {Napi::Buffer<char>::Copy(env, data, len)});
    return;
  }
  if (!read_buffer_.IsEmpty()) {
    DeliverOnread(batch, from, to, byte);
    return;
  }
  if (!TargetIntact()) {
    ReadGone();
    return;
  }
  auto offset = Napi::Number::New(env, static_cast<double>(data - target_base_));
  Call(on_data_, {clear_target_, offset, Napi::Number::New(env, static_cast<double>(len))});
}

bool TLSWrap::TargetIntact() const {
  if (clear_target_.IsEmpty()) return true;
  auto view = clear_target_.As<Napi::Uint8Array>();
  return reinterpret_cast<const char*>(view.Data()) == target_base_ &&
         view.ByteLength() == target_size_;
}

// The plaintext in the target went with its memory: the stream cannot go on
// as sent. Nothing more leaves the engine; JS destroys the socket with an
// error.
void TLSWrap::ReadGone() {
  clear_target_ = Napi::Object();
  MarkDestroyed();
  Call(on_event_,
       {Napi::Number::New(Env(), static_cast<int>(EventType::kReadGone)), Env().Undefined()});
}

void TLSWrap::DeliverEvent(const Event& event) {
  Napi::Env env = Env();
  Napi::Value arg = env.Undefined();
  switch (event.type) {
    case EventType::kShutdown:
      // The native transport half-closes itself once the close_notify is
      // written and reports back (OnTransportShutdown); JS ends its own.
      if (transport_ && transport_->Shutdown()) return;
      break;
    case EventType::kSession:
    case EventType::kKeylog:
    case EventType::kNewSession:
    case EventType::kResumeSession:
      arg = Napi::Buffer<char>::Copy(env, event.payload.data(), event.payload.size());
      break;
    case EventType::kCertCb:
      // The servername, and whether the client asked for OCSP stapling.
      Call(on_event_, {Napi::Number::New(env, static_cast<int>(event.type)),
                       WireString(env, event.payload.data(), event.payload.size()),
                       Napi::Boolean::New(env, event.value != 0)});
      return;
    case EventType::kOCSPResponse:
      // node:tls hands null to 'OCSPResponse' when nothing was stapled.
      if (event.value != 0) {
        arg = Napi::Buffer<char>::Copy(env, event.payload.data(), event.payload.size());
      } else {
        arg = env.Null();
      }
      break;
    case EventType::kError:
      arg = TlsError(env, static_cast<unsigned long>(event.value), "TLS connection failed",
                     event.payload)
                .Value();
      break;
    case EventType::kTransportError: {
      Napi::Object info = Napi::Object::New(env);
      info.Set("errno", -static_cast<double>(event.value));
      info.Set("syscall", event.payload);
      arg = info;
      break;
    }
    case EventType::kWriteDone:
      if (event.value == sync_write_id_) {
        // writev() is on the stack and tells JS itself.
        sync_write_done_ = true;
        return;
      }
      arg = Napi::Number::New(env, static_cast<double>(event.value));
      break;
    case EventType::kWriteGone:
      arg = Napi::Number::New(env, static_cast<double>(event.value));
      break;
    default:
      break;
  }
  Call(on_event_, {Napi::Number::New(env, static_cast<int>(event.type)), arg});
}

}  // namespace tlswrap
