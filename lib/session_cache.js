'use strict';

// Client session cache: connect({ sessionCache }) resumes sessions from
// earlier connections to the same peer under the same settings. Opt-in.
//
// Rules (the README's "Client session cache" says why each exists):
// - the key covers everything that must match for a session to be safely
//   reused (peer, name, ALPN offer, trust settings, client identity, versions,
//   ciphers), so a session never crosses settings;
// - only sessions from connections that passed verification go in (fed from
//   the socket's 'session' event, which comes after verification, and only
//   when `authorized`);
// - a session the server declined, or whose handshake failed, is dropped;
// - sessions are kept serialized (DER Buffers), never as live OpenSSL objects;
// - a TLS 1.3 ticket whose lifetime is 0 is not kept (nor handed to a store
//   of the program's);
// - TLS 1.3: the newest few tickets are kept per key and an unused one is
//   offered first; a server seen to take each ticket once gets each once.

const { convertALPNProtocols } = require('./alpn');
const { sha256 } = require('./context_cache');
const { identity } = require('./identity');
const { serverIdentity } = require('./session_state');
const { invalidArgType, validateInteger } = require('./errors');

const TLS1_3_VERSION = 0x0304;
const TICKETS_PER_KEY = 4;

// What the cache reads of a DER SSL_SESSION: SEQUENCE { INTEGER version,
// INTEGER sslVersion, ..., [9] EXPLICIT INTEGER ticket lifetime hint
// OPTIONAL, ... }, OpenSSL leaving the hint out where it is 0. protocol is 0
// when it cannot be read.
function readDerLength(der, at) {
  if (at >= der.length) return null;
  const first = der[at];
  if (!(first & 0x80)) return { length: first, start: at + 1 };
  const n = first & 0x7f;
  if (n === 0 || n > 4 || at + 1 + n > der.length) return null;
  let length = 0;
  for (let k = 0; k < n; k++) length = length * 256 + der[at + 1 + k];
  return { length, start: at + 1 + n };
}

function readDerUint(der, at, end) {
  if (at + 2 > end || der[at] !== 0x02) return -1;
  const n = der[at + 1];
  if (n < 1 || n > 6 || at + 2 + n > end) return -1;
  let v = 0;
  for (let k = 0; k < n; k++) v = v * 256 + der[at + 2 + k];
  return v;
}

function sessionFacts(der) {
  const facts = { protocol: 0, lifetimeHint: 0 };
  if (der.length < 2 || der[0] !== 0x30) return facts;
  const outer = readDerLength(der, 1);
  if (outer === null) return facts;
  const end = Math.min(der.length, outer.start + outer.length);
  for (let at = outer.start, index = 0; at < end; index++) {
    const tag = der[at];
    const field = readDerLength(der, at + 1);
    if (field === null || field.start + field.length > end) break;
    if (index === 1) facts.protocol = Math.max(readDerUint(der, at, end), 0);
    if (tag === 0xa9) facts.lifetimeHint = Math.max(readDerUint(der, field.start, field.start + field.length), 0);
    at = field.start + field.length;
  }
  return facts;
}

// RFC 8446 4.6.1: a TLS 1.3 ticket_lifetime of 0 says to discard the ticket
// at once (OpenSSL's client stops offering it a second later). In TLS 1.2
// (RFC 5077) a hint of 0 means no lifetime was given, and such sessions are
// kept.
function worthStoring(der) {
  const facts = sessionFacts(der);
  return facts.protocol !== TLS1_3_VERSION || facts.lifetimeHint > 0;
}

