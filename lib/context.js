'use strict';

// createSecureContext(): node:tls options -> a native SecureContext. Option
// checks and their error codes follow node:tls, since that is what callers
// catch on.

const { constants: { SSL_OP_CIPHER_SERVER_PREFERENCE } } = require('node:crypto');
const nodeTls = require('node:tls');
const { inspect } = require('node:util');
const { markAsUncloneable } = require('node:worker_threads');
const binding = require('./binding');
const { bufferOf } = require('./bytes');
const { defaultStore } = require('./ca');
const defaults = require('./defaults');
const { codedError, invalidArgInstance, invalidArgType, validateInteger } = require('./errors');

const { TLS1_VERSION, TLS1_1_VERSION, TLS1_2_VERSION, TLS1_3_VERSION } = binding.constants;

const protocolVersions = {
  'TLSv1': TLS1_VERSION,
  'TLSv1.1': TLS1_1_VERSION,
  'TLSv1.2': TLS1_2_VERSION,
  'TLSv1.3': TLS1_3_VERSION,
};

// Old secureProtocol method names pin one version or a range, as node's
// SecureContext::Init maps them: TLS_method allows every version OpenSSL
// has (0: no minimum), SSLv23_method keeps the default minimum and caps at
// TLS 1.2 (null: the default).
const secureProtocols = {
  TLS_method: [0, TLS1_3_VERSION],
  SSLv23_method: [null, TLS1_2_VERSION],
  TLSv1_method: [TLS1_VERSION, TLS1_VERSION],
  TLSv1_1_method: [TLS1_1_VERSION, TLS1_1_VERSION],
  TLSv1_2_method: [TLS1_2_VERSION, TLS1_2_VERSION],
};
for (const name of Object.keys(secureProtocols)) {
  secureProtocols[name.replace('_method', '_client_method')] = secureProtocols[name];
  secureProtocols[name.replace('_method', '_server_method')] = secureProtocols[name];
}
const disabledProtocols = {};
for (const version of ['SSLv2', 'SSLv3']) {
  for (const kind of ['', '_client', '_server']) disabledProtocols[`${version}${kind}_method`] = version;
}

// node's %j in its error messages.
function asJson(value) {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 'undefined' : text;
  } catch {
    return '[Circular]';
  }
}

function toVersion(which, value, fallback) {
  if (value === undefined || value === null) value = fallback;
  const v = typeof value === 'string' && Object.hasOwn(protocolVersions, value) ? protocolVersions[value] : undefined;
  if (v === undefined) {
    throw codedError(TypeError, 'ERR_TLS_INVALID_PROTOCOL_VERSION',
                     `${asJson(value)} is not a valid ${which} TLS protocol version`);
  }
  return v;
}

function isKeyOrCert(value) {
  return typeof value === 'string' || ArrayBuffer.isView(value);
}

function checkKeyOrCert(name, value) {
  if (!isKeyOrCert(value)) {
    throw invalidArgType(name, ['string', 'Buffer', 'TypedArray', 'DataView'], value);
  }
}

// tlswrap has no OpenSSL engines: node's own answer where a build has none
// (ERR_CRYPTO_CUSTOM_ENGINE_NOT_SUPPORTED), after node's checks of the types.
function checkEngineOptions(options, key) {
  const { clientCertEngine, privateKeyEngine, privateKeyIdentifier } = options;
  const notSupported = () => codedError(Error, 'ERR_CRYPTO_CUSTOM_ENGINE_NOT_SUPPORTED',
                                        'Custom engines not supported by this OpenSSL');
  const absent = (value) => value === undefined || value === null;
  if (!absent(privateKeyIdentifier)) {
    if (absent(privateKeyEngine)) {
      throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                       `The property 'options.privateKeyEngine' is invalid. Received ${inspect(privateKeyEngine)}`);
    }
    if (key) {
      throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                       `The property 'options.privateKeyIdentifier' is invalid. Received ${inspect(privateKeyIdentifier)}`);
    }
    if (typeof privateKeyIdentifier !== 'string') {
      throw invalidArgType('options.privateKeyIdentifier', ['string', 'null', 'undefined'], privateKeyIdentifier);
    }
    if (typeof privateKeyEngine !== 'string') {
      throw invalidArgType('options.privateKeyEngine', ['string', 'null', 'undefined'], privateKeyEngine);
    }
    throw notSupported();
  }
  if (typeof clientCertEngine === 'string') throw notSupported();
  if (!absent(clientCertEngine)) {
    throw invalidArgType('options.clientCertEngine', ['string', 'null', 'undefined'], clientCertEngine);
  }
}

