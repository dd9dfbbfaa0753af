// Entering JavaScript from the engine: napi_make_callback with the socket's
// async context, and a clear answer for the one case node-addon-api would
// turn into a fatal error: an environment that is shutting down (a worker
// being terminated or calling process.exit()) can no longer run JS at all.
#ifndef TLSWRAP_JS_CALL_H_
#define TLSWRAP_JS_CALL_H_

#include <napi.h>

#include <cstdint>
#include <initializer_list>

namespace tlswrap {

// How many times native code on this thread has called into JavaScript.
// Every such call bumps it first (CallJs and the few direct calls). Memory
// read from a JS ArrayBuffer stays valid while the count is unchanged and
// the native call that read it has not returned: only JavaScript detaches.
inline thread_local uint64_t js_entries = 0;
inline void NoteJsEntry() {
  ++js_entries;
}

// Reports `error` as uncaught: 'uncaughtException' listeners run at once.
inline void ReportUncaught(napi_env env, napi_value error) {
  NoteJsEntry();
  napi_fatal_exception(env, error);
}

enum class JsCallResult { kOk, kEnvironmentStopping };

// Calls `fn` on `recv`. A JS exception is rethrown as a Napi::Error (the
// caller is on a JS frame, or turns it into an uncaught one); a call that
// could not run because JS execution is over returns kEnvironmentStopping.
JsCallResult CallJs(Napi::Env env, Napi::Object recv, const Napi::FunctionReference& fn,
                    std::initializer_list<napi_value> args, napi_async_context context,
                    Napi::Value* result = nullptr);

}  // namespace tlswrap

#endif  // TLSWRAP_JS_CALL_H_
