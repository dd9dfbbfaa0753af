'use strict';

// connect(): node:tls's argument forms, a TCP connection made by net.connect
// (lookup, family, timeouts are node's), and the client-side checks node:tls
// runs once the handshake is done.

const net = require('node:net');
const nodeTls = require('node:tls');
const defaults = require('./defaults');
const {
  createSecureContext, currentCheckServerIdentity, currentCreateSecureContext, nativeContext,
} = require('./context');
const { clientContext, contextKey } = require('./context_cache');
const { sharedCertificate } = require('./certificate');
const { codedError, invalidArgType, invalidArgValue, outOfRange } = require('./errors');
const { TLSSocket } = require('./socket');
const { keyShareHint, rememberKeyShare } = require('./key_share_hint');
const { resolveSessionCache, sessionKey, worthStoring } = require('./session_cache');
const { nodeTakesStringSessions, serverIdentity, sessionForReuse } = require('./session_state');
const { awaitsConnect, checkTransport } = require('./transport');
const { bufferOf } = require('./bytes');

// [port][, host][, options][, callback] | options[, callback] | path[, options][, callback]
function normalizeConnectArgs(args) {
  const cb = typeof args[args.length - 1] === 'function' ? args[args.length - 1] : undefined;
  const list = cb ? args.slice(0, -1) : args.slice();
  let options = {};
  const first = list[0];
  if (first !== null && typeof first === 'object') {
    options = { ...first };
  } else if (typeof first === 'string' && !(Number(first) >= 0)) {
    // As net's: a string is a path unless it reads as a port number.
    options.path = first;
    if (list[1] !== null && typeof list[1] === 'object') Object.assign(options, list[1]);
  } else if (first !== undefined) {
    options.port = first;
    if (typeof list[1] === 'string') options.host = list[1];
    // As in node:tls, an options object given beside port/host wins over them.
    if (list[1] !== null && typeof list[1] === 'object') Object.assign(options, list[1]);
    else if (list[2] !== null && typeof list[2] === 'object') Object.assign(options, list[2]);
  }
  return [options, cb];
}

let warnedAllowUnauthorized = false;
// node:tls warns once per process about an IP address as the servername.
let ipServernameWarned = false;

// What this Node's own tls.connect() does, read once from its source.
const nodeConnectSource = Function.prototype.toString.call(nodeTls.connect);

// RFC 6066 forbids an IP address as the server name: node:tls sent one with
// a warning (DEP0123) until it refused it (Node 26), in these words.
const refusesIpServername = nodeConnectSource.includes('Setting the TLS ServerName to an IP address is not permitted.');

// Node 24's connect() hands keepAlive, keepAliveInitialDelay and noDelay to
// its TCP socket, which refuses a delay that is not a number; Node 20's and
// 22's ignore all three. tlswrap honours them on every Node, but refuses no
// delay where node:tls would never have read it.
const readsKeepAliveDelay = nodeConnectSource.includes('keepAliveInitialDelay');

// Node 20 asserts these (hence its code); Node 21 on validates them as
// arguments.
const validatesAsArguments = Number(process.versions.node.split('.')[0]) >= 21;
function validateConnectChecks(options) {
  const check = options.checkServerIdentity;
  const size = options.minDHSize;
  if (validatesAsArguments) {
    if (typeof check !== 'function') throw invalidArgType('options.checkServerIdentity', 'Function', check);
    if (typeof size !== 'number') throw invalidArgType('options.minDHSize', 'number', size);
    if (!(size >= 1)) throw outOfRange('options.minDHSize', '>= 1', size);
    return;
  }
  // node's assert(): its message, then its plea to report a bug.
  const plea = 'This is caused by either a bug in Node.js or incorrect usage of Node.js internals.\n' +
    'Please open an issue with this stack trace at https://github.com/nodejs/node/issues\n';
  if (typeof check !== 'function') throw codedError(Error, 'ERR_INTERNAL_ASSERTION', plea);
  if (typeof size !== 'number') {
    throw codedError(Error, 'ERR_INTERNAL_ASSERTION', `options.minDHSize is not a number: ${size}\n${plea}`);
  }
  if (!(size > 0)) {
    throw codedError(Error, 'ERR_INTERNAL_ASSERTION', `options.minDHSize is not a positive number: ${size}\n${plea}`);
  }
}