// Session ticket keys: one key of 48 bytes, as node:tls takes, or several,
// newest first (a fleet sharing and rotating them). `name` as node's errors
// call it.
function ticketKeysBuffer(keys, name) {
  if (!ArrayBuffer.isView(keys)) throw invalidArgType(name, ['Buffer', 'TypedArray', 'DataView'], keys);
  if (keys.byteLength === 0 || keys.byteLength % 48 !== 0) {
    throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                     `The ${name.includes('.') ? 'property' : 'argument'} '${name}' must be exactly 48 bytes ` +
                     `(or a multiple of 48: several keys, newest first). Received ${keys.byteLength}`);
  }
  return bufferOf(keys);
}

function asPem(value) {
  if (typeof value === 'string' || Buffer.isBuffer(value)) return value;
  return bufferOf(value);
}

class SecureContext {
  constructor(options = {}) {
    const { secureProtocol, secureOptions } = options;
    let { minVersion, maxVersion } = options;
    // node's SecureContext::Init: a *_server_method or *_client_method
    // context serves that role only.
    const role = typeof secureProtocol !== 'string' ? undefined :
      secureProtocol.endsWith('_server_method') ? 'server' :
        secureProtocol.endsWith('_client_method') ? 'client' : undefined;
    const context = new binding.SecureContext(role);
    this.context = context;
    // As node:tls's, it cannot be posted to another thread (Node 22.10+
    // can say so): a clone would be an empty object that looks like one.
    if (markAsUncloneable !== undefined) {
      markAsUncloneable(this);
      markAsUncloneable(context);
    }

    let min;
    let max;
    // As node: a secureProtocol that is not a string names no method (the
    // versions decide), after the conflict check, which a falsy one skips.
    if (secureProtocol && (minVersion != null || maxVersion != null)) {
      throw codedError(TypeError, 'ERR_TLS_PROTOCOL_VERSION_CONFLICT',
                       `TLS protocol version ${asJson(minVersion != null ? minVersion : maxVersion)} ` +
                       `conflicts with secureProtocol ${asJson(secureProtocol)}`);
    }
    if (typeof secureProtocol === 'string') {
      if (disabledProtocols[secureProtocol]) {
        throw codedError(TypeError, 'ERR_TLS_INVALID_PROTOCOL_METHOD',
                         `${disabledProtocols[secureProtocol]} methods disabled`);
      }
      const range = secureProtocols[secureProtocol];
      if (!range) {
        throw codedError(TypeError, 'ERR_TLS_INVALID_PROTOCOL_METHOD',
                         `Unknown method: ${secureProtocol}`);
      }
      [min, max] = range;
      if (min === null) min = toVersion('minimum', undefined, defaults.DEFAULT_MIN_VERSION);
    } else {
      min = toVersion('minimum', minVersion, defaults.DEFAULT_MIN_VERSION);
      max = toVersion('maximum', maxVersion, defaults.DEFAULT_MAX_VERSION);
    }
    this._min = min;
    this._max = max;
    context.setMinProto(min);
    context.setMaxProto(max);
    // As node's createSecureContext: honorCipherOrder is one more option
    // bit (a value that is no number becomes that bit alone), and the
    // result must be a safe integer. Unlike node's `|=`, bits above 31
    // survive, and bit 31 does not turn the value negative.
    let flags = secureOptions;
    if (options.honorCipherOrder) {
      flags = Number.isSafeInteger(secureOptions) && secureOptions >= 0 ?
        Number(BigInt(secureOptions) | BigInt(SSL_OP_CIPHER_SERVER_PREFERENCE)) :
        secureOptions | SSL_OP_CIPHER_SERVER_PREFERENCE;
    }
    if (flags) {
      validateInteger(flags, 'secureOptions', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
      context.setOptions(flags);
    }
  }
}

// node:tls's split of one `ciphers` string: names starting TLS_ (or !TLS_)
// are TLS 1.3 suites, the rest the TLS 1.2 list. '' and null mean the
// default, and no TLS 1.3 name keeps OpenSSL's default TLS 1.3 suites.
function setCiphers(sc, ciphers) {
  const context = sc.context;
  if (ciphers !== undefined && ciphers !== null && typeof ciphers !== 'string') {
    throw invalidArgType('options.ciphers', 'string', ciphers);
  }
  const parts = (ciphers || defaults.DEFAULT_CIPHERS).split(':');
  const isSuite = (c) => c.startsWith('TLS_') || c.startsWith('!TLS_');
  const cipherSuites = parts.filter((c) => c !== '' && isSuite(c)).join(':');
  const cipherList = parts.filter((c) => c !== '' && !isSuite(c)).join(':');
  if (cipherSuites === '' && cipherList === '') {
    throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                     `The property 'options.ciphers' is invalid. Received ${inspect(parts)}`);
  }
  if (cipherSuites !== '') context.setCipherSuites(cipherSuites);
  // An empty TLS 1.2 list is set too: it means "TLS 1.3 only".
  context.setCiphers(cipherList);
  if (cipherList === '' && sc._min < TLS1_3_VERSION && sc._max > TLS1_2_VERSION) {
    sc._min = TLS1_3_VERSION;
    context.setMinProto(TLS1_3_VERSION);
  }
}

