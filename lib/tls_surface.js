'use strict';

// The tls.TLSSocket surface of a TLSSocket: what a program asks of the
// connection (certificates, cipher, session, keying material) and the TLS
// controls it has (renegotiate, setServername, setKeyCert, ...), each
// answered by the native handle while there is one.

const net = require('node:net');
const { certificateObject, x509FromDer } = require('./certificate');
const { SecureContext, exportedCreateSecureContext } = require('./context');
const { codedError, invalidArgType, validateInteger } = require('./errors');
const { addSurface } = require('./net_surface');
const { nodeTakesStringSessions, sessionForReuse } = require('./session_state');
const { onTransportConnect } = require('./transport');
const { bufferOf } = require('./bytes');
const { answering } = require('./handle_answers');

// What node's getEphemeralKeyInfo() gives when OpenSSL has no peer key
// object (RSA key exchange, a resumed TLS 1.2 connection, OpenSSL 3.5's
// hybrid post-quantum groups) has changed twice; each Node version below was
// run for it. {} up to 24.8 (and on 20, 22); the three keys, undefined, from
// 24.9 and 25.0; the negotiated group as { type: 'TLSGroup', name } from
// 24.19 and 26.5.
const [nodeMajor, nodeMinor] = process.versions.node.split('.').map(Number);
const namesTlsGroups = nodeMajor > 26 || (nodeMajor === 26 && nodeMinor >= 5) ||
  (nodeMajor === 24 && nodeMinor >= 19);
const keysWhenUnknown = nodeMajor >= 25 || (nodeMajor === 24 && nodeMinor >= 9);
function unknownKeyInfo() {
  return keysWhenUnknown ? { type: undefined, name: undefined, size: undefined } : {};
}

class TlsSurface {
  getPeerCertificate(detailed) {
    const handle = answering(this);
    if (handle === null) return null;
    if (detailed) return certificateObject(handle.getPeerCertChain(), true);
    const leaf = handle.getPeerLeaf();
    return leaf === undefined ? {} : certificateObject([leaf], false);
  }

  getCertificate() {
    const handle = answering(this);
    if (handle === null) return null;
    const der = handle.getCertificate();
    return der ? certificateObject([der], false) : {};
  }

  getEphemeralKeyInfo() {
    const handle = answering(this);
    if (handle === null) return null;
    const info = handle.getEphemeralKeyInfo();
    if (info === null || (info.type === 'TLSGroup' && namesTlsGroups)) return info;
    return info.type === undefined || info.type === 'TLSGroup' ? unknownKeyInfo() : info;
  }

  getPeerX509Certificate() {
    const handle = answering(this);
    if (handle === null) return undefined;
    const chain = handle.getPeerCertChain(true);
    if (chain.length === 0) return undefined;
    // As node:tls: each certificate's issuerCertificate is the next one the
    // peer sent (not checked to be its issuer), the last one's undefined.
    let issuer;
    for (let i = chain.length - 1; i >= 0; i--) {
      const cert = x509FromDer(chain[i]);
      if (issuer !== undefined) {
        Object.defineProperty(cert, 'issuerCertificate', { value: issuer, enumerable: false, configurable: true });
      }
      issuer = cert;
    }
    return issuer;
  }

  getX509Certificate() {
    const handle = answering(this);
    if (handle === null) return undefined;
    const der = handle.getCertificate();
    return der ? x509FromDer(der) : undefined;
  }

  getCipher() {
    // As node's: undefined before a cipher is chosen, null once closed.
    const handle = answering(this);
    return handle === null ? null : handle.getCipher() || undefined;
  }

  exportKeyingMaterial(length, label, context) {
    validateInteger(length, 'length', 1, 0xffffffff);
    if (typeof label !== 'string') throw invalidArgType('label', 'string', label);
    if (context !== undefined && !ArrayBuffer.isView(context)) {
      throw invalidArgType('context', ['Buffer', 'TypedArray', 'DataView'], context);
    }
    if (!this._secureEstablished) {
      throw codedError(Error, 'ERR_TLS_INVALID_STATE', 'TLS socket connection must be securely established');
    }
    if (this._handle === null) throw codedError(Error, 'ERR_SOCKET_CLOSED', 'Socket is closed');
    const ctx = context === undefined ? undefined : bufferOf(context);
    return this._handle.exportKeyingMaterial(length, label, ctx);
  }