// Node 24's client adds a hint to the two chain errors a locally installed
// root would fix (seen on 24.22; Node 20 has none). The server side's
// authorizationError is the bare code on both.
const systemCAHint = Number(process.versions.node.split('.')[0]) >= 24 ?
  '; if the root CA is installed locally, try running Node.js with --use-system-ca' : '';
function withSystemCAHint(err) {
  if (err && systemCAHint &&
      (err.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || err.code === 'DEPTH_ZERO_SELF_SIGNED_CERT')) {
    err.message += systemCAHint;
  }
  return err;
}

function onConnectSecure() {
  const options = this._connectOptions;
  const keyInfo = this.getEphemeralKeyInfo();
  if (keyInfo && keyInfo.type === 'DH' && keyInfo.size < options.minDHSize) {
    this.destroy(codedError(Error, 'ERR_TLS_DH_PARAM_SIZE', `DH parameter size ${keyInfo.size} is less than 2048`));
    return;
  }
  // On a resumed connection this is the chain result stored in the session.
  let verifyError = withSystemCAHint(this._handle.verifyError());
  // The name is checked on resumed connections too (node:tls skips it): the
  // session says nothing about the name asked for now, and a session from a
  // connection whose name check failed or was waived (rejectUnauthorized:
  // false) must not make a later strict connection authorized.
  // A peer that proved itself with a pre-shared key on a handshake OpenSSL
  // counts as resumed (TLS 1.3) has no certificate to check a name against:
  // node:tls lets it through.
  const pskResumed = !!options.pskCallback && this.isSessionReused() &&
    this._handle.getPeerLeaf() === undefined;
  // A custom check already passed the session this connection resumed from
  // the cache: its key holds the function (by identity), the name and the
  // trust settings. Run again it would see the leaf and issuers from the
  // store only (a resumed session keeps no chain), and a check that pins
  // the intermediate the server sent would refuse what it accepted; node:tls
  // does not run it on resumption either. node's own name check (it reads
  // the leaf alone) runs every time.
  const check = options.checkServerIdentity;
  const approved = this._sessionFromCache && this.isSessionReused() && check !== currentCheckServerIdentity();
  if (!verifyError && !pskResumed && !approved) {
    verifyError = checkIdentity(this, check, serverIdentity(options));
  }
  if (verifyError) {
    this.authorized = false;
    this.authorizationError = verifyError.code || verifyError.message;
    if (options.rejectUnauthorized) {
      this.destroy(verifyError);
      return;
    }
  } else {
    this.authorized = true;
  }
  this._controlReleased = true;
  this.emit('secureConnect');
  // After 'secureConnect', as node:tls emits it.
  this._releaseSession();
}

// node's own check reads the leaf's subject and subjectaltname and keeps
// nothing when the name matches, so it runs on the cached parse of the leaf;
// the detailed copy (the whole chain, three fingerprints per certificate) is
// made only for a custom check or for the error a failed check carries.
// Only node's own function may see the shared parse. One put in its place on
// node:tls (a wrapper, say) is called with a copy like any custom check:
// later by identity, and before this module loaded by its source, which for
// node's raises an error class user code cannot reach.
const builtinCheckServerIdentity = isNodesOwnCheck(nodeTls.checkServerIdentity) ?
  nodeTls.checkServerIdentity : null;
function isNodesOwnCheck(fn) {
  if (typeof fn !== 'function') return false;
  const source = Function.prototype.toString.call(fn);
  return source.startsWith('function checkServerIdentity(hostname, cert) {') &&
    source.includes('new ERR_TLS_CERT_ALTNAME_INVALID(');
}
function checkIdentity(socket, check, hostname) {
  if (builtinCheckServerIdentity !== null && check === builtinCheckServerIdentity) {
    const leaf = socket._handle.getPeerLeaf();
    if (leaf !== undefined && check(hostname, sharedCertificate(leaf)) === undefined) return undefined;
  }
  return check(hostname, socket.getPeerCertificate(true));
}

