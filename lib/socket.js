'use strict';

// TLSSocket: a net.Socket (as node:tls's is, so `instanceof net.Socket` and
// code that checks for it keep working) with the tls.TLSSocket surface, over
// the native engine. It never uses net.Socket's own handle: every method that
// would is overridden here. The transport under it is any Duplex (a net.Socket
// or anything else); ciphertext crosses it in whole flushes, plaintext comes
// up in coalesced chunks of up to 64 KiB.

const net = require('node:net');
const { addAbortSignal } = require('node:stream');
const { types: { isUint8Array } } = require('node:util');
const binding = require('./binding');
const { convertALPNProtocols, parseWire } = require('./alpn');
const { attachKeylogFile } = require('./cli_flags');
const { exportedCreateSecureContext, nativeContext } = require('./context');
const { codedError, invalidArgType } = require('./errors');
const {
  attachTransport, awaitsConnect, checkTransport, kOwner, resumeTransport, tcpTransportClosing, transportGoneFirst,
} = require('./transport');
const { addNetSurface } = require('./net_surface');
const { addTlsSurface } = require('./tls_surface');
require('./handle_surface');
const { addHandshakeEvents } = require('./handshake_events');
const { addSocketErrors, writeCanceledError } = require('./socket_errors');
const { addSocketWrites } = require('./socket_writes');
const { enablePsk } = require('./psk');
const { traceOption, wantsOCSPRequest } = require('./ocsp');

// The engine's event codes (src/engine/events.h, exported by the addon).
const {
  handshakeStart: kHandshakeStart,
  handshakeDone: kHandshakeDone,
  session: kSession,
  keylog: kKeylog,
  certCb: kCertCb,
  end: kEnd,
  error: kError,
  shutdown: kShutdown,
  newSession: kNewSession,
  resumeSession: kResumeSession,
  transportError: kTransportError,
  writeDone: kWriteDone,
  writeGone: kWriteGone,
  readGone: kReadGone,
  ocspResponse: kOCSPResponse,
  inputBeforeStart: kInputBeforeStart,
} = binding.events;


// The engine calls these with `this` = the native handle. They are shared by
// every connection, so a connection costs no closures.
// (chunk) a fresh chunk; (buffer, nread) onread's buffer; (buffer, offset,
// length) a part of a buffer the engine decrypted into.
function onEngineData(chunk, a, b) {
  if (b !== undefined && (a !== 0 || b !== chunk.length)) chunk = chunk.subarray(a, a + b);
  this[kOwner]._onClearData(chunk, a);
}
function onEngineEvent(type, arg, extra) {
  this[kOwner]._onEngineEvent(type, arg, extra);
}
// Runs on OpenSSL's stack (the engine needs the answer at once); answers
// with the offset of the chosen protocol in the client's offer. Shared, the
// socket found through the handle (`this`), as the engine's other callbacks:
// the native object holds it strongly, and a closure over the socket would
// keep a socket JS has dropped alive.
// What the user's callback throws fails this connection ('tlsClientError'),
// as with node:tls: thrown out of here it would reach the process.
function onALPN(servername, offer) {
  const socket = this[kOwner];
  // node:tls has the name by now (OpenSSL's servername callback runs first).
  if (servername) socket.servername = servername;
  try {
    const { names, offsets } = parseWire(offer);
    const result = socket._tlsOptions.ALPNCallback.call(socket, { servername, protocols: names });
    if (result === undefined) return undefined;
    const index = names.indexOf(result);
    if (index === -1) {
      socket.destroy(codedError(TypeError, 'ERR_TLS_ALPN_CALLBACK_INVALID_RESULT',
                                `ALPN callback returned a value (${result}) that did not match any of the ` +
                                `client's offered protocols (${names.join(', ')})`));
      return undefined;
    }
    return offsets[index];
  } catch (err) {
    socket.destroy(err);
    return undefined;
  }
}
function onEngineCiphertext(chunk) {
  return this[kOwner]._writeCiphertext(chunk);
}
// The engine reports key material, and a client its sessions, only once
// someone listens for them (as node:tls): encoding each session costs every
// full handshake, and its event holds back the reads behind it.
// node:http adds a 'close' listener per response: the event is checked
// before the handle (on Node 22+ `_handle` is an accessor of net.Socket's).
function onNewListener(event) {
  if (event === 'keylog') {
    if (this._handle !== null) this._handle.enableKeylog();
  } else if (event === 'session' && !this._tlsOptions.isServer && this._handle !== null) {
    this._handle.enableSessionEvents(true, false);
  }
}

