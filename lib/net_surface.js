'use strict';

// The net.Socket surface of a TLSSocket: addresses, socket options, ref/unref
// and the idle timeout. On the native transport they are answered by the
// engine's TCP handle (and the addresses read before node's handle closed);
// on the generic one they are passed to the underlying Duplex where it has
// them.

const { invalidArgType } = require('./errors');

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
    return !this._transport || !!this._transport.pending;
  }

  get readyState() {
    if (this.connecting) return 'opening';
    if (this.readable && this.writable) return 'open';
    if (this.readable && !this.writable) return 'readOnly';
    if (!this.readable && this.writable) return 'writeOnly';
    return 'closed';
  }

  get remoteAddress() {
    if (this._addresses) return this._addresses.remoteAddress;
    return this._transport ? this._transport.remoteAddress : undefined;
  }

  get remotePort() {
    if (this._addresses) return this._addresses.remotePort;
    return this._transport ? this._transport.remotePort : undefined;
  }

  get remoteFamily() {
    if (this._addresses) return this._addresses.remoteFamily;
    return this._transport ? this._transport.remoteFamily : undefined;
  }

  get localAddress() {
    if (this._addresses) return this._addresses.localAddress;
    return this._transport ? this._transport.localAddress : undefined;
  }

  get localPort() {
    if (this._addresses) return this._addresses.localPort;
    return this._transport ? this._transport.localPort : undefined;
  }

  get localFamily() {
    if (this._addresses) return this._addresses.localFamily;
    return this._transport ? this._transport.localFamily : undefined;
  }

  // As net.Socket's: undefined once the socket has no handle.
  get bufferSize() {
    return this._handle ? this.writableLength : undefined;
  }

  address() {
    if (this._addresses) {
      const { localAddress: address, localFamily: family, localPort: port } = this._addresses;
      return { address, family, port };
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
    if (typeof msecs !== 'number' || !(msecs >= 0)) throw invalidArgType('msecs', 'number', msecs);
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    this._timeoutMs = msecs;
    if (msecs === 0) {
      if (callback) this.removeListener('timeout', callback);
    } else {
      if (callback) this.once('timeout', callback);
      // Activity re-arms it (refresh); like net.Socket's, it never holds the loop open.
      this._timer = setTimeout(() => this.emit('timeout'), msecs);
      this._timer.unref();
    }
    return this;
  }

  get timeout() {
    return this._timeoutMs || undefined;
  }

  _refreshTimeout() {
    if (this._timer !== null) this._timer.refresh();
    // As node:tls: activity refreshes the timeout of the socket underneath
    // too, which sees none of it once the engine has taken the fd over.
    if (this._native && this._transport.timeout) this._transport._unrefTimer();
  }
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
