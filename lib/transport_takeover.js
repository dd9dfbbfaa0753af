'use strict';

// The native takeover: a connected TCP net.Socket under a TLS socket hands
// its fd to the engine's own libuv handle, after any bytes node still has
// to write, and keeps a stand-in handle for the program and node's Server.
// The rest of a transport's life (its events, the generic path) is in
// lib/transport.js, which requires this file: what this file needs of it
// is looked up when used, not when loaded.

const net = require('node:net');
const { feed } = require('./transport_feed');

const UV_EBADF = -require('node:os').constants.errno.EBADF;
const kEmpty = Buffer.alloc(0);

// TLSWRAP_TRANSPORT=js keeps every connection on the generic transport.
const nativeTransportDisabled = process.env.TLSWRAP_TRANSPORT === 'js';

// As a TCP handle's getpeername/getsockname fill `out`.
function copyName(name, out) {
  if (name === null) return UV_EBADF;
  out.address = name.address;
  out.family = name.family;
  out.port = name.port;
  return 0;
}

// What a taken-over net.Socket keeps as its handle: enough for its destroy()
// (which is what lets node's Server count the connection as gone) and for
// its address getters, which keep answering as before, and for ref/unref
// and the socket options.
// A class, not an object literal of closures: every idle connection holds
// one, on each side.
class StandInHandle {
  constructor(owner) {
    this.owner = owner;
    this.fd = -1;
    this.bytesRead = 0;
    this.bytesWritten = 0;
    this.reading = false;
    this.onread = null;
  }

  // The addresses are the TLS socket's (a closed one knows those it was asked).
  getsockname(out) {
    return copyName(this.owner._nativeName(false), out);
  }

  getpeername(out) {
    return copyName(this.owner._nativeName(true), out);
  }

  // The program destroyed the net.Socket. As node's TCP handle would, the
  // connection ends now, before anything more is sent. The error it was
  // destroyed with (already set when this is called) is the TLS socket's
  // too, as every error of a caller's transport is, and its 'close' says
  // hadError false, as node:tls's does. net.Socket emits 'close' from the
  // callback and that error on the next tick: as libuv's close callback,
  // the callback comes after that tick, so 'close' is its last event.
  close(cb) {
    const { transportDestroyed } = require('./transport');
    const owner = this.owner;
    const transport = owner._transport;
    if (transport !== null) transportDestroyed(owner, transport, transport.errored);
    if (typeof cb === 'function') setImmediate(cb);
  }

  // The fd's bytes are the TLS socket's now: a write to the net.Socket
  // underneath fails (EBADF) rather than go into the middle of the TLS
  // stream, as it would with node:tls.
  writeBuffer() { return UV_EBADF; }
  writev() { return UV_EBADF; }
  writeUtf8String() { return UV_EBADF; }
  writeLatin1String() { return UV_EBADF; }
  writeAsciiString() { return UV_EBADF; }
  writeUcs2String() { return UV_EBADF; }
  shutdown() { return UV_EBADF; }

  // net.Socket's resetAndDestroy() (see resetTakenOver): the connection
  // ends with a RST, not a FIN, as node's TCP handle's reset() does.
  reset(cb) {
    const handle = this.owner._handle;
    if (handle !== null) handle.resetOnClose();
    this.close(cb);
    return 0;
  }

  readStart() { return 0; }
  readStop() { return 0; }
  getAsyncId() { return -1; }
  // The net.Socket's ref()/unref() (and those it deferred to 'connect')
  // are about the connection, which is now the owner's handle.
  ref() { this.owner.ref(); }
  unref() { this.owner.unref(); }
  // So are the socket options (net.Socket passes keep-alive's delay in s).
  setNoDelay(enable) {
    const handle = this.owner._handle;
    return handle !== null ? handle.setNoDelay(enable) : 0;
  }
  setKeepAlive(enable, delaySeconds) {
    const handle = this.owner._handle;
    return handle !== null ? handle.setKeepAlive(enable, delaySeconds) : 0;
  }
}