function onEndBeforeSecure() {
  if (this._secureEstablished || this._hadError) return;
  this.destroy(this._disconnectedBeforeSecure());
}

function emitCloseNT(socket, hadError) {
  socket._answersAfterError = null;
  socket.emit('close', hadError);
}

// node's 'close' comes from the handle's close callback, after the
// immediates of that turn of the loop. The native transport closes its
// libuv handle then too, as does the JS transport's net.Socket that the
// program destroyed; one the TLS socket destroyed (its own, a server's or
// the caller's) says when with its 'close'.
function scheduleClose(socket, hadError) {
  if (socket._native || transportGoneFirst(socket._transport)) setImmediate(emitCloseNT, socket, hadError);
  else if (tcpTransportClosing(socket._transport)) socket._transport.once('close', () => emitCloseNT(socket, hadError));
  else process.nextTick(emitCloseNT, socket, hadError);
}

function callWriteThenCloseNT(socket, writeCallback, err, hadError) {
  writeCallback(err);
  scheduleClose(socket, hadError);
}

class TLSSocket extends net.Socket {
  constructor(socket, options) {
    // As node:tls's: options that are no object are none.
    const opts = options !== null && typeof options === 'object' && !Array.isArray(options) ? options : {};
    if (socket) checkTransport(socket, 'socket');
    const enableTrace = traceOption(opts.enableTrace);
    // As node:tls: with a socket given, its allowHalfOpen, never the option.
    const allowHalfOpen = socket ? !!socket.allowHalfOpen : !!opts.allowHalfOpen;
    // net.Socket makes this a Duplex without a handle; it sets emitClose off
    // ('close' with hadError is emitted by _destroy) and passes strings through.
    super({ allowHalfOpen, highWaterMark: opts.highWaterMark });

    this._tlsOptions = opts;
    this._madeBare = !socket; // see connecting
    this._connectOptions = null; // connect()'s, for a socket it made
    this._sessionFromCache = false; // connect() offered a session of its cache
    this._endBeforeSecure = false; // EOF before the handshake; ECONNRESET at 'end'
    this._secureEstablished = false;
    this._controlReleased = false;
    this._errorsReleased = false; // 'error' is the user's (_releaseErrors)
    this._started = false;
    this._handover = false; // the engine may not start: node's writes first, no handle of ours yet
    this._startWanted = false; // _start() came while _handover
    this._startAtEnd = false; // the peer's EOF came before the start (a client made by hand)
    this._starting = false; // in the engine's start(): see _onEngineError
    this._hadError = false;
    this._enginePaused = false;
    this._pauseAfterHandshake = false; // pause() with onread before the handshake is done
    this._newSessionsPending = 0; // 'newSession' callbacks not called yet
    this._securePending = false; // handshake done, 'secure' waits for them
    this._finalCallback = null;
    this._shutdownRequested = false; // _final() ran: the engine sends close_notify
    this._ignoredTransportError = null;
    this._transportFinish = null; // ends the wait for the transport to finish
    this._openAfterTransport = false; // the TCP socket closed; this waits for its 'end'
    this._writeCallback = null;
    this._inWrite = false; // in the handle's writev(), under _write()
    this._flushedCallback = null;
    this._ciphertextWrites = 0; // transport writes made, and of those:
    this._ciphertextCounted = 0; // the first n, counted as flushed (in order); the rest are in flight
    this._ciphertextCallbacks = 0; // the first n, called back
    this._writeId = 0;
    this._writeQueueSize = 0; // bytes of the write in flight (handle.writeQueueSize)
    this._bytesRead = 0;
    this._bytesWritten = 0;
    this._timer = null;
    this._timeoutMs = 0;
    this._timerMs = 0; // the duration _timer was made with
    this._handshakeTimer = null;
    this._renegotiations = 0;
    this._renegotiationWindowStart = 0;
    this._disableRenegotiation = false;
    this._onreadCallback = null;
    this._onreadBufferFn = null;
    this._transport = null;
    // A client's sessions wait until connect() has verified the connection
    // (chain and name): one from a connection that failed verification must
    // never reach a cache, or resuming it would skip the check that failed.
    this._sessionReleased = false;
    this._pendingSession = null;
    this._answersAfterError = null; // see answersOf(); until 'close'
    this._native = false; // the connection is on the engine's own TCP handle
    this._peername = null; // on the native transport, addresses once asked for
    this._sockname = null;
    this._unrefed = null; // the last ref() (false) or unref() (true); null: neither

    this.encrypted = true;
    this.authorized = false;
    this.authorizationError = null;
    this.alpnProtocol = null;
    this.servername = null;
    this.secureConnecting = true;
    this.server = opts.server;
    this._requestCert = !!opts.requestCert || !opts.isServer;
    this._rejectUnauthorized = opts.rejectUnauthorized !== false;

    const given = opts.secureContext;
    const context = given ? nativeContext(given) : exportedCreateSecureContext(opts).context;
    // A context made for this socket alone (here, or by connect()) is freed
    // when the socket is destroyed, not whenever GC gets to it: as in node:tls,
    // a client making a connection per request would otherwise pile them up.
    this._singleUseContext = !given || given.singleUse === true ? context : null;
    const handle = new binding.TLSWrap(context, !!opts.isServer);
    handle[kOwner] = this;
    handle.setCallbacks(onEngineData, onEngineEvent, onEngineCiphertext);
    this._handle = handle;
    this.ssl = handle;

    handle.setVerifyMode(this._requestCert, this._rejectUnauthorized);
    const alpn = {};
    convertALPNProtocols(opts.ALPNProtocols, alpn);
    if (alpn.ALPNProtocols) {
      handle.setALPNProtocols(alpn.ALPNProtocols);
    } else if (opts.ALPNProtocols && !opts.isServer) {
      throw invalidArgType('options.ALPNProtocols', ['Array', 'Buffer', 'TypedArray', 'DataView'], opts.ALPNProtocols);
    }
    if (enableTrace) handle.enableTrace();
    if (opts.isServer) {
      if (opts.SNICallback && typeof opts.SNICallback !== 'function') {
        throw invalidArgType('options.SNICallback', 'function', opts.SNICallback);
      }
      if (opts.SNICallback || wantsOCSPRequest(opts)) handle.enableCertCb();
      if (typeof opts.ALPNCallback === 'function') handle.enableALPNCallback(onALPN);
    } else {
      if (opts.session) {
        // The option reaches node's handle as it is: a Buffer, not the
        // string setSession() also takes (connect() converts one where
        // node:tls's does).
        if (!ArrayBuffer.isView(opts.session)) {
          throw codedError(TypeError, 'ERR_INVALID_ARG_TYPE', 'Session must be a buffer');
        }
        this.setSession(opts.session);
      }
      if (opts.requestOCSP) handle.requestOCSP();
    }
    if (opts.onread) this._setOnread(opts.onread);
    const pskError = enablePsk(handle, opts);

    // As node:tls: until connect() or the server takes a socket over, its
    // errors go to '_tlsError' too, and a socket made by hand that nobody
    // listens to does not throw them.
    this.on('error', this._tlsError);
    this.on('newListener', onNewListener);
    attachKeylogFile(this);

    if (socket) this._attach(socket);
    if (pskError !== null) {
      this.destroy(pskError);
      return;
    }
    if (opts.isServer && socket && !awaitsConnect(socket)) this._start();
    // As net.Socket's own option: an abort destroys the socket (AbortError).
    if (opts.signal !== undefined) addAbortSignal(opts.signal, this);
  }