  setMaxSendFragment(size) {
    validateInteger(size, 'size', -0x80000000, 0x7fffffff);
    return this._handle !== null && this._handle.setMaxSendFragment(size);
  }

  setServername(name) {
    if (typeof name !== 'string') throw invalidArgType('name', 'string', name);
    if (this._tlsOptions.isServer) {
      throw codedError(Error, 'ERR_TLS_SNI_FROM_SERVER', 'Cannot issue SNI from a TLS server-side socket');
    }
    if (this._handle !== null) this._handle.setServername(name);
  }

  // Serves `context`'s certificate and key from now on (a server socket whose
  // handshake has not sent them yet); clients ignore it, as node's do.
  setKeyCert(context) {
    if (this._handle === null) return;
    const secureContext = context instanceof SecureContext ? context : exportedCreateSecureContext(context);
    this._handle.setKeyCert(secureContext.context);
  }

  setSession(session) {
    // node:tls 24.22 on takes no session as none; before, its handle refuses it.
    if (session === undefined && nodeTakesStringSessions) return;
    if (typeof session === 'string') session = Buffer.from(session, 'latin1');
    if (!ArrayBuffer.isView(session)) throw codedError(TypeError, 'ERR_INVALID_ARG_TYPE', 'Session must be a buffer');
    session = bufferOf(session);
    if (!this._tlsOptions.isServer) session = sessionForReuse(session, this._connectOptions || this._tlsOptions);
    if (this._handle !== null && session !== undefined) this._handle.setSession(session);
  }

  renegotiate(options, callback) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw invalidArgType('options', 'Object', options);
    }
    if (callback !== undefined && typeof callback !== 'function') throw invalidArgType('callback', 'Function', callback);
    if (this.destroyed || this._handle === null) return false;
    const requestCert = options.requestCert !== undefined ? !!options.requestCert : this._requestCert;
    const rejectUnauthorized = options.rejectUnauthorized !== undefined ?
      !!options.rejectUnauthorized : this._rejectUnauthorized;
    if (requestCert !== this._requestCert || rejectUnauthorized !== this._rejectUnauthorized) {
      this._handle.setVerifyMode(requestCert, rejectUnauthorized);
      this._requestCert = requestCert;
      this._rejectUnauthorized = rejectUnauthorized;
    }
    try {
      this._handle.renegotiate();
    } catch (err) {
      if (callback) process.nextTick(callback, err);
      return false;
    }
    if (callback) this.once('secure', () => callback(null));
    return true;
  }

  disableRenegotiation() {
    this._disableRenegotiation = true;
  }

  enableTrace() {
    if (this._handle !== null) this._handle.enableTrace();
  }

  connect(...args) {
    if (this._transport === null) {
      // Made without a socket (new TLSSocket()): as node's, it connects a TCP
      // socket of its own, and the callback is this socket's 'connect'.
      const cb = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
      const transport = new net.Socket();
      transport.connect(...args);
      if (cb) this.once('connect', cb);
      this._attach(transport, true);
      return this;
    }
    if (typeof this._transport.connect !== 'function') {
      throw codedError(Error, 'ERR_SOCKET_CLOSED', 'TLSSocket has no connectable transport');
    }
    this._transport.connect(...args);
    if (this._transport.connecting) this._transport.once('connect', onTransportConnect);
    return this;
  }
}

// Questions the handle answers as they are; null once it is gone, as
// node:tls's (its proxies answer null without a handle).
const kHandleQueries = ['isSessionReused', 'getProtocol', 'getSession', 'getTLSTicket', 'getFinished',
  'getPeerFinished', 'getSharedSigalgs'];
for (const name of kHandleQueries) {
  const query = {
    [name]() {
      const handle = answering(this);
      return handle === null ? null : handle[name]();
    },
  }[name];
  Object.defineProperty(TlsSurface.prototype, name, { value: query, writable: true, configurable: true });
}

function addTlsSurface(Socket) {
  addSurface(Socket, TlsSurface);
}

module.exports = { addTlsSurface };
