'use strict';

// tlswrap/http2: node:http2's names, with h2 over tlswrap's TLS sockets.
//
// nghttp2 (node's HTTP/2 engine) reads and writes through a native stream
// handle. A tlswrap socket has none, so node:http2 puts any socket it is given
// in a JSStreamSocket: a net.Socket whose handle calls back into JS. That
// wrapper is all the session ever sees of the connection (session.socket,
// req.socket), and it has no TLS surface: the session reads `encrypted` and
// `alpnProtocol` off it (so it says h2c), its originSet reads the wrapper's
// servername and remote address, and getPeerCertificate() and friends are
// missing. So we wrap the socket ourselves, before node does, in a subclass
// of that same JSStreamSocket that answers the TLS and address questions
// from the tlswrap socket; node sees a stream handle and uses it as is. The
// class is not exported by node: we take it from a session's socket (the
// session's socket proxy reports the wrapper's prototype), once, lazily.
//
// The server is tlswrap's TLS server. Connections that chose h2 go to a
// plain node http2 server of our own (node's connection listener, sessions,
// compatibility API, settings and timeouts), whose events are passed on to
// ours; http/1.1 (allowHTTP1) goes to node:http's connection listener, as
// tlswrap/https does.

const http = require('node:http');
const nodeHttp2 = require('node:http2');
const net = require('node:net');
const { Duplex } = require('node:stream');
const { promisify } = require('node:util');
const {
  _connectionListener: httpConnectionListener,
  storeHTTPOptions,
  setupConnectionsTracking,
  httpServerPreClose,
  kServerResponse,
} = require('node:_http_server');
const { kIncomingMessage } = require('node:_http_common');
const { connect: tlsConnect } = require('./connect');
const { invalidArgType, validateInteger } = require('./errors');
const { inputHeld, inRead, paceInput, readStart: paceReadStart, readStop: paceReadStop } = require('./h2_pacing');
const { mergeSmallBuffers, releaseOwnBuffers, uvCode } = require('./h2_writes');
const { Server: TLSServer } = require('./server');
const { TLSSocket } = require('./socket');

const kSecureWait = Symbol('tlswrap.http2.secureWait');
const kInner = Symbol('tlswrap.http2.inner');
const kOptions = Symbol('tlswrap.http2.options');
const kForwarders = Symbol('tlswrap.http2.forwarders');
const kReadWrite = Symbol('tlswrap.http2.readWrite');
const kUnsent = Symbol('tlswrap.http2.unsent');
const kHeldWrite = Symbol('tlswrap.http2.heldWrite');

let TLSStreamSocket = null;
// JSStreamSocket's own record of the write in flight (see doWrite below),
// found by its name on the first wrapper; null if this Node has none.
let kCurrentWriteRequest;

// The JSStreamSocket class, from the wrapper node:http2 puts around a stream
// that has no native handle.
function jsStreamSocketClass() {
  const stream = new Duplex({ read() {}, write(chunk, encoding, callback) { callback(); } });
  const session = nodeHttp2.connect('http://tlswrap.invalid', { createConnection: () => stream });
  session.on('error', () => {});
  let Class;
  try {
    Class = Object.getPrototypeOf(session.socket).constructor;
  } finally {
    session.destroy();
  }
  if (typeof Class !== 'function' || !(Class.prototype instanceof net.Socket)) {
    throw new Error(`tlswrap/http2: this Node (${process.version}) does not wrap a handle-less stream the way tlswrap expects`);
  }
  return Class;
}

// What the wrapper answers from the TLS socket under it (`this.stream`).
const forwardedMethods = [
  'getPeerCertificate', 'getPeerX509Certificate', 'getCertificate', 'getX509Certificate', 'getCipher',
  'getProtocol', 'getSession', 'getTLSTicket', 'isSessionReused', 'getFinished', 'getPeerFinished',
  'getEphemeralKeyInfo', 'getSharedSigalgs', 'exportKeyingMaterial', 'setMaxSendFragment',
  'disableRenegotiation', 'enableTrace', 'renegotiate', 'address',
];
const forwardedGetters = [
  'alpnProtocol', 'servername', 'authorized', 'authorizationError',
  'remoteAddress', 'remotePort', 'remoteFamily', 'localAddress', 'localPort',
];
// net.Socket methods that act on the wrapper's handle, which is not the
// connection's: ref()/unref() must reach the TCP handle (session.unref()),
// and the socket options the TCP socket.
const forwardedChainable = ['ref', 'unref', 'setNoDelay', 'setKeepAlive'];

