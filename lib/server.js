'use strict';

// Server: a net.Server (so listen options, cluster, connection counting and
// close() are node's own) whose connections are wrapped in TLSSockets.

const crypto = require('node:crypto');
const EventEmitter = require('node:events');
const net = require('node:net');
const nodeTls = require('node:tls');
const { deprecate } = require('node:util');
const { convertALPNProtocols } = require('./alpn');
const { SecureContext, exportedCreateSecureContext, nativeContext, ticketKeysBuffer } = require('./context');
const { bufferOf } = require('./bytes');
const { codedError, invalidArgType } = require('./errors');
const { TLSSocket } = require('./socket');
const { validateServerPsk } = require('./psk');

const kErrorEmitted = Symbol('tlswrap.errorEmitted');

// The default SNICallback: the contexts given to server.addContext(), the
// most recently added match first, as in node:tls.
function defaultSNICallback(servername, callback) {
  const contexts = this.server._contexts;
  for (let i = contexts.length - 1; i >= 0; i--) {
    const [pattern, context] = contexts[i];
    if (pattern.test(servername)) {
      callback(null, context);
      return;
    }
  }
  callback(null, undefined);
}

// Errors before 'secureConnection' belong to the server ('tlsClientError'),
// once per socket; the socket is then destroyed.
function onServerSocketError(err) {
  if (!this._controlReleased && !this[kErrorEmitted]) {
    this[kErrorEmitted] = true;
    this.server.emit('tlsClientError', err, this);
  }
}

function onServerSocketClose(hadError) {
  if (hadError) return;
  if (!this._controlReleased && !this[kErrorEmitted]) {
    this[kErrorEmitted] = true;
    this.server.emit('tlsClientError', codedError(Error, 'ECONNRESET', 'socket hang up'), this);
  }
}

function onServerSocketSecure() {
  if (this._requestCert) {
    const verifyError = this._handle.verifyError();
    if (verifyError) {
      this.authorizationError = verifyError.code;
      if (this._rejectUnauthorized) {
        this.destroy();
        return;
      }
    } else {
      this.authorized = true;
    }
  }
  if (!this.destroyed && !this._controlReleased) {
    this._controlReleased = true;
    this._releaseErrors();
    this.secureConnecting = false;
    this.server.emit('secureConnection', this);
  }
}

function onHandshakeTimeout(socket) {
  socket._handshakeTimer = null;
  socket.destroy(codedError(Error, 'ERR_TLS_HANDSHAKE_TIMEOUT', 'TLS handshake timeout'));
}

function forwardKeylog(line) {
  this.server.emit('keylog', line, this);
}

function tlsConnectionListener(rawSocket) {
  const server = this;
  const socket = new TLSSocket(rawSocket, {
    secureContext: server._sharedCreds,
    isServer: true,
    server,
    requestCert: server.requestCert,
    rejectUnauthorized: server.rejectUnauthorized,
    ALPNProtocols: server.ALPNProtocols,
    SNICallback: server._SNICallback || (server._contexts.length > 0 ? defaultSNICallback : undefined),
    ALPNCallback: server._ALPNCallback,
    pskCallback: server._pskCallback,
    pskIdentityHint: server._pskIdentityHint,
    highWaterMark: server._highWaterMark,
    enableTrace: server._enableTrace,
  });
  socket[kErrorEmitted] = false;
  // As node:tls (its pauseOnCreate): the handshake runs, plaintext waits for
  // resume(); a 'data' listener alone does not start the flow.
  if (server.pauseOnConnect) socket.readableFlowing = false;
  socket.on('secure', onServerSocketSecure);
  socket.on('error', onServerSocketError);
  // Its transport's errors come as '_tlsError' alone until it is released.
  socket.on('_tlsError', onServerSocketError);
  socket.on('close', onServerSocketClose);
  if (server.listenerCount('keylog') > 0) socket.on('keylog', forwardKeylog);
  const newSession = server.listenerCount('newSession') > 0;
  const resumeSession = server.listenerCount('resumeSession') > 0;
  if (newSession || resumeSession) socket._handle.enableSessionEvents(newSession, resumeSession);
  if (server._handshakeTimeout > 0) {
    socket._handshakeTimer = setTimeout(onHandshakeTimeout, server._handshakeTimeout, socket);
    socket._handshakeTimer.unref();
    // node:tls runs it as the socket's own timeout (setTimeout(), then
    // setTimeout(0) once secure): `timeout` reads so.
    socket.timeout = server._handshakeTimeout;
  }
}

