#!/usr/bin/env bash
# npm run test:valgrind [test files...]: the lifetime tests (destroy from
# callbacks, throwing listeners, EOF, corrupted input, detached write
# buffers) under valgrind's memcheck, on both transports, against the normal
# build in build/Release. Any invalid read or write, use of uninitialised
# memory, or block definitely lost fails the run; the reports are in
# build/valgrind-<transport>.log. (ASan covers the whole suite in
# npm run test:asan; memcheck also sees uninitialised reads, which ASan does
# not.) Takes several minutes: node runs some 20 times slower under it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null ||
  { echo 'valgrind not found: apt-get install -y valgrind' >&2; exit 1; }
[ -e build/Release/tlswrap.node ] ||
  { echo 'build/Release/tlswrap.node missing: run npm install first' >&2; exit 1; }
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(test/destroy.test.js test/reentrancy.test.js test/eof.test.js
    test/corruption.test.js test/socket.test.js test/socket-writes.test.js test/psk.test.js
    test/ocsp.test.js)
fi
status=0
for transport in native js; do
  log="build/valgrind-$transport.log"
  echo "valgrind, $transport transport: ${files[*]}"
  TLSWRAP_TRANSPORT=$transport valgrind --tool=memcheck --error-exitcode=97 \
    --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
    --log-file="$log" node node_modules/mocha/bin/mocha.js --no-config \
    --timeout 600000 "${files[@]}" || status=$?
  grep -E 'ERROR SUMMARY|definitely lost' "$log" | sed "s/^/  /"
  if [ "$status" -ne 0 ]; then
    echo "valgrind: $transport transport failed (status $status); see $log" >&2
    break
  fi
done
exit $status
