#include "js_call.h"

namespace tlswrap {

JsCallResult CallJs(Napi::Env env, Napi::Object recv, const Napi::FunctionReference& fn,
                    std::initializer_list<napi_value> args, napi_async_context context,
                    Napi::Value* result) {
  NoteJsEntry();
  napi_value out = nullptr;
  napi_status status =
      napi_make_callback(env, context, recv, fn.Value(), args.size(), args.begin(), &out);
  if (status == napi_ok) {
    if (result != nullptr) *result = Napi::Value(env, out);
    return JsCallResult::kOk;
  }
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  napi_value exception = nullptr;
  if (pending) napi_get_and_clear_last_exception(env, &exception);
  // A terminating environment reports its termination as a pending
  // exception, but nothing can be done with it (not even wrapping it in an
  // Error, which fails fatally): probe whether JS objects still work.
  napi_value probe = nullptr;
  napi_value flag = nullptr;
  bool js_works = napi_create_object(env, &probe) == napi_ok &&
                  napi_get_boolean(env, true, &flag) == napi_ok &&
                  napi_set_named_property(env, probe, "alive", flag) == napi_ok;
  if (pending && js_works) throw Napi::Error(env, exception);
  return JsCallResult::kEnvironmentStopping;
}

}  // namespace tlswrap
