'use strict';

// Loads the native engine. The addon takes OpenSSL's symbols from the running
// node binary; where that binary exports none (Electron, a node linked to a
// shared libssl of another version) the dynamic loader's "undefined symbol"
// would explain nothing, so say what is wrong instead.

const path = require('node:path');

function load() {
  const file = path.join(__dirname, '..', 'build', 'Release', 'tlswrap.node');
  try {
    return require(file);
  } catch (err) {
    if (err && /undefined symbol|symbol not found|Symbol not found|procedure could not be found/i.test(err.message)) {
      const e = new Error(
        'tlswrap needs a Node.js binary that exports its bundled OpenSSL ' +
        `(this one, ${process.execPath} ${process.version}, does not: ${err.message.split('\n')[0]}). ` +
        'Use node:tls on this runtime.');
      e.code = 'ERR_TLSWRAP_NO_OPENSSL';
      e.cause = err;
      throw e;
    }
    if (err && err.code === 'MODULE_NOT_FOUND') {
      const e = new Error(
        `tlswrap's native addon is not built (${file} is missing): run \`npm install\` ` +
        '(or `npm rebuild tlswrap`) with a C++ toolchain available.');
      e.code = 'ERR_TLSWRAP_NOT_BUILT';
      e.cause = err;
      throw e;
    }
    throw err;
  }
}

module.exports = load();