class SessionCache {
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw invalidArgType('options', 'Object', options);
    const { max = 1024 } = options;
    validateInteger(max, 'options.max', 1, 0x7fffffff);
    this.max = max;
    // key -> { sessions: [{ der, tls13, uses }] newest first, singleUse }.
    // A Map iterates in insertion order, so re-inserting on use makes its
    // first key the least recently used.
    this._entries = new Map();
  }

  get size() {
    return this._entries.size;
  }

  _touch(key) {
    const entry = this._entries.get(key);
    if (entry !== undefined) {
      this._entries.delete(key);
      this._entries.set(key, entry);
    }
    return entry;
  }

  // A session to offer for `key`, or undefined. TLS 1.3 tickets: an unused
  // one first (newest first); a used one again only while the server has not
  // shown that its tickets are single-use (then each is handed out once).
  get(key) {
    const entry = this._touch(key);
    if (entry === undefined || entry.sessions.length === 0) return undefined;
    const { sessions } = entry;
    let index = 0;
    if (sessions[0].tls13) {
      index = sessions.findIndex((s) => s.uses === 0);
      if (index === -1) {
        if (entry.singleUse) return undefined;
        index = 0;
      }
    }
    const item = sessions[index];
    item.uses++;
    if (item.tls13 && entry.singleUse) sessions.splice(index, 1);
    return item.der;
  }

  // A verified connection's session. TLS 1.3 tickets accumulate (newest
  // first, a few at most); anything else replaces what the key had.
  set(key, session) {
    if (!Buffer.isBuffer(session)) throw invalidArgType('session', 'Buffer', session);
    if (!worthStoring(session)) return;
    let entry = this._touch(key);
    if (entry === undefined) {
      entry = { sessions: [], singleUse: false };
      this._entries.set(key, entry);
      while (this._entries.size > this.max) this._entries.delete(this._entries.keys().next().value);
    }
    const item = { der: session, tls13: sessionFacts(session).protocol === TLS1_3_VERSION, uses: 0 };
    if (item.tls13) {
      entry.sessions = [item, ...entry.sessions.filter((s) => s.tls13 && !s.der.equals(session))];
      if (entry.sessions.length > TICKETS_PER_KEY) entry.sessions.length = TICKETS_PER_KEY;
    } else {
      entry.sessions = [item];
    }
  }

  // Drops `session` from `key` (all of the key's sessions when none is named):
  // the server declined it or the handshake with it failed. A TLS 1.3 ticket
  // declined on its second use tells that the server takes each ticket once.
  // One declined on its first use was sealed under a key the server no
  // longer has (rotated, restarted, expired), and so were the tickets that
  // came before it: they go too, or each would cost a full handshake.
  delete(key, session) {
    const entry = this._entries.get(key);
    if (entry === undefined) return;
    if (session === undefined) {
      entry.sessions = [];
      return;
    }
    const index = entry.sessions.findIndex((s) => s.der.equals(session));
    if (index === -1) return;
    const item = entry.sessions[index];
    if (item.tls13 && item.uses > 1) {
      entry.singleUse = true;
      entry.sessions.splice(index, 1);
    } else {
      entry.sessions.splice(index);
    }
  }

  clear() {
    this._entries.clear();
  }
}

// ---- the key ----

// The cache key of a connect() call's options (after connect()'s defaults),
// or null when what a session must match cannot all be named (then nothing
// is cached). `context` is contextKey(options): every option that reaches
// the context (trust, client certificate, versions, ciphers, the default CA
// store's version ...), so none can be forgotten here; null where it
// cannot be keyed.
function sessionKey(options, context) {
  // The callback picks the identity (and key) per connection: a session
  // from one identity must not stand in for another.
  if (options.pskCallback) return null;
  let peer;
  if (options.path) {
    peer = `path=${options.path}`;
  } else {
    // A socket of the program's own is named by its peer, once connected.
    const socket = options.socket;
    const host = options.host !== undefined ? options.host : socket ? socket.remoteAddress : undefined;
    const port = options.port !== undefined ? options.port : socket ? socket.remotePort : undefined;
    if (socket && (host === undefined || port === undefined)) return null;
    if (!host && !options.servername) return null;
    peer = `host=${host}:${port}`;
  }
  const servername = options.servername;
  const alpn = {};
  if (options.ALPNProtocols) convertALPNProtocols(options.ALPNProtocols, alpn);
  const check = options.checkServerIdentity;
  const parts = [
    peer,
    `sni=${servername === undefined ? '' : servername}`,
    `alpn=${alpn.ALPNProtocols ? alpn.ALPNProtocols.toString('hex') : ''}`,
    `reject=${options.rejectUnauthorized !== false}`,
    // The name the check judges (host, or a socket's, when no servername
    // is sent): a session a check passed for one name is never offered
    // under another. And the check itself, by identity, default or not: a
    // connection resuming from the cache does not ask a custom check again.
    `name=${serverIdentity(options)}`,
    `csi=${typeof check === 'function' ? identity(check) : '-'}`,
    // Where https.Agent's name keeps connections apart, sessions stay apart.
    `local=${options.localAddress}`,
    `family=${options.family}`,
    `mindh=${options.minDHSize}`,
  ];
  if (options.secureContext) {
    // The context holds the trust store and the client certificate.
    parts.push(`ctx=${identity(options.secureContext)}`);
  } else if (context === null) {
    return null;
  } else {
    parts.push(`context=${context}`);
  }
  // JSON: no value can end early and run into the next part. Readable where
  // it helps (a store of one's own), a digest for the rest.
  const digest = sha256(JSON.stringify(parts));
  return `${peer.slice(peer.indexOf('=') + 1)}/${servername === undefined ? '' : servername}/${digest}`;
}

let defaultCache = null;

// connect()'s sessionCache option: a cache (anything with get/set/delete),
// `true` for the process-wide one (per thread: each worker loads its own copy
// of this module), or nothing.
function resolveSessionCache(value) {
  if (value === undefined || value === null || value === false) return null;
  if (value === true) {
    if (defaultCache === null) defaultCache = new SessionCache();
    return defaultCache;
  }
  if (typeof value !== 'object' || typeof value.get !== 'function' || typeof value.set !== 'function') {
    throw invalidArgType('options.sessionCache', ['SessionCache', 'boolean'], value);
  }
  return value;
}

module.exports = { SessionCache, sessionKey, resolveSessionCache, worthStoring };
