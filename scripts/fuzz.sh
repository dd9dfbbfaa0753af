#!/usr/bin/env bash
# npm run fuzz -- <target> [seconds] [libFuzzer options...]: builds the
# libFuzzer targets (fuzz/Makefile, clang + ASan + UBSan, into build-fuzz/)
# and runs <target> for that long (default 60 s) on a scratch copy of its
# committed corpus (fuzz/corpus/<target>), so a run never writes into git.
# Prints the number of executions; a crash leaves its input in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: npm run fuzz -- <target> [seconds] [libFuzzer options...]}
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
[ -f "fuzz/$target.cc" ] || { echo "no such fuzz target: $target" >&2; exit 2; }
make -s -C fuzz OUT="$PWD/build-fuzz" TARGETS="$target" -j 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp -r "fuzz/corpus/$target/." "$work/corpus/" 2>/dev/null || true
mkdir -p build-fuzz/crashes
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
start=$SECONDS
"build-fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 \
  -artifact_prefix="build-fuzz/crashes/$target-" "$@" "$work/corpus" >"$work/log" 2>&1 || status=$?
grep -vE '^(#[0-9]+|INFO:|MS:|\s*$|"[^"]*" # Uses)' "$work/log" | grep -v 'Recommended dictionary' | tail -n 40 || true
execs=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$work/log" | awk '{print $2}' || true)
if [ "$status" -eq 0 ]; then
  echo "fuzz $target: ${execs:-0} executions in $((SECONDS - start))s, no crash"
else
  echo "fuzz $target: FAILED (exit $status) after ${execs:-?} executions; input in build-fuzz/crashes/"
fi
exit $status
