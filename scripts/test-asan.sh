#!/usr/bin/env bash
# npm run test:asan: builds the addon with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-asan/ (build/Release is left alone)
# and runs the whole mocha suite on both transports against that build.
# The first finding aborts the run with its report and a non-zero status.
# Arguments, if any, are the test files to run instead of all of them.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node-gyp >/dev/null; then
  echo 'node-gyp is not on PATH: run this as `npm run test:asan`' >&2
  exit 1
fi
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
if [ ! -e "$asan" ] || [ ! -e "$ubsan" ]; then
  echo "libasan/libubsan not found (gcc -print-file-name gave $asan, $ubsan)" >&2
  exit 1
fi

# node-gyp always builds into ./build of the directory holding binding.gyp:
# give it one of its own whose src/ is the real one.
dir=build-asan
mkdir -p "$dir"
cp binding.gyp "$dir/"
ln -sfn ../src "$dir/src"
flags='-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g'
CFLAGS="$flags" CXXFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" \
  node-gyp rebuild -C "$dir" --jobs 2 >"$dir/build.log" 2>&1 ||
  { tail -n 40 "$dir/build.log" >&2; exit 1; }
addon="$PWD/$dir/build/Release/tlswrap.node"
# A build without sanitizers would pass silently: make sure it has them.
# (nm's output is kept first: under pipefail, grep -q closing the pipe early
# would fail the check with SIGPIPE on a good build.)
symbols=$(nm -D "$addon")
grep -q __asan_report <<<"$symbols" || { echo "$addon is not instrumented" >&2; exit 1; }

export TLSWRAP_ADDON="$addon"
# node is not instrumented, so the sanitizer runtimes must be loaded first.
export LD_PRELOAD="$asan $ubsan"
# node leaks at exit by design; V8 handles SIGSEGV itself (wasm traps).
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1:handle_segv=0:allow_user_segv_handler=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Everything runs a few times slower under the sanitizers.
timeout=60000

mocha=(node_modules/.bin/mocha --timeout "$timeout")
# Files given replace .mocharc.js's list of all of them.
if [ $# -gt 0 ]; then mocha+=(--no-config --reporter spec "$@"); fi

start=$(date +%s)
status=0
"${mocha[@]}" || status=$?
if [ $status -eq 0 ]; then
  TLSWRAP_TRANSPORT=js "${mocha[@]}" || status=$?
fi
echo "test:asan: $(( $(date +%s) - start )) s, exit status $status"
exit $status
