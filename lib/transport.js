'use strict';

// What carries a TLSSocket's ciphertext: a connected TCP net.Socket is taken
// over by the engine's native transport (its own libuv handle on a dup of
// the fd); any other Duplex, or every connection with TLSWRAP_TRANSPORT=js,
// carries ciphertext through JavaScript, fed to and drained from the engine
// by the listeners below (a TCP or pipe net.Socket: by what its handle
// reads, as node:tls reads it). The takeover is lib/transport_takeover.js.

const net = require('node:net');
const { invalidArgInstance } = require('./errors');
const { systemError, writeCanceledError } = require('./socket_errors');
const { feed } = require('./transport_feed');
const { awaitNodeWrites, canTakeOver, takeOver } = require('./transport_takeover');

const kOwner = Symbol('tlswrap.owner');
const kOwnTransport = Symbol('tlswrap.ownTransport');
const kCloseSeen = Symbol('tlswrap.transportCloseSeen');
const kAllowHalfOpen = Symbol('tlswrap.allowHalfOpen');
const kPush = Symbol('tlswrap.push');
const kEofSeen = Symbol('tlswrap.eofSeen');
const kShutDown = Symbol('tlswrap.shutDown');
const kIoError = Symbol('tlswrap.ioError');
const kInRead = Symbol('tlswrap.inRead');
const kGoneFirst = Symbol('tlswrap.transportGoneFirst');
const kEmpty = Buffer.alloc(0);

// Transport listeners, `this` = the transport.
function onTransportData(chunk) {
  const owner = this[kOwner];
  const handle = owner._handle;
  if (handle === null) return;
  owner._refreshTimeout();
  feed(handle, chunk);
}
// A net.Socket's reads, where its handle hands them over (`this` = the
// socket). node:tls reads such a socket's handle itself: the socket's own
// 'data' listeners get none of the ciphertext and its setEncoding() does not
// apply to it, nor does it see the EOF: it emits no 'end' of its own.
function pushCiphertext(chunk, encoding) {
  const owner = this[kOwner];
  if (chunk === null && owner._handle !== null) {
    this._readableState.reading = false;
    if (this[kEofSeen]) return false; // a read restarted after the EOF
    this[kEofSeen] = true;
    this[kInRead] = false;
    feed(owner._handle, null);
    return false;
  }
  if (chunk === null || owner._handle === null || !(chunk instanceof Uint8Array)) {
    return this[kPush](chunk, encoding);
  }
  // As push() does with a read: the socket's _read() (which restarts its
  // handle) may be called again, once the TLS socket resumes. (Not an empty
  // push(): that asks for a read at once, even from a stopped handle.)
  // First, in case a listener's exception is thrown out of the feed.
  this._readableState.reading = false;
  onTransportData.call(this, chunk);
  // False stops the handle reading while the engine does not want input.
  return !owner._enginePaused;
}
function onTransportEnd() {
  const handle = this[kOwner]._handle;
  if (handle !== null) feed(handle, null);
}
function onTransportError(err) {
  const owner = this[kOwner];
  // A write failed after end() (see onCiphertextFlushed): the socket still
  // finishes, then closes with the transport.
  if (err === owner._ignoredTransportError) return;
  // Its handle's read or a ciphertext write failed: node:tls's own.
  if (this[kOwnTransport] || err === this[kIoError]) {
    owner.destroy(err);
    return;
  }
  // A transport the caller passed in: as with node:tls, each of its errors
  // is the TLS socket's at once (before listeners added to the transport
  // later), and the TLS socket closes when the transport does, with no
  // error of its own.
  if (!owner.destroyed) emitTransportError(owner, err);
}
// As node:tls's _emitTLSError: '_tlsError', and 'error' only once errors
// are released (connect() at once, a server's socket at 'secureConnection';
// before, the server reports it as 'tlsClientError').
function emitTransportError(owner, err) {
  owner.emit('_tlsError', err);
  if (owner._errorsReleased) owner.emit('error', err);
}
function onTransportClose() {
  this[kCloseSeen] = true;
  const owner = this[kOwner];
  if (owner.destroyed) return;
  // As with node:tls, the TLS socket closes with its transport, with no
  // error and no EOF of its own (a transport that ended said so with 'end'
  // first). That includes a net.Socket whose connection the engine holds on
  // a duplicate of its fd: it closes only when the program destroys it.
  // The wait for the transport to finish is over: 'finish' comes before
  // 'close', as it does when node's shutdown fails.
  if (owner._transportFinish !== null) owner._transportFinish();
  // The peer's EOF came before the handshake was done and the transport
  // closed before 'end' could report it: the reset is reported now.
  if (owner._endBeforeSecure && !owner._secureEstablished && !owner._hadError) {
    owner.destroy(owner._disconnectedBeforeSecure());
    return;
  }
  // A write lost with the transport (its ciphertext in the Duplex, or made
  // once the connection was up): as node:tls's, the socket fails with it
  // (ECANCELED), not only the write's callback. One still behind the
  // handshake only fails its write.
  const lost = owner._writeCallback !== null && !owner._native &&
    (owner._ciphertextWrites > owner._ciphertextCounted || owner._secureEstablished);
  // A TCP socket that closed cleanly after its EOF (so both sides had
  // ended): node:tls, which reads such a socket natively, keeps the
  // plaintext the program has not read yet and closes after its 'end'.
  // Destroying now would drop it. (Over any other Duplex, TLS in TLS
  // included, node:tls closes at once, as below.)
  if (!lost && this instanceof net.Socket && !this.encrypted && (this.readableEnded || this[kEofSeen]) &&
      !this.errored &&
      owner._handle !== null && !owner.readableEnded) {
    owner._openAfterTransport = true;
    owner.once('end', destroyAfterEndNT);
    return;
  }
  owner.destroy(lost ? writeCanceledError() : undefined);
}
function destroyAfterEndNT() {
  process.nextTick(destroyOwner, this);
}
function destroyOwner(socket) {
  if (!socket.destroyed) socket.destroy();
}
function onTransportDrain() {
  const handle = this[kOwner]._handle;
  if (handle !== null) handle.transportDrained();
}
function onTransportConnect() {
  const owner = this[kOwner];
  if (owner._handle === null) return;
  useTransport(owner);
  // connect()'s handshake starts before the user's 'connect' listeners run,
  // as with node:tls (its _start is the first 'connect' listener): an end()
  // from one of them shuts down after the ClientHello. A client made by hand
  // waits for its first write or the peer's first bytes, as node:tls's does
  // (see _startOnUse).
  if (owner._tlsOptions.isServer || owner._connectOptions !== null) owner._start();
  owner.emit('connect');
  if (this[kOwnTransport]) owner.emit('ready');
}

