{
  "targets": [
    {
      "target_name": "tlswrap",
      "sources": [
        "src/addon.cc",
        "src/cipher_buffer.cc",
        "src/errors.cc",
        "src/js_call.cc",
        "src/secure_context.cc",
        "src/tls_wrap.cc",
        "src/tls_wrap_callbacks.cc",
        "src/tls_wrap_info.cc",
        "src/tls_wrap_transport.cc",
        "src/transport_js.cc",
        "src/transport_uv.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
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
