// ESM entry: the names of lib/index.js as named exports, and the module object
// itself as the default export (so `import tls from 'tlswrap'` works as
// `import tls from 'node:tls'` does). A name the running Node's node:tls lacks
// is undefined here (ESM cannot export a name conditionally).
//
// DEFAULT_* and CLIENT_RENEG_* are `let` bindings that follow writes to the
// module object (tls.DEFAULT_MIN_VERSION = 'TLSv1.3') at once; node:tls's own
// ESM bindings follow only after module.syncBuiltinESMExports().

import tls from './index.js';
import live from './live.js';

export default tls;

export const {
  connect,
  createServer,
  createSecureContext,
  checkServerIdentity,
  convertALPNProtocols,
  getCiphers,
  SecureContext,
  Server,
  TLSSocket,
  rootCertificates,
  getCACertificates,
  setDefaultCACertificates,
  getCertificateCompressionAlgorithms,
  createSecurePair,
  SessionCache,
} = tls;

export let DEFAULT_CIPHERS = tls.DEFAULT_CIPHERS;
export let DEFAULT_ECDH_CURVE = tls.DEFAULT_ECDH_CURVE;
export let DEFAULT_MIN_VERSION = tls.DEFAULT_MIN_VERSION;
export let DEFAULT_MAX_VERSION = tls.DEFAULT_MAX_VERSION;
export let CLIENT_RENEG_LIMIT = tls.CLIENT_RENEG_LIMIT;
export let CLIENT_RENEG_WINDOW = tls.CLIENT_RENEG_WINDOW;

live.onDefaultSet((name, value) => {
  switch (name) {
    case 'DEFAULT_CIPHERS': DEFAULT_CIPHERS = value; break;
    case 'DEFAULT_ECDH_CURVE': DEFAULT_ECDH_CURVE = value; break;
    case 'DEFAULT_MIN_VERSION': DEFAULT_MIN_VERSION = value; break;
    case 'DEFAULT_MAX_VERSION': DEFAULT_MAX_VERSION = value; break;
    case 'CLIENT_RENEG_LIMIT': CLIENT_RENEG_LIMIT = value; break;
    case 'CLIENT_RENEG_WINDOW': CLIENT_RENEG_WINDOW = value; break;
  }
});
