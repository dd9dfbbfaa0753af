'use strict';

// connect() without a `secureContext` shares one client SecureContext between
// calls whose context options are equal, instead of building an SSL_CTX per
// connection (node:tls builds one per call): that costs CPU on every connect
// and memory on every open connection. Only the SSL_CTX is shared; everything
// per connection (verify mode, servername, ALPN, session, PSK, keylog) is set
// on the connection's SSL, and the client session cache keys sessions by the
// options themselves, so sharing changes what no connection sees.
//
// Fail-safe rules:
// - every option that is not known to be connection-only is part of the key
//   (a list of what may be left out, not of what must be put in), and so are
//   the module defaults createSecureContext falls back on and the version of
//   the default CA store;
// - bytes are keyed by content (a ca Buffer rewritten in place gives another
//   key), a value that cannot be keyed safely (a class instance, an object
//   with a prototype of its own) means no sharing for that call;
// - no sharing at all while the program has replaced createSecureContext:
//   it is then called on every connect, as node:tls calls it.
// Module state is per environment (each worker thread loads its own copy).

const crypto = require('node:crypto');
const { defaultStore } = require('./ca');
const defaults = require('./defaults');
const { identity } = require('./identity');
const { bufferOf } = require('./bytes');

const MAX_CONTEXTS = 64;

// Options read by the connection (net.connect, the TLSSocket, connect()'s own
// checks) or by https/http2 on the way, never by createSecureContext.
const connectionOnly = new Set([
  // net.connect
  'host', 'port', 'path', 'family', 'localAddress', 'localPort', 'lookup', 'hints', 'autoSelectFamily',
  'autoSelectFamilyAttemptTimeout', 'noDelay', 'keepAlive', 'keepAliveInitialDelay', 'allowHalfOpen',
  'timeout', 'signal', 'socket', 'onread', 'highWaterMark', 'readableHighWaterMark', 'writableHighWaterMark',
  'blockList',
  // the TLS connection (set on its SSL, or checked by connect())
  'servername', 'session', 'sessionCache', 'ALPNProtocols', 'pskCallback', 'pskIdentityHint',
  'checkServerIdentity', 'rejectUnauthorized', 'requestCert', 'minDHSize', 'requestOCSP', 'enableTrace',
  'secureContext', 'isServer', 'server', 'SNICallback', 'ALPNCallback', 'handshakeTimeout',
  // https.request / Agent options that reach connect()
  'agent', '_defaultAgent', '_agentKey', 'auth', 'createConnection', 'defaultPort', 'headers', 'hostname',
  'href', 'method', 'protocol', 'setHost', 'socketPath', 'encoding', 'uniqueHeaders', 'joinDuplicateHeaders',
  'insecureHTTPParser', 'maxHeaderSize', 'keepAliveMsecs', 'maxSockets', 'maxFreeSockets', 'maxTotalSockets',
  'maxCachedSessions', 'scheduling', 'search', 'pathname', 'hash', 'query', 'origin', 'username', 'password',
  'setDefaultHeaders', 'proxyEnv',
]);

class NotKeyable extends Error {}

// crypto.hash (Node >= 20.12) is the one-shot form, without a Hash object.
const sha256 = typeof crypto.hash === 'function' ?
  (data) => crypto.hash('sha256', data, 'base64') :
  (data) => crypto.createHash('sha256').update(data).digest('base64');

// Hashing a 200 KiB CA bundle costs more than the context it saves, so a
// large view's digest is remembered with a copy of its bytes: comparing them
// again is a memcmp, and a view rewritten in place is hashed anew.
const SMALL = 1024;
const viewDigests = new WeakMap(); // view -> { copy, digest }
function viewToken(view) {
  const bytes = bufferOf(view);
  if (bytes.length <= SMALL) return `B${sha256(bytes)}`;
  let seen = viewDigests.get(view);
  if (seen === undefined || !seen.copy.equals(bytes)) {
    seen = { copy: Buffer.from(bytes), digest: sha256(bytes) };
    viewDigests.set(view, seen);
  }
  return `B${seen.digest}`;
}