// As node's, the servers of one program (and of a fleet started alike)
// take each other's sessions. But a resumed session carries the client
// certificate's verification from the handshake that made it, which OpenSSL
// does not redo: a server that asks for client certificates differently or
// trusts other CAs for them must not take them, so what it trusts is in the
// default too. (node:tls uses the command line alone.)
function defaultSessionIdContext(server, options) {
  const hash = crypto.createHash('sha1').update(process.argv.join(' '));
  hash.update(`\0${server.requestCert}\0${server.rejectUnauthorized}`);
  for (const name of ['ca', 'crl', 'pfx']) {
    hash.update(`\0${name}`);
    const value = options[name];
    if (!value) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      // pfx entries may be { buf, passphrase }.
      const data = item !== null && typeof item === 'object' && !ArrayBuffer.isView(item) ? item.buf : item;
      if (typeof data === 'string') {
        hash.update(`\0s${Buffer.byteLength(data)}:`).update(data);
      } else if (ArrayBuffer.isView(data)) {
        hash.update(`\0b${data.byteLength}:`).update(bufferOf(data));
      }
    }
  }
  return hash.digest('hex').slice(0, 32);
}

class Server extends net.Server {
  constructor(options, listener) {
    if (typeof options === 'function') {
      listener = options;
      options = {};
    } else if (options === undefined || options === null) {
      options = {};
    } else if (typeof options !== 'object') {
      throw invalidArgType('options', 'Object', options);
    }
    super(options, tlsConnectionListener);

    this._contexts = [];
    this.requestCert = options.requestCert === true;
    this.rejectUnauthorized = options.rejectUnauthorized !== false;
    this._highWaterMark = options.highWaterMark;
    this._enableTrace = options.enableTrace;
    if (options.sessionTimeout) this.sessionTimeout = options.sessionTimeout;
    if (options.ALPNProtocols) convertALPNProtocols(options.ALPNProtocols, this);
    // As node's: a falsy SNICallback or handshakeTimeout is none.
    if (options.SNICallback && typeof options.SNICallback !== 'function') {
      throw invalidArgType('options.SNICallback', 'function', options.SNICallback);
    }
    this._SNICallback = options.SNICallback || undefined;
    if (options.ALPNCallback) {
      if (typeof options.ALPNCallback !== 'function') {
        throw invalidArgType('options.ALPNCallback', 'Function', options.ALPNCallback);
      }
      if (options.ALPNProtocols) {
        throw codedError(TypeError, 'ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS',
                         'The ALPNCallback and ALPNProtocols TLS options are mutually exclusive');
      }
    }
    this._ALPNCallback = options.ALPNCallback || undefined;
    const handshakeTimeout = options.handshakeTimeout || 120 * 1000;
    if (typeof handshakeTimeout !== 'number') {
      throw invalidArgType('options.handshakeTimeout', 'number', options.handshakeTimeout);
    }
    this._handshakeTimeout = handshakeTimeout;
    this._pskCallback = options.pskCallback;
    this._pskIdentityHint = options.pskIdentityHint;
    validateServerPsk(options);

    this.setSecureContext(options);
    if (listener) this.on('secureConnection', listener);
  }