const MAX_TICKET_KEY_ROTATION = 2 ** 31 - 1;

function configure(sc, options) {
  const context = sc.context;
  const {
    ca, cert, key, passphrase, pfx, crl, sigalgs, sessionIdContext, sessionTimeout, ticketKeys,
  } = options;
  const ecdhCurve = options.ecdhCurve === undefined ? defaults.DEFAULT_ECDH_CURVE : options.ecdhCurve;

  // Ciphers before anything else, as node:tls does: an @SECLEVEL in the
  // list decides which keys and certificates load below.
  setCiphers(sc, options.ciphers);

  // CAs first, then the certificate, then the key: OpenSSL checks the key
  // against the certificate already set.
  if (ca) {
    const texts = [];
    for (const one of Array.isArray(ca) ? ca : [ca]) {
      checkKeyOrCert('options.ca', one);
      texts.push(asPem(one));
    }
    context.addCACert(texts);
  } else {
    const roots = defaultStore();
    context.useDefaultRoots(roots.pems, roots.version, roots.defaultPaths);
  }
  if (options.allowPartialTrustChain) context.setPartialChain();
  if (cert) {
    for (const one of Array.isArray(cert) ? cert : [cert]) {
      checkKeyOrCert('options.cert', one);
      context.setCert(asPem(one));
    }
  }
  if (key) {
    // As node:tls: only an array's entries may be { pem, passphrase }.
    const entries = Array.isArray(key) ? key : [{ pem: key, passphrase }];
    for (const one of entries) {
      const pem = one?.pem !== undefined ? one.pem : one;
      const pass = one?.passphrase !== undefined ? one.passphrase : passphrase;
      checkKeyOrCert('options.key', pem);
      if (pass !== undefined && pass !== null && typeof pass !== 'string') {
        throw invalidArgType('options.passphrase', 'string', pass);
      }
      context.setKey(asPem(pem), pass);
    }
  }

  // Checked where node:tls checks it (after the key), but the certificates
  // are compressed last, once a pfx has had its turn too.
  const compress = certificateCompression(options.certificateCompression, sc._max);
  if (compress !== null) context.setCertificateCompression(compress);

  if (typeof ecdhCurve !== 'string') throw invalidArgType('options.ecdhCurve', 'string', ecdhCurve);
  context.setECDHCurve(ecdhCurve);

  const { dhparam } = options;
  if (dhparam !== undefined && dhparam !== null) {
    checkKeyOrCert('options.dhparam', dhparam);
    const warning = context.setDHParam(dhparam === 'auto' || asPem(dhparam));
    if (warning) process.emitWarning(warning, 'SecurityWarning');
  }

  if (crl !== undefined && crl !== null) {
    for (const one of Array.isArray(crl) ? crl : [crl]) {
      checkKeyOrCert('options.crl', one);
      context.addCRL(asPem(one));
    }
  }
  if (sessionIdContext !== undefined && sessionIdContext !== null) {
    if (typeof sessionIdContext !== 'string') {
      throw invalidArgType('options.sessionIdContext', 'string', sessionIdContext);
    }
    context.setSessionIdContext(sessionIdContext);
  }
  if (pfx !== undefined && pfx !== null) {
    for (const one of Array.isArray(pfx) ? pfx : [pfx]) {
      // As node's: bytes that are none cannot be loaded, a falsy passphrase
      // is none, and one that is neither text nor bytes is refused.
      const buf = one && one.buf ? one.buf : one;
      const pass = (one && one.passphrase) || passphrase || undefined;
      if (typeof buf !== 'string' && !ArrayBuffer.isView(buf)) {
        throw codedError(Error, 'ERR_CRYPTO_OPERATION_FAILED', 'Unable to load PFX certificate');
      }
      if (pass !== undefined && typeof pass !== 'string' && !ArrayBuffer.isView(pass)) {
        throw codedError(TypeError, 'ERR_INVALID_ARG_TYPE', 'Pass phrase must be a buffer');
      }
      context.loadPKCS12(typeof buf === 'string' ? Buffer.from(buf, 'latin1') : asPem(buf), pass);
    }
  }
  if (sigalgs !== undefined && sigalgs !== null) {
    if (typeof sigalgs !== 'string') throw invalidArgType('options.sigalgs', 'string', sigalgs);
    if (sigalgs === '') {
      throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE', "The property 'options.sigalgs' is invalid. Received ''");
    }
    context.setSigalgs(sigalgs);
  }
  if (ticketKeys !== undefined && ticketKeys !== null) {
    context.setTicketKeys(ticketKeysBuffer(ticketKeys, 'options.ticketKeys'));
  }
  const rotation = options.ticketKeyRotation;
  // null is the default, as for the other options.
  if (rotation !== undefined && rotation !== null) {
    // At most sessionTimeout's bound (68 years): the native interval is
    // counted in nanoseconds, in 64 bits.
    if (typeof rotation !== 'number' || !(rotation >= 0 && rotation <= MAX_TICKET_KEY_ROTATION)) {
      throw codedError(RangeError, 'ERR_OUT_OF_RANGE',
                       'The value of "options.ticketKeyRotation" is out of range. ' +
                       `It must be >= 0 && <= ${MAX_TICKET_KEY_ROTATION} (seconds). Received ${rotation}`);
    }
    context.setTicketRotation(rotation * 1000);
  }
  if (sessionTimeout !== undefined && sessionTimeout !== null) {
    validateInteger(sessionTimeout, 'options.sessionTimeout', 0, 2 ** 31 - 1);
    context.setSessionTimeout(sessionTimeout);
  }
  checkEngineOptions(options, key);
  const { sessionCacheSize } = options;
  if (sessionCacheSize !== undefined) {
    if (!Number.isInteger(sessionCacheSize) || sessionCacheSize < 0) {
      throw codedError(RangeError, 'ERR_OUT_OF_RANGE',
                       'The value of "options.sessionCacheSize" is out of range. It must be an integer >= 0. ' +
                       `Received ${sessionCacheSize}`);
    }
    context.setSessionCacheSize(sessionCacheSize);
  }
  if (compress !== null) context.compressCertificates();
}

