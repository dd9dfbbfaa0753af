'use strict';

// How a TLSSocket's errors reach the user, as node:tls's do: from the
// engine (a TLS error, or a write that was pending when the handshake
// failed), from the native transport (net's "read ECONNRESET"), and, for a
// socket made by hand, through '_tlsError' rather than an uncaught 'error'.

const { getSystemErrorMap, getSystemErrorName } = require('node:util');
const { addSurface } = require('./net_surface');
const { answersOf } = require('./handle_answers');

// What node:tls (Node >= 22) gives a write that destroy() cut off, its
// libuv write request's error.
function writeCanceledError() {
  return systemError('write', 'ECANCELED');
}

// net's errnoException: "<syscall> <CODE>[ <detail>]", with errno, code and
// syscall.
function systemError(syscall, code, detail) {
  let errno;
  for (const [n, [name]] of getSystemErrorMap()) {
    if (name === code) errno = n;
  }
  const err = new Error(detail === undefined ? `${syscall} ${code}` : `${syscall} ${code} ${detail}`);
  err.errno = errno;
  err.code = code;
  err.syscall = syscall;
  return err;
}

// A write the transport (a Duplex) failed, as the user's write sees it: as
// node:tls's JS stream wrapper reports it, by the error's code when that is
// a system error's name, else EPIPE.
function transportWriteError(err) {
  const code = err && typeof err.code === 'string' && systemErrorNames().has(err.code) ? err.code : 'EPIPE';
  return systemError('write', code);
}
let names = null;
function systemErrorNames() {
  if (names === null) names = new Set(Array.from(getSystemErrorMap().values(), ([name]) => name));
  return names;
}

class SocketErrors {
  // As net.Socket reports a failed read or write ("read ECONNRESET").
  _onNativeTransportError({ errno, syscall }) {
    const err = systemError(syscall, getSystemErrorName(errno));
    // The kernel refused ciphertext while a write of the user's waited on
    // it: as net.Socket's write request, the write fails with that error
    // (and the socket with it), not with destroy()'s ECANCELED.
    if (syscall === 'write' && this._secureEstablished && this._writeCallback !== null) {
      if (this._inWrite) {
        // Refused inside write() itself (the peer reset just now): as with
        // node:tls, the write fails later, not in the call, so earlier
        // writes' callbacks, then this one's and those of the writes
        // queued behind it (with this error), come before the socket's
        // 'error'. Destroyed now, those would get ERR_STREAM_DESTROYED
        // after it.
        process.nextTick(failWriteNT, this, err);
        return;
      }
      this._takeWriteCallback()(err);
    }
    this.destroy(err);
  }

  _onEngineError(err) {
    // A server that rejects clients without a certificate just closes, as
    // node:tls does; the client has already been told by the alert.
    if (this._secureEstablished && this._tlsOptions.isServer && this._rejectUnauthorized &&
        /peer did not return a certificate/.test(err.message)) {
      if (this._hadError) return;
      this._hadError = true;
      this.destroy();
      return;
    }
    // A write made before the handshake failed waits in node:tls as
    // cleartext; its SSL_write meets the failure first, so the write and the
    // socket fail with 'write EPROTO <OpenSSL's line>' instead. When the
    // start itself fails (no protocol the options allow), node:tls's socket
    // has already failed with the TLS error when a write made while
    // connecting reaches its SSL_write: only the write gets 'write EPROTO',
    // without OpenSSL's line (the start took it).
    if (!this._secureEstablished && this._writeCallback !== null && !this._hadError) {
      const cb = this._takeWriteCallback();
      if (this._starting) {
        this._keepAnswers();
        this._emitTLSError(err);
        cb(systemError('write', 'EPROTO'));
        return;
      }
      const failed = systemError('write', 'EPROTO', err.message);
      this._hadError = true;
      cb(failed);
      this.destroy(failed);
      return;
    }
    this._keepAnswers();
    this._emitTLSError(err);
  }

  // As node:tls's handle, the failed handshake's answers stay readable in
  // its 'error' and 'tlsClientError' (and until 'close').
  _keepAnswers() {
    if (!this._secureEstablished && this._handle !== null && !this._hadError) {
      this._answersAfterError = answersOf(this._handle);
    }
  }

  _tlsError(err) {
    this.emit('_tlsError', err);
  }

  // connect() at once, a server at 'secure': errors are the user's from now
  // on, as with node:tls (unhandled, they throw).
  _releaseErrors() {
    this._errorsReleased = true;
    this.removeListener('error', this._tlsError);
  }

  _emitTLSError(err) {
    if (this._hadError) return;
    this._hadError = true;
    this.destroy(err);
  }
}

function failWriteNT(socket, err) {
  // destroy() meanwhile has called the write back (ECANCELED).
  const cb = socket._takeWriteCallback();
  if (cb !== null) cb(err);
  socket.destroy(err);
}

function addSocketErrors(Socket) {
  addSurface(Socket, SocketErrors);
}

module.exports = { addSocketErrors, systemError, transportWriteError, writeCanceledError };