// Feeds the cache (and the key share hint) from the verified path only:
// 'session' is emitted after onConnectSecure has let the connection through,
// and a connection let through by rejectUnauthorized:false while unauthorized
// stores nothing. The session offered is dropped when the server declined it
// or the connection failed before it was secure (with it, or on the check of
// a resumed connection).
// A session passed by hand (`handPassed`) that resumed brings its own
// verification, made under another trust configuration maybe: the sessions
// that connection receives carry it on, so they are not this key's.
function useSessionCache(socket, cache, key, offered, handPassed) {
  socket.on('session', (session) => {
    if (!worthStoring(session)) return;
    if (socket.authorized && !(handPassed && socket.isSessionReused())) cache.set(key, session);
  });
  const hint = keyShareHint(key);
  if (hint !== undefined) socket._handle.predictKeyShare(hint);
  socket.once('secureConnect', () => {
    if (socket.authorized && socket.getProtocol() === 'TLSv1.3') {
      rememberKeyShare(key, socket._handle.getNegotiatedGroup());
    }
  });
  if (offered === undefined) return;
  let secure = false;
  socket.once('secureConnect', () => {
    secure = true;
    if (!socket.authorized || !socket.isSessionReused()) {
      dropSession(cache, key, offered);
      return;
    }
    // A TLS 1.2 server that renews the ticket on resumption puts the new one
    // in the resumed session without a 'session' event.
    if (socket.getProtocol() !== 'TLSv1.3') {
      const now = socket.getSession();
      if (now && !now.equals(offered)) cache.set(key, now);
    }
  });
  socket.once('close', () => {
    if (!secure && socket._started) dropSession(cache, key, offered);
  });
}

function dropSession(cache, key, session) {
  if (typeof cache.delete === 'function') cache.delete(key, session);
}

// options.signal, as net.Socket handles it: aborted, before or after the
// connection, the socket is destroyed with an AbortError.
function validateSignal(signal) {
  if (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean' ||
      typeof signal.addEventListener !== 'function') {
    throw invalidArgType('signal', 'AbortSignal', signal);
  }
}

function abortError(signal) {
  const err = new Error('The operation was aborted', { cause: signal.reason });
  err.code = 'ABORT_ERR';
  err.name = 'AbortError';
  return err;
}