// certificateCompression (RFC 8879), where the running node:tls has it
// (Node 24.19+): names in preference order -> RFC 8879 codes, or null for
// "off" (absent or empty), as node checks it; the compressed Certificate
// message exists only in TLS 1.3, so a range without it is an error. Older
// node:tls ignores the option, and so does tlswrap there.
const certCompressionCodes = { zlib: 1, brotli: 2, zstd: 3 };
const hasCertCompression = 'getCertificateCompressionAlgorithms' in require('node:tls');
function certificateCompression(value, maxVersion) {
  if (!hasCertCompression || value === undefined || value === null) return null;
  const name = 'options.certificateCompression';
  if (!Array.isArray(value)) throw invalidArgInstance(name, 'Array', value);
  if (value.length > 3) {
    throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                     `The property '${name}' can specify at most 3 algorithms. Received ${inspect(value)}`);
  }
  const codes = [];
  for (let i = 0; i < value.length; i++) {
    const alg = value[i]; // a hole reads as undefined, and is refused
    const code = typeof alg === 'string' && Object.hasOwn(certCompressionCodes, alg) ? certCompressionCodes[alg] : 0;
    if (code === 0) {
      throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                       `The property '${name}[${i}]' must be 'zlib', 'brotli', or 'zstd'. Received ${inspect(alg)}`);
    }
    codes.push(code);
  }
  if (codes.length === 0) return null;
  if (maxVersion !== 0 && maxVersion < TLS1_3_VERSION) {
    throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                     'certificateCompression requires a TLS protocol range that includes TLSv1.3');
  }
  return codes;
}