function defineTLSStreamSocket() {
  const JSStreamSocket = jsStreamSocketClass();
  class Wrapper extends JSStreamSocket {
    // `tlsSocket`: a tlswrap TLSSocket; until its handshake is done the
    // wrapper reports secureConnecting, and emits 'connect' after it, which
    // is what a session waits for on a socket that is not node:tls's.
    constructor(tlsSocket) {
      const events = ['data', 'end', 'close'];
      const before = events.map((event) => tlsSocket.listeners(event));
      super(tlsSocket);
      const [data, end, close] = events.map((event, i) =>
        tlsSocket.listeners(event).filter((listener) => !before[i].includes(listener)));
      // doWrite's: the request of a write made during a read (until that
      // read's handlers are due), that of a write whose callback has yet to
      // come, and nghttp2's next write while that one is unsent.
      this[kReadWrite] = null;
      this[kUnsent] = null;
      this[kHeldWrite] = null;
      // node's listener that hands each chunk to nghttp2, paced (see
      // h2_pacing.js), and those that pass on the end and close of the TLS
      // socket, held behind the chunks it holds; a Node that adds none or
      // several is left as it is.
      if (data.length === 1) {
        paceInput(this, tlsSocket, data[0], end.length === 1 ? end[0] : null, close.length === 1 ? close[0] : null,
                  finishReadWriteEarly);
      }
      if (kCurrentWriteRequest === undefined) kCurrentWriteRequest = ownSymbol(this, 'kCurrentWriteRequest');
      // _controlReleased: verified and handed to the user ('secureConnect'
      // or the server's 'secureConnection' comes next). One already destroyed
      // never will: the session closes over it at once, as node's does over
      // a destroyed node:tls socket, rather than fail with ERR_SOCKET_CLOSED.
      this[kSecureWait] = !tlsSocket._controlReleased && !tlsSocket.destroyed;
      if (this[kSecureWait]) {
        const event = tlsSocket._tlsOptions.isServer ? 'secure' : 'secureConnect';
        tlsSocket.once(event, () => {
          this[kSecureWait] = false;
          this.emit('connect');
        });
      }
    }

    get encrypted() {
      return true;
    }

    readStart() {
      return paceReadStart(this) ? super.readStart() : 0;
    }

    readStop() {
      paceReadStop(this);
      return super.readStop();
    }

    // nghttp2's buffers go to the TLS socket's engine in one writev, not
    // through its Writable (a write() per buffer, cork, a callback per
    // buffer): 10.7% fewer instructions per small h2 request, 1.4% per MiB.
    // nghttp2 has one write in flight at a time and waits for finishWrite;
    // JSStreamSocket's field for it is set as its own doWrite sets it, so its
    // shutdown and close still wait for or cancel this write. Anything else
    // in the socket's Writable (or no field to set) takes node's path.
    doWrite(req, bufs) {
      if (this[kUnsent] !== null) {
        // A write finished before its callback (finishReadWriteEarly) is
        // still with the TLS socket: this one follows once it is sent.
        this[kCurrentWriteRequest] = req;
        this[kHeldWrite] = bufs;
        return 0;
      }
      const merged = bufs.length > 1 ? mergeSmallBuffers(bufs) : bufs;
      const tls = this.stream;
      const handle = this._handle;
      if (kCurrentWriteRequest === null || handle === null || this[kCurrentWriteRequest] !== null ||
          tls._handle === null || tls.destroyed || tls.writableEnded || tls.writableLength !== 0 ||
          tls._writeCallback !== null) {
        return super.doWrite(req, merged);
      }
      let bytes = 0;
      for (let i = 0; i < merged.length; i++) bytes += merged[i].length;
      const turn = currentTurn();
      const reading = inRead(this);
      this[kCurrentWriteRequest] = req;
      if (reading) this[kReadWrite] = req;
      this[kUnsent] = req;
      tls._dispatch(merged, bytes, (err) => {
        this[kUnsent] = null;
        if (!err) {
          releaseOwnBuffers(bufs);
          if (merged !== bufs) releaseOwnBuffers(merged);
        } else if (this[kReadWrite] === req) {
          this[kReadWrite] = null; // it finishes with its error code, below
        }
        if (this[kCurrentWriteRequest] !== req) {
          // Finished early (or cancelled): a write held behind it goes now.
          sendHeldWrite(this);
        } else if (err || turn !== loopTurn) {
          // As node's: finished from a later turn of the loop, with a uv code.
          setImmediate(finishWriteNT, this, handle, req, err ? uvCode(err) : 0);
        } else if (reading) {
          // Made while nghttp2 read the input that provoked it (a SETTINGS
          // ACK), complete in that turn, and not finished ahead of that
          // read's handlers (finishReadWriteEarly: pacing held input back).
          // Finished on the next tick: from the check phase, the immediates
          // queued meanwhile would run first, such as the one feeding a
          // GOAWAY held back, read then along with DATA that nghttp2 paused
          // behind this write ('goaway' came before the body's 'end').
          process.nextTick(finishReadWriteNT, this, handle, req);
        } else {
          // Any other (nghttp2's own, from the check phase): before any
          // immediate too, as node:tls finishes it among the native ones,
          // or a destroy() from an immediate finds nghttp2 writing and sends
          // no GOAWAY. But once the ticks its frames set off have run: a
          // graceful close whose last stream closed there completes inside
          // this finish, without a second GOAWAY, as over node:tls.
          queueMicrotask(() => finishReadWriteNT(this, handle, req));
        }
      });
      return 0;
    }

    get secureConnecting() {
      return this[kSecureWait];
    }

    // node:http2 over node:tls writes through the TLS handle in C++: a write
    // the connection fails (a reset mid-download) fails only that write, as
    // finishWrite's code, and the session closes with the socket, without
    // an error. Here the TLS socket fails as a net.Socket does and
    // JSStreamSocket passes that on as the session's error: a write's is
    // kept to the write (doWrite's callback has its code).
    emit(event, ...args) {
      if (event === 'error' && args[0] !== null && typeof args[0] === 'object' && args[0].syscall === 'write') {
        return false;
      }
      return super.emit(event, ...args);
    }
  }
  for (const name of forwardedMethods) {
    Object.defineProperty(Wrapper.prototype, name, {
      configurable: true,
      writable: true,
      value: {
        [name](...args) {
          return this.stream[name](...args);
        },
      }[name],
    });
  }
  for (const name of forwardedChainable) {
    Object.defineProperty(Wrapper.prototype, name, {
      configurable: true,
      writable: true,
      value: {
        [name](...args) {
          this.stream[name](...args);
          return this;
        },
      }[name],
    });
  }
  for (const name of forwardedGetters) {
    Object.defineProperty(Wrapper.prototype, name, {
      configurable: true,
      get() {
        return this.stream[name];
      },
    });
  }
  return Wrapper;
}