  // As net.Socket: an onread without a callback and a Uint8Array or a
  // function for the buffer is ignored, and the socket emits 'data'.
  _setOnread(onread) {
    if (typeof onread !== 'object') return;
    const { buffer, callback } = onread;
    if (typeof callback !== 'function' || (typeof buffer !== 'function' && !isUint8Array(buffer))) return;
    this._onreadCallback = callback;
    if (typeof buffer === 'function') {
      // As node's: called once now and once after each callback; the
      // engine decrypts into the buffer it returned last.
      this._onreadBufferFn = buffer;
      this._nextOnreadBuffer();
    } else {
      this._handle.setReadBuffer(buffer);
    }
  }

  _nextOnreadBuffer() {
    const fn = this._onreadBufferFn;
    const buffer = fn();
    // Anything else goes to the engine as the function, which reports it.
    if (this._handle !== null) this._handle.setReadBuffer(ArrayBuffer.isView(buffer) ? buffer : fn);
  }

  _attach(transport, own = false) {
    attachTransport(this, transport, own);
  }

  _start() {
    if (this._started || this._handle === null) return;
    if (this._handover) {
      this._startWanted = true;
      return;
    }
    this._started = true;
    this._starting = true;
    try {
      this._handle.start();
    } finally {
      this._starting = false;
    }
  }

