'use strict';

// The net.Socket surface of a TLSSocket: addresses, socket options, ref/unref
// and the idle timeout. On the native transport they are answered by the
// engine's TCP handle; on the generic one they are passed to the underlying
// Duplex where it has them.

const { invalidArgType, timerDuration } = require('./errors');

class NetSurface {

  get bytesRead() {
    return this._bytesRead;
  }

  get bytesWritten() {
    return this._bytesWritten;
  }

  get connecting() {
    // node:tls counts a TLS socket made without a socket as connecting until
    // it is given one (connect()) or destroyed.
    if (!this._transport) return this._madeBare && !this.destroyed;
    return !!this._transport.connecting;
  }

  // net.Socket's constructor assigns it; here it is the transport's state.
  set connecting(value) {}

  get pending() {
    if (!this._transport) return true;
    // Still open for its unread data and 'end' after the TCP socket under it
    // closed cleanly: as node:tls's, whose own handle is still there, the
    // TLS socket is not pending.
    if (this._openAfterTransport && this._handle !== null) return false;
    return !!this._transport.pending;
  }

  get readyState() {
    if (this.connecting) return 'opening';
    if (this.readable && this.writable) return 'open';
    if (this.readable && !this.writable) return 'readOnly';
    if (!this.readable && this.writable) return 'writeOnly';
    return 'closed';
  }

  get remoteAddress() {
    return this._transportName(true, 'address');
  }

  get remotePort() {
    return this._transportName(true, 'port');
  }

  get remoteFamily() {
    return this._transportName(true, 'family');
  }

  get localAddress() {
    return this._transportName(false, 'address');
  }

  get localPort() {
    return this._transportName(false, 'port');
  }

  get localFamily() {
    return this._transportName(false, 'family');
  }

  // On the engine's TCP handle the kernel is asked once, when someone first
  // wants an address (most connections never do), and the answer is kept,
  // as net.Socket keeps its own: once the socket has closed, an address
  // never asked for is undefined, as with node:tls.
  _nativeName(peer) {
    const cached = peer ? this._peername : this._sockname;
    if (cached !== null || this._handle === null) return cached;
    const out = {};
    if (this._handle.getAddress(peer, out) !== 0) return null;
    if (peer) this._peername = out;
    else this._sockname = out;
    return out;
  }

  _transportName(peer, field) {
    if (this._native) {
      const name = this._nativeName(peer);
      return name === null ? undefined : name[field];
    }
    if (!this._transport) return undefined;
    if (field === 'address') return peer ? this._transport.remoteAddress : this._transport.localAddress;
    if (field === 'port') return peer ? this._transport.remotePort : this._transport.localPort;
    return peer ? this._transport.remoteFamily : this._transport.localFamily;
  }

  // As net.Socket's: undefined once the socket has no handle.
  get bufferSize() {
    return this._handle ? this.writableLength : undefined;
  }

  address() {
    if (this._native) {
      const name = this._nativeName(false);
      return name === null ? {} : { address: name.address, family: name.family, port: name.port };
    }
    return this._transport && typeof this._transport.address === 'function' ? this._transport.address() : {};
  }

  setNoDelay(noDelay) {
    if (this._native) {
      if (this._handle !== null) this._handle.setNoDelay(noDelay === undefined ? true : !!noDelay);
    } else if (this._transport && typeof this._transport.setNoDelay === 'function') {
      this._transport.setNoDelay(noDelay);
    }
    return this;
  }

  setKeepAlive(enable, initialDelay) {
    if (this._native) {
      if (this._handle !== null) this._handle.setKeepAlive(!!enable, Math.floor((initialDelay || 0) / 1000));
    } else if (this._transport && typeof this._transport.setKeepAlive === 'function') {
      this._transport.setKeepAlive(enable, initialDelay);
    }
    return this;
  }

  // Remembered, for a takeover that comes later (an unref() while connecting
  // would otherwise stay with node's handle, which the takeover closes).
  ref() {
    this._unrefed = false;
    if (this._native) {
      if (this._handle !== null) this._handle.ref();
    } else if (this._transport && typeof this._transport.ref === 'function') {
      this._transport.ref();
    }
    return this;
  }

  unref() {
    this._unrefed = true;
    if (this._native) {
      if (this._handle !== null) this._handle.unref();
    } else if (this._transport && typeof this._transport.unref === 'function') {
      this._transport.unref();
    }
    return this;
  }

  setTimeout(msecs, callback) {
    // As net.Socket's: a destroyed socket takes no timeout, nor checks one.
    if (this.destroyed) return this;
    // As net.Socket's: a plain property, set to what was asked even when
    // that is then refused.
    this.timeout = msecs;
    msecs = timerDuration(msecs, 'msecs');
    if (callback !== undefined && typeof callback !== 'function') throw invalidArgType('callback', 'Function', callback);
    this._timeoutMs = msecs;
    if (msecs === 0) {
      // The timer stays scheduled, disarmed (it fires into nothing): node's
      // HTTP server turns a keep-alive socket's timeout off and on again
      // around every request, and re-arming one timer costs less than a
      // new one each time.
      if (callback) this.removeListener('timeout', callback);
      return this;
    }
    if (callback) this.once('timeout', callback);
    if (this._timer !== null && this._timerMs === msecs) {
      this._timer.refresh();
    } else {
      if (this._timer !== null) clearTimeout(this._timer);
      // Activity re-arms it (refresh); like net.Socket's, it never holds the loop open.
      this._timer = setTimeout(onSocketTimeout, msecs, this);
      this._timer.unref();
      this._timerMs = msecs;
    }
    return this;
  }

  _refreshTimeout() {
    if (this._timeoutMs !== 0 && this._timer !== null) this._timer.refresh();
    // As node:tls: activity refreshes the timeout of the socket underneath
    // too, which sees none of it once the engine has taken the fd over.
    if (this._native && this._transport.timeout) this._transport._unrefTimer();
  }
}

function onSocketTimeout(socket) {
  if (socket._timeoutMs === 0) return;
  // As net.Socket's: a write whose bytes are still going out (to a slow
  // reader) is activity; the timeout waits for it to stall.
  const handle = socket._handle;
  if (socket._writeCallback !== null && handle !== null && handle.writeProgressed()) {
    socket._timer.refresh();
    return;
  }
  socket.emit('timeout');
}

// Copies a surface's accessors and methods onto `Socket.prototype`, as
// they are (non-enumerable, as class members are).
function addSurface(Socket, Surface) {
  for (const name of Object.getOwnPropertyNames(Surface.prototype)) {
    if (name === 'constructor') continue;
    Object.defineProperty(Socket.prototype, name, Object.getOwnPropertyDescriptor(Surface.prototype, name));
  }
}

function addNetSurface(Socket) {
  addSurface(Socket, NetSurface);
}

module.exports = { addNetSurface, addSurface };