function ownSymbol(object, description) {
  const found = Object.getOwnPropertySymbols(object).find((sym) => sym.description === description);
  return found === undefined ? null : found;
}

// Which turn of the event loop this is, for doWrite's writes: the count
// moves on in the check phase after such a write was made (one immediate
// for all sessions). A write whose callback comes before that did not wait
// for the socket to drain: its ciphertext reached the kernel inside
// writev(), or later in the same engine cycle (the native transport sends a
// write made from a 'data' handler once the batch is delivered). As nothing
// was waited for, finishing it ahead of the immediates starves no I/O, and
// nghttp2 sends what comes next from an immediate of its own. A write that
// waited keeps node's setImmediate.
let loopTurn = 0;
let turnEnding = false;
function currentTurn() {
  if (!turnEnding) {
    turnEnding = true;
    setImmediate(endTurn);
  }
  return loopTurn;
}
function endTurn() {
  loopTurn++;
  turnEnding = false;
}

// `req`: the write request to finish, unless the wrapper no longer has it
// in flight (closed, or finished already).
function finishWriteNT(wrapper, handle, req, code) {
  if (wrapper[kCurrentWriteRequest] === req) wrapper.finishWrite(handle, code);
}

// A write complete in its turn (see doWrite), on the tick after the 'stream'
// handlers of a read that provoked it: finished now once the whole read has
// been fed. While pacing holds part of it back (a burst of requests), the
// responses that the rest provokes are left to gather behind this write, as
// before, and go in one write from the check phase rather than in one each.
function finishReadWriteNT(wrapper, handle, req) {
  if (inputHeld(wrapper)) setImmediate(finishWriteNT, wrapper, handle, req, 0);
  else finishWriteNT(wrapper, handle, req, 0);
}