function createSecureContext(options) {
  // As node's: no options (any falsy value) is {}.
  if (!options) options = {};
  else if (typeof options !== 'object' || Array.isArray(options)) throw invalidArgType('options', 'Object', options);
  const sc = new SecureContext(options);
  configure(sc, options);
  return sc;
}

// What connect() and Server use: the module's createSecureContext as it is
// now, since programs and tests replace it (tls.createSecureContext = ...),
// as node:tls's own connect() and Server look it up on the module. The
// module object is held once loaded: require() on every connect costs more
// than the lookup it saves.
let tlswrapModule = null;
function currentCreateSecureContext() {
  if (tlswrapModule === null) tlswrapModule = require('./index');
  return tlswrapModule.createSecureContext;
}
function exportedCreateSecureContext(options) {
  return currentCreateSecureContext()(options);
}
// connect()'s default check, looked up the same way.
function currentCheckServerIdentity() {
  if (tlswrapModule === null) tlswrapModule = require('./index');
  return tlswrapModule.checkServerIdentity;
}

// The native context of a secureContext option. Anything else is node:tls's
// error; node:tls's own SecureContext (whose OpenSSL object tlswrap cannot
// reach) gets the same code and says what to use instead.
function nativeContext(value) {
  if (value instanceof SecureContext) return value.context;
  if (value instanceof binding.SecureContext) return value;
  if (value instanceof nodeTls.SecureContext) {
    throw codedError(TypeError, 'ERR_TLS_INVALID_CONTEXT',
                     "context must be a SecureContext made by tlswrap's createSecureContext(), not node:tls's");
  }
  throw codedError(TypeError, 'ERR_TLS_INVALID_CONTEXT', 'context must be a SecureContext');
}

// What an SNICallback answered, as node:tls reads it: `context.context ||
// context`; a primitive means "no context" (the default one serves), an
// object that holds no SecureContext is node's TypeError('Invalid SNI
// context'). undefined: keep the default context.
function sniContext(value) {
  if (!value) return undefined;
  const inner = value.context || value;
  if (inner instanceof binding.SecureContext) return inner;
  if (typeof inner !== 'object' && typeof inner !== 'function') return undefined;
  if (value instanceof nodeTls.SecureContext) {
    throw new TypeError("Invalid SNI context: a SecureContext made by node:tls's createSecureContext() " +
                        "cannot serve tlswrap's connections; use tlswrap's createSecureContext()");
  }
  throw new TypeError('Invalid SNI context');
}

module.exports = {
  SecureContext,
  createSecureContext,
  currentCheckServerIdentity,
  currentCreateSecureContext,
  exportedCreateSecureContext,
  nativeContext,
  sniContext,
  ticketKeysBuffer,
};
