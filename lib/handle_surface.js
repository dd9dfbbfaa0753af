'use strict';

// The native handle (binding.TLSWrap) as node's own modules read a socket's
// _handle: node:http's agent, net's timeout check, node:tls's stream wrapping.
// Installed once on the prototype, when lib/socket.js loads.

const { executionAsyncId } = require('node:async_hooks');
const binding = require('./binding');
const { codedError } = require('./errors');
const { kOwner } = require('./transport');

// node:http's keep-alive agent asks a socket's handle for its async id (the
// trigger of its 'free' tick). The context's id is fixed for the handle's
// life, so it is read once, by running executionAsyncId under it.
const kAsyncId = Symbol('tlswrap.asyncId');
binding.TLSWrap.prototype.getAsyncId = function getAsyncId() {
  if (this[kAsyncId] === undefined) {
    const id = this.runInAsyncContext(executionAsyncId);
    if (id === undefined) return -1;
    this[kAsyncId] = id;
  }
  return this[kAsyncId];
};

// node:http's agent gives a reused keep-alive socket a new async id (in the
// new request's context) through these, when the handle has them.
binding.TLSWrap.prototype.asyncReset = function asyncReset(resource) {
  this.resetAsyncContext(resource);
  this[kAsyncId] = undefined;
};
// Node's provider numbers are internal and vary by version; the agent only
// stores this on the resource it passes to asyncReset().
binding.TLSWrap.prototype.getProviderType = function getProviderType() {
  return 0;
};

// More of the handle surface node's own modules read (net's timeout check
// compares writeQueueSize between ticks; http asks isStreamBase): the bytes
// of the write in flight, not yet in the kernel (plaintext: the engine
// encrypts as the transport drains), and the socket's fd on the native
// transport (-1 over a JS Duplex).
Object.defineProperties(binding.TLSWrap.prototype, {
  writeQueueSize: {
    get() {
      const owner = this[kOwner];
      return owner ? owner._writeQueueSize : 0;
    },
  },
  fd: {
    get() { return this.getFd(); },
  },
  // node:tls takes a net.Socket's handle as its C++ stream, asserting
  // isStreamBase first (an internal assertion, or worse were it true): when
  // it is node:tls's _wrapHandle that asks, say why with a code instead.
  isStreamBase: {
    get() {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 2;
      const { stack } = new Error();
      Error.stackTraceLimit = limit;
      if (/[ .]_wrapHandle \(node:/.test(stack)) {
        throw codedError(Error, 'ERR_TLSWRAP_NOT_SUPPORTED',
                         'node:tls cannot run over a tlswrap socket (it needs a net.Socket with a native ' +
                         "stream handle): use tlswrap's connect({ socket }) or new TLSSocket(socket) for TLS in TLS");
      }
      return false;
    },
  },
});