// The engine's handle reads the connection from the next tick on, beside
// node's, so that what the peer sends meanwhile reaches TLS as node:tls's
// does: its FIN or a reset ends the socket, bytes that are not TLS fail it
// (ERR_SSL_WRONG_VERSION_NUMBER), instead of it waiting for a drain that
// never comes. The handshake starts then too, its output held in the
// engine (node:tls queues its flight behind node's bytes). A write's
// callback runs once node has handed everything before it to the kernel:
// then node's handle goes and the engine writes. If the engine's handle
// could not be opened early, it stays unstarted until then.
function awaitNodeWrites(socket, raw) {
  socket._handover = true;
  raw.pause();
  // What the peer sends from now on is the TLS socket's: it does not reach
  // the raw socket's buffer (and its 'data' listeners) as plaintext. A
  // paused socket would read on up to its high-water mark; its _read
  // restarts node's handle.
  raw._handle.readStop();
  raw._read = noRead;
  let early = false;
  process.nextTick(() => {
    if (socket._handle === null || !socket._handover || !canTakeOver(raw)) return;
    early = readEarly(socket, raw);
    if (!early) return;
    socket._handover = false;
    if (socket._startWanted) socket._start();
  });
  raw.write(kEmpty, (err) => {
    delete raw._read;
    // A failed write destroys the socket, and with it this TLSSocket.
    if (err || socket._handle === null) return;
    // The program ended the net.Socket meanwhile: its FIN goes out behind
    // node's bytes from node's handle, whose close would cancel it (the
    // engine's handle keeps the connection open).
    if (early && raw.writableEnded && !raw.writableFinished) {
      raw.once('finish', () => afterNodeWrites(socket, raw, early));
      return;
    }
    afterNodeWrites(socket, raw, early);
  });
}

function afterNodeWrites(socket, raw, early) {
  if (socket._handle === null || raw.destroyed) return;
  socket._handover = false;
  if (early) {
    finishTakeOver(socket, raw, raw._handle);
    socket._handle.releaseTransport();
  } else {
    require('./transport').useTransport(socket);
  }
  if (!socket._handover && socket._startWanted) socket._start();
}

// The bytes node read before the upgrade first (their 'data' now, as
// useTransport's on the next tick), then the engine's handle on the fd,
// beside node's, which keeps writing: the engine's own writes wait for
// releaseTransport(). False if it could not be opened: the takeover is
// tried again once node's writes are out.
function readEarly(socket, raw) {
  if (raw.readableLength > 0 && typeof raw.read === 'function') {
    const chunks = [];
    let chunk;
    while ((chunk = raw.read()) !== null) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    feed(socket._handle, Buffer.concat(chunks));
    if (socket._handle === null) return false;
  }
  const handle = raw._handle;
  if (socket._handle.useNativeTransport(handle.fd, true) !== 0) return false;
  const unref = socket._unrefed !== null ? socket._unrefed :
    typeof handle.hasRef === 'function' && !handle.hasRef();
  if (unref) socket._handle.unref();
  return true;
}
function noRead() {}

function canTakeOver(raw) {
  const handle = raw._handle;
  // An ended socket stays with node, whose shutdown comes after its writes.
  // A TLS socket (ours or node:tls's) has an fd, but its bytes are not the
  // connection's: TLS in TLS goes through the Duplex.
  return !nativeTransportDisabled && raw instanceof net.Socket && !!handle && !raw.writableEnded && !raw.encrypted &&
    typeof handle.fd === 'number' && handle.fd >= 0 && typeof handle.readStop === 'function';
}

// A net.Socket on a TCP fd: the engine opens its own libuv handle on a
// duplicate of the fd and node's handle is closed (the connection stays
// open on the duplicate). The net.Socket stays as the connection node's
// Server counts, with a stand-in handle, until this socket closes.
function takeOver(socket, raw) {
  if (!canTakeOver(raw)) return false;
  const handle = raw._handle;
  handle.readStop();
  if (socket._handle.useNativeTransport(handle.fd) !== 0) {
    handle.readStart();
    return false;
  }
  finishTakeOver(socket, raw, handle);
  return true;
}

// The engine's handle has the connection: node's goes.
function finishTakeOver(socket, raw, handle) {
  const { kAllowHalfOpen, kOwnTransport } = require('./transport');
  socket._native = true;
  // The new handle starts ref'd: it takes the state asked of this socket
  // (an unref() while connecting went to node's handle), else node's.
  const unref = socket._unrefed !== null ? socket._unrefed :
    typeof handle.hasRef === 'function' && !handle.hasRef();
  if (unref) socket._handle.unref();
  else socket._handle.ref();
  if (!raw[kOwnTransport] && raw[kAllowHalfOpen] !== undefined) raw.allowHalfOpen = raw[kAllowHalfOpen];
  raw._handle = new StandInHandle(socket);
  // net.Socket's own refuses a handle that is not node's TCP.
  if (raw.resetAndDestroy === net.Socket.prototype.resetAndDestroy) raw.resetAndDestroy = resetTakenOver;
  handle.close();
}

// resetAndDestroy() of a net.Socket taken over: node's checks that its
// handle is a TCP one (the stand-in is not, and must not pass for one:
// node would reach for native methods it lacks), then destroys it through
// the handle's reset(). Once the TLS socket has closed, node's own answers.
function resetTakenOver() {
  if (!(this._handle instanceof StandInHandle)) return net.Socket.prototype.resetAndDestroy.call(this);
  this._reset();
  return this;
}

module.exports = { awaitNodeWrites, canTakeOver, takeOver };