// On the tick after a read that ended a header block, ahead of its 'stream'
// handlers: the write nghttp2 made during that read (a SETTINGS ACK) is
// finished now, whether or not its callback has come. Over node:tls those
// handlers run inside the read, before that write is made, so nghttp2 is
// not writing when they run; here it was, and a destroy() at once in a
// handler lost the response and sent no GOAWAY (a destroyed nghttp2 sends
// nothing once its write in flight completes). Node 20 sends the response
// there (as destroy() resets the streams), 22 and later a GOAWAY instead; both
// now send the response. The TLS socket already holds the write, in order;
// its callback then only releases the buffers and lets the next write go,
// so no more than this one write is with the socket unfinished. Not while
// pacing holds input back (see finishReadWriteNT).
function finishReadWriteEarly(wrapper) {
  const req = wrapper[kReadWrite];
  wrapper[kReadWrite] = null;
  if (req === null || wrapper[kCurrentWriteRequest] !== req || wrapper._handle === null || inputHeld(wrapper)) return;
  wrapper.finishWrite(wrapper._handle, 0);
}

// nghttp2's write held behind an unsent one (see doWrite), made now; unless
// closing the wrapper cancelled it meanwhile.
function sendHeldWrite(wrapper) {
  const bufs = wrapper[kHeldWrite];
  const req = wrapper[kCurrentWriteRequest];
  wrapper[kHeldWrite] = null;
  if (bufs === null || req === null) return;
  wrapper[kCurrentWriteRequest] = null;
  wrapper.doWrite(req, bufs);
}

function wrap(tlsSocket) {
  if (TLSStreamSocket === null) TLSStreamSocket = defineTLSStreamSocket();
  return new TLSStreamSocket(tlsSocket);
}

// node's ALPN choice for HTTP/2 over TLS (the caller's ALPNProtocols yield to it).
function alpnOptions(options) {
  if (options.ALPNCallback) return { ...options };
  const ALPNProtocols = options.allowHTTP1 === true ? ['h2', 'http/1.1'] : ['h2'];
  return { ...options, ALPNProtocols };
}

// ---- server ----

// Events of the inner h2 server passed on to ours. Each is listened to there
// only while ours has a listener for it, since node asks the inner server
// whether anyone listens ('request' turns the compatibility API on,
// 'checkContinue', 'priority', 'connect' and 'timeout' change what it does).
const forwardedEvents = new Set([
  'stream', 'request', 'checkContinue', 'checkExpectation', 'connect', 'sessionError', 'timeout', 'priority',
]);

function onNewListener(event) {
  if (!forwardedEvents.has(event) || this[kForwarders].has(event)) return;
  const forward = (...args) => this.emit(event, ...args);
  this[kForwarders].set(event, forward);
  this[kInner].on(event, forward);
}

function onRemoveListener(event) {
  const forward = this[kForwarders].get(event);
  if (forward === undefined || this.listenerCount(event) > 0) return;
  this[kForwarders].delete(event);
  this[kInner].removeListener(event, forward);
}

// Whether node's own h2 server gives its HTTP/1.1 side node:http's server
// options (Node 22 on) or only the timeouts (Node 20): asked of one of its
// servers, once.
let storesHTTPOptions;
function nodeStoresHTTPOptions() {
  if (storesHTTPOptions === undefined) {
    storesHTTPOptions = 'requireHostHeader' in nodeHttp2.createSecureServer({ allowHTTP1: true });
  }
  return storesHTTPOptions;
}