// A TCP socket the TLS socket made for itself (connect(), tlsSocket.connect())
// is, to the user, the TLS socket: as node's net.Socket, it tells of its DNS
// lookup and of each address it tries. A socket the caller passed in tells
// its own listeners.
const forwardedEvents = ['lookup', 'connectionAttempt', 'connectionAttemptFailed', 'connectionAttemptTimeout'];
const forwarders = Object.fromEntries(forwardedEvents.map((name) => [name, function forward(...args) {
  this[kOwner].emit(name, ...args);
}]));

// Ciphertext goes out through a transport's write()/end() and comes back as
// its 'data': a value without them would fail later, from inside a stream.
function checkTransport(transport, name) {
  if (typeof transport.write !== 'function' || typeof transport.end !== 'function' ||
      typeof transport.on !== 'function') {
    throw invalidArgInstance(name, 'Duplex', transport);
  }
}

function attachTransport(socket, transport, own = false) {
  // A second TLS socket over a net.Socket that carries one: as node:tls's
  // can, the first fails ("read EALREADY", its handle taken) and takes the
  // net.Socket, so the second, down. Left open, it would be open for good.
  const previous = transport[kOwner];
  if (previous !== undefined && previous !== socket && !previous.destroyed && transport instanceof net.Socket &&
      !transport.encrypted) {
    previous.destroy(systemError('read', 'EALREADY'));
  }
  socket._transport = transport;
  socket._parent = transport;
  transport[kOwner] = socket;
  transport[kOwnTransport] = own;
  // Half-close is the TLS layer's business (close_notify, then FIN once the
  // engine has flushed): a transport that ended itself on the peer's FIN
  // would cut off ciphertext the engine still has to send. A caller's socket
  // gets its own value back if the engine takes the connection over.
  if (typeof transport.allowHalfOpen === 'boolean') {
    transport[kAllowHalfOpen] = transport.allowHalfOpen;
    transport.allowHalfOpen = true;
  }
  transport.on('error', onTransportError);
  transport.on('close', onTransportClose);
  if (awaitsConnect(transport)) {
    transport.once('connect', onTransportConnect);
    if (own) for (const name of forwardedEvents) transport.on(name, forwarders[name]);
    return;
  }
  useTransport(socket);
}