function addAbortSignal(socket, signal) {
  const onAbort = () => socket.destroy(abortError(signal));
  if (signal.aborted) {
    process.nextTick(onAbort);
    return;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  socket.once('close', () => signal.removeEventListener('abort', onAbort));
}

function connect(...args) {
  const [given, cb] = normalizeConnectArgs(args);
  const allowUnauthorized = process.env.NODE_TLS_REJECT_UNAUTHORIZED === '0';
  if (allowUnauthorized && !warnedAllowUnauthorized) {
    warnedAllowUnauthorized = true;
    process.emitWarning("Setting the NODE_TLS_REJECT_UNAUTHORIZED environment variable to '0' makes TLS " +
                        'connections and HTTPS requests insecure by disabling certificate verification.');
  }
  const options = {
    rejectUnauthorized: !allowUnauthorized,
    ciphers: defaults.DEFAULT_CIPHERS,
    // As node:tls reads its own: a program may have replaced it.
    checkServerIdentity: currentCheckServerIdentity(),
    minDHSize: 1024,
    ...given,
  };
  // Anything but false rejects: an explicit undefined, null or 0 (spread over
  // the default above) must not turn verification off. As node:tls.
  options.rejectUnauthorized = options.rejectUnauthorized !== false;
  // Checked now, as node:tls does: a check that is not a function would
  // otherwise throw from the handshake's listener, out of reach of the
  // caller, and a minDHSize that is not a number would let any DH size
  // through.
  validateConnectChecks(options);
  // As net.Socket: a falsy signal is none.
  if (options.signal) validateSignal(options.signal);
  if (options.socket) checkTransport(options.socket, 'options.socket');
  // A secureContext that is none fails now, before anything keys on it.
  if (options.secureContext) nativeContext(options.secureContext);
  // Made by the module's createSecureContext as it is now (programs replace
  // it), shared with earlier calls of equal context options where it is
  // tlswrap's own (lib/context_cache.js); else only this connection uses it.
  const create = currentCreateSecureContext();
  const cache = resolveSessionCache(options.sessionCache);
  // Keyed once, for the shared context and the session cache; not at all
  // where neither uses it.
  const keyed = !options.secureContext && (create === createSecureContext || cache !== null);
  const optionsKey = keyed ? contextKey(options) : null;
  const context = options.secureContext || clientContext(options, create, createSecureContext, optionsKey);
  if (refusesIpServername && options.servername && net.isIP(options.servername)) {
    throw invalidArgValue('options.servername', options.servername,
                          'Setting the TLS ServerName to an IP address is not permitted.');
  }

  // A session kept from node:tls counts only for the name it names.
  if (typeof options.session === 'string' && nodeTakesStringSessions) {
    options.session = Buffer.from(options.session, 'latin1');
  }
  if (ArrayBuffer.isView(options.session)) options.session = sessionForReuse(bufferOf(options.session), options);

  // A replaced createSecureContext may answer the same options with another
  // trust store (a CA list the program updates): the options then say
  // nothing of what verified a session, so none is kept, as no context is
  // shared (lib/context_cache.js). A secureContext of the program's own is
  // keyed by its identity.
  const key = cache === null ? null : sessionKey(options, create === createSecureContext ? optionsKey : null);
  let offered;
  if (key !== null && options.session === undefined) {
    offered = cache.get(key);
    if (offered !== undefined && offered !== null) options.session = offered;
    else offered = undefined;
  }

  // The TLS socket first: bad options throw before any connection is made.
  const socket = new TLSSocket(null, {
    isServer: false,
    secureContext: context,
    rejectUnauthorized: options.rejectUnauthorized !== false,
    session: options.session,
    ALPNProtocols: options.ALPNProtocols,
    pskCallback: options.pskCallback,
    onread: options.onread,
    highWaterMark: options.highWaterMark,
    requestOCSP: options.requestOCSP,
    enableTrace: options.enableTrace,
    // The socket is attached below: node:tls takes its allowHalfOpen then.
    allowHalfOpen: options.socket ? !!options.socket.allowHalfOpen : options.allowHalfOpen,
  });
  // Set here, as node:tls's connect() sets it: its TLSSocket constructor
  // ignores a servername option.
  if (options.servername) {
    if (!ipServernameWarned && net.isIP(options.servername)) {
      ipServernameWarned = true;
      process.emitWarning('Setting the TLS ServerName to an IP address is not permitted by RFC 6066. ' +
                          'This will be ignored in a future version.', 'DeprecationWarning', 'DEP0123');
    }
    socket.setServername(options.servername);
  }
  socket._releaseErrors();
  // As node:tls: only for a connection it makes (a socket of the caller's is
  // the caller's to time out), and before it is made, so that a bad timeout
  // throws with no connection left behind to fail with nobody listening.
  if (options.timeout && !options.socket) socket.setTimeout(options.timeout);
  const transport = options.socket || net.connect({
    path: options.path,
    port: options.port,
    host: options.host,
    family: options.family,
    localAddress: options.localAddress,
    localPort: options.localPort,
    lookup: options.lookup,
    hints: options.hints,
    autoSelectFamily: options.autoSelectFamily,
    autoSelectFamilyAttemptTimeout: options.autoSelectFamilyAttemptTimeout,
    noDelay: options.noDelay,
    keepAlive: options.keepAlive,
    keepAliveInitialDelay: readsKeepAliveDelay || typeof options.keepAliveInitialDelay === 'number' ?
      options.keepAliveInitialDelay : undefined,
    allowHalfOpen: options.allowHalfOpen,
  });
  socket._attach(transport, !options.socket);
  socket._connectOptions = options;
  socket._sessionFromCache = offered !== undefined;
  if (options.signal) addAbortSignal(socket, options.signal);
  if (cb) socket.once('secureConnect', cb);
  socket.on('secure', onConnectSecure);
  if (cache !== null && key !== null) {
    useSessionCache(socket, cache, key, offered, offered === undefined && options.session !== undefined);
  }
  if (!awaitsConnect(transport)) socket._start();
  return socket;
}

module.exports = { connect, normalizeConnectArgs };
