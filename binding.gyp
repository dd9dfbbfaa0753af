{
  "targets": [
    {
      "target_name": "tlswrap",
      "sources": [
        "src/binding/addon.cc",
        "src/binding/buffer_release.cc",
        "src/binding/errors.cc",
        "src/binding/idle_sweep.cc",
        "src/binding/js_call.cc",
        "src/binding/secure_context.cc",
        "src/binding/tls_wrap.cc",
        "src/binding/tls_wrap_cycle.cc",
        "src/binding/tls_wrap_delegate.cc",
        "src/binding/tls_wrap_info.cc",
        "src/binding/tls_wrap_transport.cc",
        "src/engine/cert_compression.cc",
        "src/engine/cipher_buffer.cc",
        "src/engine/context_config.cc",
        "src/engine/engine.cc",
        "src/engine/engine_control.cc",
        "src/engine/engine_writes.cc",
        "src/engine/engine_callbacks.cc",
        "src/engine/root_store.cc",
        "src/transport_js.cc",
        "src/transport_uv.cc"
      ],
      "include_dirs": [
        "src",
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        # A worker being terminated can stop running JS between the moment a
        # call fails and the moment the wrapper rethrows its error into JS:
        # napi_throw then fails and node-addon-api would throw a C++
        # exception out of the callback (std::terminate). Drop it instead;
        # the environment is going away anyway.
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "OPENSSL_API_COMPAT=30000"
      ],
      # OpenSSL's headers come from node's own include dir (node-gyp adds it)
      # and its symbols from the node binary: no second libssl is linked.
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-fvisibility=hidden", "-O2"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "GCC_SYMBOLS_PRIVATE_EXTERN": "YES"
      },
      "msvs_settings": {
        "VCCLCompilerTool": { "ExceptionHandling": 1 }
      }
    }
  ]
}
