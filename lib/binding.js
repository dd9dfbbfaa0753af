'use strict';

// Loads the native engine. The addon takes OpenSSL's symbols from the running
// node binary; where that binary exports none (Electron, a node linked to a
// shared libssl of another version) the dynamic loader's "undefined symbol"
// would explain nothing, so say what is wrong instead.

const path = require('node:path');

// TLSWRAP_ADDON names another build of the same addon to load instead, for
// testing (`npm run test:asan` points it at a sanitizer build).
const addonPath = process.env.TLSWRAP_ADDON ?
  path.resolve(process.env.TLSWRAP_ADDON) :
  path.join(__dirname, '..', 'build', 'Release', 'tlswrap.node');

// The error to throw for a failed load of `file`: an actionable one where the
// cause is known, the loader's own otherwise.
function explainLoadError(err, file) {
  const message = err && typeof err.message === 'string' ? err.message : '';
  let e;
  if (/undefined symbol|symbol not found|procedure could not be found/i.test(message)) {
    e = new Error(
      'tlswrap needs a Node.js binary that exports its bundled OpenSSL; ' +
      `${process.execPath} (${process.version}) does not (${message.split('\n')[0]}). ` +
      'Use node:tls on this runtime.');
    e.code = 'ERR_TLSWRAP_NO_OPENSSL';
  } else if (err && err.code === 'MODULE_NOT_FOUND') {
    e = new Error(
      `tlswrap's native addon is not built (${file} is missing): run \`npm install\` ` +
      '(or `npm rebuild tlswrap`) with a C++ toolchain available.');
    e.code = 'ERR_TLSWRAP_NOT_BUILT';
  } else {
    return err;
  }
  e.cause = err;
  return e;
}

function load(file = addonPath) {
  try {
    return require(file);
  } catch (err) {
    throw explainLoadError(err, file);
  }
}

module.exports = load();
// Small chunks of every connection share a slab (src/binding/tls_wrap_delegate.cc):
// as node's own Buffer pool is, it is marked untransferable, so posting one
// chunk's `.buffer` to a worker copies it (Node 20) or throws (Node 21+)
// instead of detaching other connections' chunks.
if (typeof module.exports.setSlabMarker === 'function') {
  module.exports.setSlabMarker(require('node:worker_threads').markAsUntransferable);
}
// Server sessions with no server name are bound as the running node:tls
// binds them, so that they resume across its servers and tlswrap's.
if (typeof module.exports.bindUnnamedSessions === 'function') {
  module.exports.bindUnnamedSessions(require('./session_state').nodeBindsSessionsToNames);
}
module.exports.explainLoadError = explainLoadError;