// A net.Socket that is connecting, or not yet asked to (no handle): as
// node:tls does, the TLS socket waits for its 'connect'.
function awaitsConnect(transport) {
  return !!transport.connecting || (transport instanceof net.Socket && !transport._handle && !transport.destroyed);
}

// The transport is connected: move the connection onto the engine's own
// TCP handle where it can be, else carry ciphertext through the Duplex.
function useTransport(socket, onNextTick = false) {
  const transport = socket._transport;
  // Bytes node still has to write on a socket we take over (a STARTTLS
  // reply, say) go out first: closing node's handle would cancel them.
  if (canTakeOver(transport) && transport.writableLength > 0) {
    awaitNodeWrites(socket, transport);
    return;
  }
  const hasBuffered = transport.readableLength > 0 && typeof transport.read === 'function';
  // Bytes the transport already read (a STARTTLS upgrade) are read from it
  // on the next tick, as node:tls does: its own 'data' listeners see them
  // once `new TLSSocket()` has returned (a listener that checks whether the
  // upgrade happened then knows it has). The engine waits meanwhile.
  if (hasBuffered && !onNextTick) {
    socket._handover = true;
    process.nextTick(useBufferedNT, socket);
    return;
  }
  // They come first, in one receive(): a listener's exception thrown out of
  // it leaves none of them behind, and the transport is still listened to.
  let buffered = null;
  if (hasBuffered) {
    const chunks = [];
    let chunk;
    while ((chunk = transport.read()) !== null) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    buffered = Buffer.concat(chunks);
  }
  // A client made by hand that they start (see _startOnUse) waits for
  // carry(), as connect()'s does (useBufferedNT starts it): its first flight
  // then goes out on the handle that keeps the connection.
  socket._handover = buffered !== null;
  try {
    if (buffered !== null) feed(socket._handle, buffered);
  } finally {
    socket._handover = false;
    if (socket._handle !== null) carry(socket, transport);
  }
}

// Takes the connection over, or listens to the Duplex for its ciphertext.
function carry(socket, transport) {
  if (takeOver(socket, transport)) return;
  if (onNodeHandle(transport)) {
    // Kept once: a second TLS socket over the same net.Socket must not call
    // pushCiphertext from pushCiphertext.
    if (!carriedByPush(transport)) {
      transport[kPush] = transport.push;
      watchHandleReads(transport);
    }
    transport.push = pushCiphertext;
  } else {
    transport.on('data', onTransportData);
  }
  transport.on('end', onTransportEnd);
  transport.on('drain', onTransportDrain);
  if (typeof transport.resume === 'function') transport.resume();
}

// net destroys the socket inside its handle's read callback when a read
// fails: told apart from a program's destroy(err), that error is the TLS
// socket's own, as it is for node:tls, which reads the handle itself.
function watchHandleReads(transport) {
  const handle = transport._handle;
  const onread = handle.onread;
  if (typeof onread !== 'function') return;
  handle.onread = function onHandleRead(...args) {
    // Called with no buffer for an error or the EOF (which pushCiphertext
    // clears this for: the program may destroy the socket from 'end').
    transport[kInRead] = args[0] === undefined;
    try {
      return onread.apply(this, args);
    } finally {
      transport[kInRead] = false;
    }
  };
  if (transport._destroy === net.Socket.prototype._destroy) transport._destroy = destroyCarried;
}