  // A client made by hand on a connected socket starts its handshake when
  // first used, as node:tls's does: at its first write (SSL_write begins it)
  // or when the peer's first bytes arrive (so does SSL_read). A server's, or
  // connect()'s, starts on its own (see the constructor and transport.js).
  _startOnUse() {
    const transport = this._transport;
    if (!this._tlsOptions.isServer && transport !== null && !awaitsConnect(transport)) this._start();
  }

  // ---- engine -> JS ----

  _onClearData(chunk, nread) {
    this._refreshTimeout();
    if (this._onreadCallback !== null) {
      this._bytesRead += nread;
      const more = this._onreadCallback(nread, chunk);
      if (this._onreadBufferFn !== null) this._nextOnreadBuffer();
      if (more === false) this._pauseEngine();
      return;
    }
    this._bytesRead += chunk.length;
    const state = this._readableState;
    if (state.flowing === true && state.length === 0 && !state.sync && !state.decoder && !state.ended &&
        !state.destroyed && !this._enginePaused && this.listenerCount('data') !== 0) {
      // What push() would do here, without the tick it schedules after every
      // chunk to call _read(), which for a socket the engine feeds only
      // restarts a paused engine: once per request on a keep-alive HTTP
      // connection, where node:https's parser reads its TLS stream natively.
      state.reading = false;
      if (state.multiAwaitDrain) state.awaitDrainWriters.clear();
      else state.awaitDrainWriters = null;
      state.dataEmitted = true;
      this.emit('data', chunk);
      return;
    }
    if (!this.push(chunk)) this._pauseEngine();
  }

  _pauseEngine() {
    if (this._enginePaused || this._handle === null) return;
    this._enginePaused = true;
    this._handle.readStop();
    // Stop the transport too, or ciphertext would pile up in the engine.
    if (this._transport && typeof this._transport.pause === 'function') this._transport.pause();
  }

  _resumeEngine() {
    if (!this._enginePaused || this._handle === null) return;
    this._enginePaused = false;
    if (this._transport) resumeTransport(this._transport);
    this._handle.readStart();
  }

  // Nothing leaves a destroyed socket, not even plaintext the stream still
  // buffers (Node 24's Readable would otherwise hand it to a flow that
  // destroy() interrupted).
  read(n) {
    if (this.destroyed) return null;
    return super.read(n);
  }

  _read() {
    // Not synchronously: plaintext pushed from inside _read() is buffered
    // rather than emitted, and an error right behind it would discard it.
    if (this._enginePaused) process.nextTick(resumeEngineNT, this);
  }

  pause() {
    if (this._onreadCallback !== null) {
      // The handshake still runs, as with node:tls: only plaintext waits.
      if (this._secureEstablished) this._pauseEngine();
      else this._pauseAfterHandshake = true;
    }
    return super.pause();
  }

  resume() {
    this._pauseAfterHandshake = false;
    if (this._onreadCallback !== null) process.nextTick(resumeEngineNT, this);
    return super.resume();
  }

  _onEngineEvent(type, arg, extra) {
    switch (type) {
      case kHandshakeStart:
        this._onHandshakeStart();
        break;
      case kHandshakeDone:
        this._onHandshakeDone();
        break;
      case kSession:
        this._onSession(arg);
        break;
      case kKeylog:
        this.emit('keylog', arg);
        break;
      case kCertCb:
        this._onCertCb(arg, extra);
        break;
      case kOCSPResponse:
        this.emit('OCSPResponse', arg);
        break;
      case kEnd:
        this._onEngineEnd();
        break;
      case kError:
        this._onEngineError(arg);
        break;
      case kShutdown:
        this._onShutdown();
        break;
      case kNewSession:
        this._onNewSession(arg);
        break;
      case kResumeSession:
        this._onResumeSession(arg);
        break;
      case kTransportError:
        this._onNativeTransportError(arg);
        break;
      case kWriteDone:
        this._onWriteDone(arg);
        break;
      case kWriteGone:
        this.destroy(codedError(Error, 'ERR_INVALID_STATE',
                                'Invalid state: a Buffer being written was detached before it was sent'));
        break;
      case kInputBeforeStart:
        // An EOF (`arg`) starts it at end(): see _final().
        if (arg === true) this._startAtEnd = true;
        else this._startOnUse();
        break;
      case kReadGone:
        this.destroy(codedError(Error, 'ERR_INVALID_STATE',
                                'Invalid state: the Buffer being read into was detached before its bytes were delivered'));
        break;
      default:
        break;
    }
  }