// Strings never change: a long one's digest is looked up by the string (V8
// keeps a string's hash in it, and hashes very long ones by length only), so
// a cipher list or a PEM text is not escaped or hashed again on each connect.
const stringDigests = new Map();
function stringToken(value) {
  if (value.length <= 64) return JSON.stringify(value);
  let digest = stringDigests.get(value);
  if (digest === undefined) {
    if (stringDigests.size >= 256) stringDigests.clear();
    digest = sha256(value);
    stringDigests.set(value, digest);
  }
  return `S${digest}`;
}

// An unambiguous text for what createSecureContext could read of `value`.
function token(value, depth) {
  switch (typeof value) {
    case 'undefined':
      return 'u';
    case 'boolean':
      return value ? 't' : 'f';
    case 'number':
      return Object.is(value, -0) ? 'd-0' : `d${value}`;
    case 'bigint':
      return `g${value}`;
    case 'string':
      return stringToken(value);
    case 'function':
      // Called, if at all, by the code it came from: the same function is the
      // same behaviour.
      return `F${identity(value)}`;
    case 'object':
      break;
    default:
      throw new NotKeyable();
  }
  if (value === null) return 'n';
  if (ArrayBuffer.isView(value)) return viewToken(value);
  if (depth > 4) throw new NotKeyable();
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype || value.length > 10000) throw new NotKeyable();
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${token(value[i], depth + 1)},`;
    return `${out}]`;
  }
  // { pem, passphrase } keys, { buf, passphrase } pfx entries: plain data
  // only; an inherited or computed property could differ unseen.
  if (proto !== Object.prototype && proto !== null) throw new NotKeyable();
  let out = '{';
  for (const name of Object.getOwnPropertyNames(value).sort()) {
    const desc = Object.getOwnPropertyDescriptor(value, name);
    if (!('value' in desc)) throw new NotKeyable();
    out += `${JSON.stringify(name)}:${valueToken(name, desc.value, depth + 1)},`;
  }
  return `${out}}`;
}

// A passphrase is kept in the key as a digest, not as text.
function valueToken(name, value, depth) {
  if (name === 'passphrase' && typeof value === 'string') return `P${sha256(value)}`;
  return token(value, depth);
}

// What createSecureContext falls back on where an option is not given.
const defaultNames = ['DEFAULT_CIPHERS', 'DEFAULT_MIN_VERSION', 'DEFAULT_MAX_VERSION', 'DEFAULT_ECDH_CURVE'];

// The key of connect()'s options, or null where they cannot be keyed.
function contextKey(options) {
  let key = `${defaultStore().version}`;
  try {
    for (const name of defaultNames) key += `|${token(defaults[name], 0)}`;
    for (const name of Object.keys(options).sort()) {
      if (connectionOnly.has(name)) continue;
      const value = options[name];
      // Absent and undefined are the same to createSecureContext.
      if (value === undefined) continue;
      key += `|${JSON.stringify(name)}=${valueToken(name, value, 0)}`;
    }
  } catch (err) {
    if (err instanceof NotKeyable) return null;
    throw err;
  }
  return key;
}

// key -> SecureContext; a Map iterates in insertion order, so re-inserting
// on use keeps the least recently used first.
const contexts = new Map();

// A client context for connect()'s `options`: a shared one, or, when it cannot
// be shared, a fresh one marked singleUse (the socket frees it). `create` is
// the module's createSecureContext as it is now; `original` is tlswrap's own;
// `key` is contextKey(options).
function clientContext(options, create, original, key) {
  if (create !== original) key = null;
  if (key === null) {
    const context = create(options);
    context.singleUse = true;
    return context;
  }
  let context = contexts.get(key);
  if (context !== undefined) {
    contexts.delete(key);
    contexts.set(key, context);
    return context;
  }
  context = create(options);
  contexts.set(key, context);
  if (contexts.size > MAX_CONTEXTS) {
    const [oldest, evicted] = contexts.entries().next().value;
    contexts.delete(oldest);
    // Connections made with it keep the SSL_CTX through their SSL.
    evicted.context.close();
  }
  return context;
}

module.exports = { clientContext, contextKey, sha256, MAX_CONTEXTS };