// The net.Socket's _destroy(): a program's destroy([err]) ends the TLS
// socket at once, as the native transport's stand-in handle does, so that
// it closes before the net.Socket, as node:tls's does.
function destroyCarried(err, cb) {
  const owner = this[kOwner];
  if (err && (this[kInRead] || err === this[kIoError])) {
    // Its handle's read or a ciphertext write failed. node:tls reads and
    // writes that handle itself, so the error is the TLS socket's alone:
    // the net.Socket goes down without it (no 'error', 'close' with
    // hadError false). One after end() (see onCiphertextFlushed) is nobody's.
    this[kIoError] = err;
    if (err !== owner._ignoredTransportError && !owner.destroyed) owner.destroy(err);
    return net.Socket.prototype._destroy.call(this, null, cb);
  }
  if (owner._transport === this && !owner.destroyed) transportDestroyed(owner, this, err);
  return net.Socket.prototype._destroy.call(this, err, cb);
}

// The program destroyed the net.Socket under `owner`: the connection ends
// now, the error it was destroyed with (if any) is the TLS socket's too, as
// every error of a caller's transport is, and its 'close' says hadError
// false, as node:tls's does. Its close does not wait for the net.Socket's.
function transportDestroyed(owner, transport, err) {
  transport[kGoneFirst] = true;
  if (err && !owner.destroyed) {
    process.nextTick(emitTransportErrorNT, owner, err);
    owner.destroy();
  } else {
    onTransportClose.call(transport);
  }
}

// close_notify is out: the FIN goes behind it, then `cb`. A net.Socket read
// through push() is shut down on its handle once what was written to it is
// in the kernel, and, as node:tls's, emits no 'finish'. False for others.
function shutdownTransport(transport, cb) {
  if (!carriedByPush(transport) || transportEnded(transport) || typeof transport._final !== 'function') {
    return false;
  }
  // From now on, as after its end(), ciphertext for it is lost.
  transport[kShutDown] = true;
  const shutdown = () => transport._final((err) => {
    // As a failed end() would: the net.Socket fails, and with it this one.
    if (err) transport.destroy(err);
    cb();
  });
  // Nothing in flight: no empty write to wait on, which a peer gone
  // meanwhile would fail (EPIPE) where the shutdown does not.
  if (transport.writableLength === 0) shutdown();
  else transport.write(kEmpty, (err) => (err || transport.destroyed ? cb() : shutdown()));
  return true;
}

// A net.Socket whose handle's reads reach the TLS socket through push().
function carriedByPush(transport) {
  return transport.push === pushCiphertext;
}

// No more ciphertext goes to the transport: ended, or shut down as above.
function transportEnded(transport) {
  return transport.writableEnded || transport[kShutDown] === true;
}

// A TCP or pipe net.Socket (not a TLS socket, whose reads are plaintext): its
// handle's reads reach it through push().
function onNodeHandle(transport) {
  return transport instanceof net.Socket && !transport.encrypted && !!transport._handle &&
    typeof transport._handle.readStart === 'function';
}

// The TLS socket wants input again. A socket read through push() restarts
// its handle from _read(), which resume() only calls if the socket was not
// flowing already (someone may have resumed it meanwhile).
function resumeTransport(transport) {
  if (typeof transport.resume !== 'function') return;
  transport.resume();
  if (transport.push === pushCiphertext) transport.read(0);
}

function emitTransportErrorNT(owner, err) {
  emitTransportError(owner, err);
}

function useBufferedNT(socket) {
  if (socket._handle === null) return;
  socket._handover = false;
  useTransport(socket, true);
  if (!socket._handover && socket._startWanted) socket._start();
}

// A TCP socket under the TLS socket, destroyed and still closing: its
// 'close' (from its handle's close callback) is when node:tls's TLS socket
// would close. That holds for one the TLS socket made for itself, one a
// server accepted and one the caller passed in alike: node:tls's socket
// closes after the net.Socket under it in each case.
function tcpTransportClosing(transport) {
  return transport !== null && transport instanceof net.Socket &&
    transport.destroyed && transport[kCloseSeen] !== true && !transportGoneFirst(transport);
}

// The program destroyed the net.Socket under the TLS socket, which then
// closes first, after that turn's immediates, as node:tls's does.
function transportGoneFirst(transport) {
  return transport !== null && transport[kGoneFirst] === true;
}

module.exports = {
  attachTransport, awaitsConnect, carriedByPush, checkTransport, kAllowHalfOpen, kIoError, kOwnTransport, kOwner,
  onTransportConnect, onNodeHandle, resumeTransport, shutdownTransport, tcpTransportClosing, transportDestroyed,
  transportEnded, transportGoneFirst, useTransport,
};