  // node:tls's error for a client whose peer left mid-handshake.
  _disconnectedBeforeSecure() {
    const err = codedError(Error, 'ECONNRESET',
                           'Client network socket disconnected before secure TLS connection was established');
    const o = this._connectOptions;
    err.path = o.path;
    err.host = o.host;
    err.port = o.port;
    err.localAddress = o.localAddress;
    this._hadError = true;
    return err;
  }

  _onEngineEnd() {
    // An EOF reported before the engine started (see the native transport's
    // OnTransportEOF) is not reported again once it does.
    if (this._readableState.ended) return;
    // The peer went away mid-handshake: node:tls reports it as a reset on
    // the sockets of connect() and of a server. One made by hand just ends.
    // A client's comes from its 'end' (as node:tls's, whose first 'end'
    // listener fails the socket): listeners of 'end' see it first.
    if (!this._secureEstablished && this._connectOptions !== null && !this._tlsOptions.isServer) {
      this._endBeforeSecure = true; // a transport that closes first fails it too
      this.prependOnceListener('end', onEndBeforeSecure);
    } else if (!this._secureEstablished && this.server) {
      this._hadError = true;
      this.destroy(codedError(Error, 'ECONNRESET', 'socket hang up'));
      return;
    }
    this.push(null);
    // As net.Socket does at EOF: with nothing buffered, 'end' is emitted even
    // if nobody reads (and with onread nothing ever is), so an unread socket
    // still half-closes and, without allowHalfOpen, closes.
    this.read(0);
  }

  _destroy(err, cb) {
    if (this._timer !== null) clearTimeout(this._timer);
    if (this._handshakeTimer !== null) clearTimeout(this._handshakeTimer);
    this._timer = null;
    this._handshakeTimer = null;
    this._pendingSession = null;
    const handle = this._handle;
    // The write in flight, if sending what waited in the engine completed it.
    let writeSent = false;
    if (handle !== null) {
      this._handle = null;
      // As node:tls does: a destroyed socket someone still holds does not
      // keep the handle object alive.
      this.ssl = null;
      // A verified connection first sends what was written before (from a
      // handler, it still waits in the engine).
      writeSent = handle.destroy(this._controlReleased, this._writeCallback !== null ? this._writeId : 0);
    }
    if (this._singleUseContext !== null) {
      // The connection's SSL keeps its own reference until it is freed.
      this._singleUseContext.close();
      this._singleUseContext = null;
    }
    const transport = this._transport;
    if (transport && !transport.destroyed && typeof transport.destroy === 'function') transport.destroy();
    // A write still in flight fails (and with it those queued behind it,
    // which the stream only fails once it is no longer writing), unless
    // destroy() just sent the rest of it. As node's write request, it is
    // called back after the socket's 'error' and before 'close'.
    const writeCallback = this._takeWriteCallback();
    cb(err);
    if (writeCallback === null) {
      scheduleClose(this, !!err);
      return;
    }
    // 'close' after what the callback sets off on its tick (http's response
    // emits its 'finish', then its own 'close'), as node's comes from the
    // handle's close callback, a later turn of the loop.
    process.nextTick(callWriteThenCloseNT, this, writeCallback, writeSent ? undefined : writeCanceledError(), !!err);
  }
}

addNetSurface(TLSSocket);
addTlsSurface(TLSSocket);
addHandshakeEvents(TLSSocket);
addSocketErrors(TLSSocket);
addSocketWrites(TLSSocket);

function resumeEngineNT(socket) {
  socket._resumeEngine();
}

module.exports = { TLSSocket, kOwner };
