#!/usr/bin/env bash
# npm run test:engine: builds the pure C++ engine (src/engine) with its own
# tests (test/engine) against the system OpenSSL, with ASan and UBSan, into
# build-engine/, and runs them. No node needed. Arguments: a name filter.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s -C test/engine OUT="$PWD/build-engine" -j 2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
exec build-engine/engine-test "$@"
