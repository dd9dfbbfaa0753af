'use strict';

// The writing half of a TLSSocket: the stream.Duplex write and final hooks
// that hand plaintext to the engine, and, on a Duplex transport, the
// ciphertext the engine gives back and the transport's answer to it.

const { codedError } = require('./errors');
const { addSurface } = require('./net_surface');
const { systemError, transportWriteError } = require('./socket_errors');
const {
  awaitsConnect, carriedByPush, kIoError, kOwner, onNodeHandle, shutdownTransport, transportEnded,
} = require('./transport');

// Chunks of one write passed to the handle as arguments, at most; more go as
// their Array (a call's arguments live on the stack).
const kMaxSpreadChunks = 64;

// A ciphertext write the Duplex completed (`this` = the transport): the
// engine completes plaintext writes only once their ciphertext is this far.
function onCiphertextFlushed(err) {
  const owner = this[kOwner];
  if (!owner) return;
  // net.Socket destroys itself with it next: not the program's destroy(err)
  // of a socket whose handle node:tls would write itself (lib/transport.js).
  if (err && carriedByPush(this)) this[kIoError] = err;
  // Callbacks come in the order of the writes. One counted when it was
  // made (see _writeCiphertext) has nothing more to say.
  if (++owner._ciphertextCallbacks <= owner._ciphertextCounted) return;
  owner._ciphertextCounted = owner._ciphertextCallbacks;
  if (owner._handle === null) return;
  // Failed once end() reached the engine, with every write of the user's
  // done: it held only our close_notify (or a reply), so, as node:tls
  // ignores write errors after shutdown, the transport's 'error' for it is
  // not the socket's (lib/transport.js).
  if (err && owner._shutdownRequested && owner._writeCallback === null) owner._ignoredTransportError = err;
  else if (err && owner._writeCallback !== null) {
    // The write of the user's waiting on this ciphertext cannot complete.
    // As node:tls: the socket fails with the Duplex's own error, the write
    // with a system error ("write EPIPE").
    const cb = owner._takeWriteCallback();
    owner.destroy(err);
    cb(transportWriteError(err));
    return;
  }
  owner._handle.ciphertextFlushed();
}

class SocketWrites {
  // close_notify (if any) is with the transport: end it, and finish only once
  // it has finished, so everything written reached the kernel before this
  // socket can be destroyed (autoDestroy would discard what the transport
  // still buffers).
  _onShutdown() {
    const transport = this._transport;
    const cb = this._finalCallback;
    this._finalCallback = null;
    if (!cb) return;
    if (this._native || !transport || transport.destroyed || typeof transport.end !== 'function' ||
        transport.writableFinished) {
      process.nextTick(cb);
      return;
    }
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      this._transportFinish = null;
      transport.removeListener('finish', finish);
      transport.removeListener('close', finish);
      cb();
    };
    this._transportFinish = finish;
    transport.once('close', finish);
    if (shutdownTransport(transport, finish)) return;
    transport.once('finish', finish);
    if (!transport.writableEnded) transport.end();
  }

  // The write in flight's callback (null if none), which whoever takes it
  // calls: the write is no longer in flight.
  _takeWriteCallback() {
    const cb = this._writeCallback;
    this._writeCallback = null;
    this._writeQueueSize = 0;
    return cb;
  }

  _onWriteDone(id) {
    if (id !== this._writeId) return;
    const cb = this._takeWriteCallback();
    // A write that completes later is activity, as for net.Socket.
    this._refreshTimeout();
    if (cb) cb();
  }

  _writeCiphertext(chunk) {
    const transport = this._transport;
    if (!transport || transport.destroyed || transportEnded(transport)) {
      // Out of the engine's call first: it counts this write as in flight.
      process.nextTick(ciphertextLostNT, this);
      return true;
    }
    if (this._flushedCallback === null) this._flushedCallback = onCiphertextFlushed.bind(transport);
    const written = ++this._ciphertextWrites;
    const more = transport.write(chunk, this._flushedCallback);
    // A TCP socket left with nothing to write wrote it all to the kernel at
    // once (net.Socket calls back later, on the next tick). As node:tls's
    // write over such a socket, this one has completed: a destroy() now
    // does not cancel it, and the socket does not fail for it.
    if (transport.writableLength === 0 && !transport.errored && !transport.destroyed && onNodeHandle(transport)) {
      const handle = this._handle;
      while (this._ciphertextCounted < written && handle !== null) {
        this._ciphertextCounted++;
        handle.ciphertextFlushed();
      }
    }
    return more;
  }

  // ---- stream.Duplex ----

  _writev(chunks, cb) {
    const buffers = new Array(chunks.length);
    let bytes = 0;
    for (let i = 0; i < chunks.length; i++) {
      const { chunk, encoding } = chunks[i];
      buffers[i] = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
      bytes += buffers[i].length;
    }
    this._dispatch(buffers, bytes, cb);
  }

  _write(chunk, encoding, cb) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    this._dispatch(buffer, buffer.length, cb);
  }

  // `buffers`: an Array of Buffers, or one Buffer.
  _dispatch(buffers, bytes, cb) {
    const handle = this._handle;
    if (handle === null) {
      cb(codedError(Error, 'ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed'));
      return;
    }
    // A client made by hand on a connected socket starts its handshake with
    // its first write, as node:tls's does (SSL_write begins it there).
    if (!this._started) this._startOnUse();
    this._refreshTimeout();
    this._bytesWritten += bytes;
    this._writeCallback = cb;
    this._writeQueueSize = bytes;
    // True: the write is already complete (no writeDone event follows). A
    // few chunks go as arguments, which the addon reads cheaper than an
    // Array's elements; many (a corked stream) as the Array.
    const id = ++this._writeId;
    let done;
    this._inWrite = true;
    try {
      if (!Array.isArray(buffers) || buffers.length > kMaxSpreadChunks) done = handle.writev(id, buffers);
      else done = handle.writev(id, ...buffers);
    } finally {
      this._inWrite = false;
    }
    if (done && this._writeCallback === cb) this._takeWriteCallback()();
  }

  _final(cb) {
    if (this._handle === null) {
      cb();
      return;
    }
    // As net.Socket's: an end() while connecting waits for the connection,
    // by which time the handshake has started.
    const transport = this._transport;
    if (transport !== null && !this._started && awaitsConnect(transport)) {
      transport.once('connect', () => this._final(cb));
      return;
    }
    // node:tls's SSL_read of the peer's EOF began a client's handshake; its
    // shutdown flushes that ClientHello, ahead of the FIN.
    if (this._startAtEnd) this._startOnUse();
    this._shutdownRequested = true;
    if (!this._started && !this._startWanted) {
      // Nothing was ever said on the wire: just end the transport.
      this._finalCallback = cb;
      this._onShutdown();
      return;
    }
    this._finalCallback = cb;
    this._handle.shutdown();
  }
}

// Ciphertext the transport can no longer take (ended, or destroyed without
// a 'close'). A write of the user's waiting on it fails with EPIPE, and the
// socket with it, as node:tls's do; without one (a close_notify after the
// transport ended) it counts as written, so the engine does not wait on it.
function ciphertextLostNT(socket) {
  const handle = socket._handle;
  if (handle === null) return;
  const cb = socket._writeCallback;
  if (cb === null) {
    handle.ciphertextFlushed();
    return;
  }
  const err = systemError('write', 'EPIPE');
  socket._takeWriteCallback()(err);
  socket.destroy(err);
}

function addSocketWrites(Socket) {
  addSurface(Socket, SocketWrites);
}

module.exports = { addSocketWrites };