function onTlsClientError(err, socket) {
  if (!this.emit('clientError', err, socket)) socket.destroy(err);
}

// A TLS connection that did not choose h2.
function onOtherProtocol(server, socket) {
  if (server[kOptions].allowHTTP1 === true) {
    httpConnectionListener.call(server, socket);
    return;
  }
  if (server.emit('unknownProtocol', socket)) return;
  const timer = setTimeout(() => socket.destroy(), server[kOptions].unknownProtocolTimeout);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end('HTTP/1.0 403 Forbidden\r\nContent-Type: text/plain\r\n\r\n' +
             'Missing ALPN Protocol, expected `h2` to be available.\n' +
             'If this is a HTTP request: The server was not configured with the `allowHTTP1` option ' +
             'or a listener for the `unknownProtocol` event.\n');
}

function onSecureConnection(socket) {
  if (socket.alpnProtocol === false || socket.alpnProtocol === 'http/1.1') {
    onOtherProtocol(this, socket);
    return;
  }
  this[kInner].emit('connection', wrap(socket));
}

class Http2SecureServer extends TLSServer {
  constructor(options, requestListener) {
    // Unlike createServer(), node's createSecureServer() takes no listener
    // in the options' place: the options carry the certificate.
    if (options === undefined) {
      options = {};
    } else if (options === null || typeof options !== 'object') {
      throw invalidArgType('options', 'Object', options);
    }
    // node's own h2 server takes the h2 options (and validates them).
    const inner = nodeHttp2.createServer(options);
    super(alpnOptions(options), onSecureConnection);
    this[kInner] = inner;
    this[kOptions] = {
      allowHTTP1: options.allowHTTP1 === true,
      unknownProtocolTimeout: options.unknownProtocolTimeout === undefined ? 10000 : options.unknownProtocolTimeout,
    };
    this[kForwarders] = new Map();
    this.on('newListener', onNewListener);
    this.on('removeListener', onRemoveListener);
    // A session's `server` is ours, not the inner one.
    inner.on('session', (session) => {
      Object.defineProperty(session, 'server', { configurable: true, value: this });
      this.emit('session', session);
    });

    if (options.allowHTTP1 === true) {
      if (nodeStoresHTTPOptions()) {
        // http1Options is node 24's; Http1IncomingMessage/Http1ServerResponse
        // node 20's names (deprecated by 24 in favour of http1Options).
        storeHTTPOptions.call(this, {
          ...options,
          IncomingMessage: options.Http1IncomingMessage,
          ServerResponse: options.Http1ServerResponse,
          ...options.http1Options,
        });
        this.httpAllowHalfOpen = false;
      } else {
        // Node 20's h2 server sets only the timeouts and its own message
        // classes: no Host header check, no keep-alive timeout, and
        // node:http's defaults for the rest.
        this[kIncomingMessage] = options.Http1IncomingMessage || http.IncomingMessage;
        this[kServerResponse] = options.Http1ServerResponse || http.ServerResponse;
        this.headersTimeout = 60_000;
        this.requestTimeout = 300_000;
        this.connectionsCheckingInterval = 30_000;
      }
      this.maxHeadersCount = null;
      this.on('listening', setupConnectionsTracking);
    }
    if (typeof requestListener === 'function') this.on('request', requestListener);
    this.on('tlsClientError', onTlsClientError);
  }

  // The sessions' idle timeout: the inner server gives it to each session.
  get timeout() {
    return this[kInner] ? this[kInner].timeout : 0;
  }

  set timeout(msecs) {
    if (this[kInner]) this[kInner].timeout = msecs;
  }

  setTimeout(msecs, callback) {
    this[kInner].setTimeout(msecs);
    if (callback !== undefined) {
      if (typeof callback !== 'function') throw invalidArgType('callback', 'Function', callback);
      this.on('timeout', callback);
    }
    return this;
  }

  updateSettings(settings) {
    this[kInner].updateSettings(settings);
  }

  close(...args) {
    if (this[kOptions].allowHTTP1) httpServerPreClose(this);
    super.close(...args);
    // Node 24's h2 servers also close their sessions (gracefully) here.
    this[kInner].close();
    return this;
  }

