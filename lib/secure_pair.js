'use strict';

// tls.createSecurePair() (DEP0064), on the Nodes whose node:tls still has it
// (20, 22): a TLSSocket over one end of an in-memory stream pair, whose
// other end is handed out as `encrypted`. What a program writes to
// `encrypted` is ciphertext from the peer; what it reads from it is
// ciphertext for the peer. `cleartext` is the TLSSocket itself, so the pair
// runs on the engine's JS-stream transport like any TLSSocket over a Duplex.

const { EventEmitter } = require('node:events');
const { Duplex } = require('node:stream');
const { deprecate } = require('node:util');
const { createSecureContext } = require('./context');
const { TLSSocket } = require('./socket');

const kPeer = Symbol('tlswrap.pairPeer');
const kResume = Symbol('tlswrap.pairResume'); // the peer's held write callback

// One end of the pair. A write is pushed into the other end's readable
// side; its callback is held until that side is read from, so a writer
// sees backpressure when the reader does not keep up.
class PairEnd extends Duplex {
  constructor() {
    super();
    this[kPeer] = null;
    this[kResume] = null;
  }

  _read() {
    const resume = this[kResume];
    if (resume) {
      this[kResume] = null;
      resume();
    }
  }

  _write(chunk, encoding, callback) {
    if (chunk.length === 0) {
      process.nextTick(callback);
      return;
    }
    const peer = this[kPeer];
    peer[kResume] = callback;
    peer.push(chunk);
  }

  _final(callback) {
    // Finished once the other end has read everything, EOF included.
    this[kPeer].once('end', () => callback());
    this[kPeer].push(null);
  }
}

function makeEnds() {
  const a = new PairEnd();
  const b = new PairEnd();
  a[kPeer] = b;
  b[kPeer] = a;
  return [a, b];
}

class SecurePair extends EventEmitter {
  constructor(secureContext = createSecureContext(), isServer = false, requestCert = !isServer,
    rejectUnauthorized = false, options = {}) {
    super();
    const [encrypted, inner] = makeEnds();
    this.server = options.server;
    this.credentials = secureContext;
    this.encrypted = encrypted;
    this.cleartext = new TLSSocket(inner, {
      secureContext, isServer, requestCert, rejectUnauthorized, ...options,
    });
    this.cleartext.once('secure', () => this.emit('secure'));
  }

  destroy() {
    this.cleartext.destroy();
    this.encrypted.destroy();
  }
}

// node:tls warns once per process, with this text and code.
const createSecurePair = deprecate(function createSecurePair(...args) {
  return new SecurePair(...args);
}, 'tls.createSecurePair() is deprecated. Please use tls.TLSSocket instead.', 'DEP0064');

module.exports = { createSecurePair, SecurePair };