  setSecureContext(options) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw invalidArgType('options', 'Object', options);
    }
    // Ticket keys given once stay the server's for later calls, as in node.
    if (options.ticketKeys) this.ticketKeys = options.ticketKeys;
    if (options.pskCallback) this._pskCallback = options.pskCallback;
    if (options.pskIdentityHint) this._pskIdentityHint = options.pskIdentityHint;
    const sessionIdContext = options.sessionIdContext || defaultSessionIdContext(this, options);
    // As node's server: a falsy value of these is no value.
    this._sharedCreds = exportedCreateSecureContext({
      pfx: options.pfx || undefined,
      key: options.key || undefined,
      passphrase: options.passphrase || undefined,
      cert: options.cert || undefined,
      ca: options.ca || undefined,
      ciphers: options.ciphers || undefined,
      ecdhCurve: options.ecdhCurve,
      dhparam: options.dhparam || undefined,
      minVersion: options.minVersion || undefined,
      maxVersion: options.maxVersion || undefined,
      secureProtocol: options.secureProtocol || undefined,
      secureOptions: options.secureOptions || undefined,
      honorCipherOrder: options.honorCipherOrder === undefined ? true : !!options.honorCipherOrder,
      crl: options.crl || undefined,
      sigalgs: options.sigalgs,
      sessionIdContext,
      sessionTimeout: this.sessionTimeout,
      ticketKeys: this.ticketKeys,
      ticketKeyRotation: options.ticketKeyRotation,
      sessionCacheSize: options.sessionCacheSize,
      certificateCompression: options.certificateCompression,
      clientCertEngine: options.clientCertEngine || undefined,
      privateKeyEngine: options.privateKeyEngine,
      privateKeyIdentifier: options.privateKeyIdentifier,
    });
  }

  addContext(servername, context) {
    if (!servername) {
      throw codedError(Error, 'ERR_TLS_REQUIRED_SERVER_NAME', '"servername" is required parameter for Server.addContext');
    }
    const pattern = new RegExp(`^${servername.replace(/([.^$+?\-\\[\]{}])/g, '\\$1').replace(/\*/g, '[^.]*')}$`);
    // node:tls's own would be read as options, giving a context with no
    // certificate: refused as connect() refuses it.
    if (context instanceof nodeTls.SecureContext) nativeContext(context);
    const secureContext = context instanceof SecureContext ? context : exportedCreateSecureContext(context);
    this._contexts.push([pattern, secureContext]);
  }

  getTicketKeys() {
    return this._sharedCreds.context.getTicketKeys();
  }

  // Automatic rotation stops once keys are set.
  setTicketKeys(keys) {
    this._sharedCreds.context.setTicketKeys(ticketKeysBuffer(keys, 'keys'));
  }

  // Node's pre-getTicketKeys() spelling, kept by node:tls.
  _getServerData() {
    return { ticketKeys: this.getTicketKeys().toString('hex') };
  }

  _setServerData(data) {
    this.setTicketKeys(Buffer.from(data.ticketKeys, 'hex'));
  }
}

// DEP0122, on the Nodes that still ship it (20). As node's, it only updates
// what later connections read from the server; the context stays as built.
if (typeof nodeTls.Server.prototype.setOptions === 'function') {
  Server.prototype.setOptions = deprecate(function setOptions(options) {
    this.requestCert = options.requestCert === true;
    this.rejectUnauthorized = this.requestCert ? options.rejectUnauthorized !== false : false;
    if (options.ALPNProtocols) convertALPNProtocols(options.ALPNProtocols, this);
    if (options.sessionTimeout) this.sessionTimeout = options.sessionTimeout;
    if (options.clientCertEngine) this.clientCertEngine = options.clientCertEngine;
  }, 'Server.prototype.setOptions() is deprecated', 'DEP0122');
}

// node's tls.Server may be called without `new` (several programs do): the
// class behind a Proxy whose call makes one, so `new`, `extends` and
// `instanceof` still work as with the class itself.
const CallableServer = new Proxy(Server, {
  apply(target, thisArg, args) {
    return Reflect.construct(target, args);
  },
});

// captureRejections: a rejected async 'secureConnection' listener destroys
// that socket, as node:tls's does; other events are net.Server's business.
Server.prototype[EventEmitter.captureRejectionSymbol] = function (err, event, socket) {
  if (event === 'secureConnection') {
    socket.destroy(err);
    return;
  }
  Reflect.apply(net.Server.prototype[EventEmitter.captureRejectionSymbol], this, [err, event, socket]);
};

// What instances name as their constructor, as with node's function.
Object.defineProperty(Server.prototype, 'constructor', {
  value: CallableServer, writable: true, configurable: true, enumerable: false,
});

function createServer(options, listener) {
  return new Server(options, listener);
}

module.exports = { Server: CallableServer, createServer };