  closeIdleConnections() {
    if (this[kOptions].allowHTTP1) http.Server.prototype.closeIdleConnections.call(this);
  }
}

function createSecureServer(options, requestListener) {
  return new Http2SecureServer(options, requestListener);
}

// ---- client ----

// node's connect checks these only where it makes the TLS connection
// itself, which the createConnection given below skips.
function validateSessionOptions(options) {
  if (options.settings !== undefined &&
      (options.settings === null || typeof options.settings !== 'object' || Array.isArray(options.settings))) {
    throw invalidArgType('options.settings', 'object', options.settings);
  }
  for (const name of ['maxSessionInvalidFrames', 'maxSessionRejectedStreams', 'unknownProtocolTimeout']) {
    const value = options[name];
    if (value !== undefined && !(Number.isInteger(value) && value >= 0 && value <= 2 ** 32 - 1)) {
      validateInteger(value, nodeNamesOptions() ? `options.${name}` : name, 0, 2 ** 32 - 1);
    }
  }
}

// Whether node's errors name these "options.<name>" (Node 24) or "<name>"
// (Node 20): asked of node's connect, only once a value is bad. It throws
// before making any connection; should it not, its session is closed.
let namesOptions;
function nodeNamesOptions() {
  if (namesOptions === undefined) {
    namesOptions = false;
    try {
      const session = nodeHttp2.connect('https://127.0.0.1:1', { maxSessionInvalidFrames: -1 });
      session.on('error', () => {});
      session.destroy();
    } catch (err) {
      namesOptions = /"options\.maxSessionInvalidFrames"/.test(err.message);
    }
  }
  return namesOptions;
}

// (authority[, options][, listener]) as node's connect takes them. An https
// authority is reached with tlswrap; anything else (h2c, a createConnection
// of the caller's) is node's.
function connect(authority, options, listener) {
  if (typeof options === 'function') {
    listener = options;
    options = undefined;
  }
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    return nodeHttp2.connect(authority, options, listener); // node's error
  }
  options = { ...options };
  if (typeof options.createConnection === 'function') {
    // The caller's connection: node's session over it, but a tlswrap socket
    // it returns keeps its TLS identity (encrypted, alpnProtocol, originSet,
    // the certificates), as a node:tls socket does under node:http2.
    const createConnection = options.createConnection;
    options.createConnection = function (...args) {
      const socket = Reflect.apply(createConnection, this, args);
      return socket instanceof TLSSocket ? wrap(socket) : socket;
    };
    return nodeHttp2.connect(authority, options, listener);
  }
  const url = typeof authority === 'string' ? new URL(authority) : authority;
  if (url === null || typeof url !== 'object') return nodeHttp2.connect(authority, options, listener);
  const protocol = url.protocol || options.protocol || 'https:';
  if (protocol !== 'https:') return nodeHttp2.connect(authority, options, listener);

  const port = String(url.port ? url.port : 443);
  let host = 'localhost';
  if (url.hostname) {
    host = url.hostname[0] === '[' ? url.hostname.slice(1, -1) : url.hostname;
  } else if (url.host) {
    host = url.host;
  }
  validateSessionOptions(options);
  const tlsOptions = alpnOptions(options);
  if (!tlsOptions.servername && !net.isIP(host)) tlsOptions.servername = host;
  options.createConnection = () => wrap(tlsConnect(port, host, tlsOptions));
  return nodeHttp2.connect(authority, options, listener);
}

Object.defineProperty(connect, promisify.custom, {
  value: (authority, options) => new Promise((resolve, reject) => {
    const session = connect(authority, options, () => {
      session.removeListener('error', reject);
      resolve(session);
    });
    session.once('error', reject);
  }),
});

// A session over a socket the caller already has; a tlswrap socket keeps its
// TLS identity.
function performServerHandshake(socket, options) {
  return nodeHttp2.performServerHandshake(socket instanceof TLSSocket ? wrap(socket) : socket, options);
}

module.exports = { ...nodeHttp2, connect, createSecureServer };
if ('performServerHandshake' in nodeHttp2) module.exports.performServerHandshake = performServerHandshake;
