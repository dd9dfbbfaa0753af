'use strict';

// A TLSSocket's handshake events from the engine: start (renegotiation
// limits), done, sessions (held back on a client until verification lets the
// connection through), and the server's callbacks that hold the handshake
// until they answer: SNICallback and 'OCSPRequest' at the certificate
// callback, 'newSession' and 'resumeSession' for an application's session
// store.

const defaults = require('./defaults');
const { sniContext } = require('./context');
const { codedError } = require('./errors');
const { addSurface } = require('./net_surface');
const { requestOCSP } = require('./ocsp');
const { bufferOf } = require('./bytes');

// The callback a handshake waits on, as node:tls takes its answers: a
// second one is the application's bug and fails the connection rather than
// go unnoticed, even once it is established; one that comes after the
// connection closed is dropped; an error fails the connection.
function answerOnce(socket, handle, onAnswer) {
  let called = false;
  return (err, value) => {
    if (called) {
      socket.destroy(codedError(Error, 'ERR_MULTIPLE_CALLBACK', 'Callback called multiple times'));
      return;
    }
    called = true;
    if (socket._handle !== handle) return;
    if (err) {
      socket.destroy(err);
      return;
    }
    onAnswer(value);
  };
}

class HandshakeEvents {
  _onHandshakeStart() {
    if (!this._secureEstablished) return;
    if (!this._tlsOptions.isServer) {
      // The renegotiated handshake is verified again (connect()'s 'secure'
      // listener), and its session waits for that too. disableRenegotiation()
      // does not refuse it: node:tls checks it on a server socket only, and a
      // client that calls it still follows a server that renegotiates (to ask
      // for a client certificate, say).
      this._sessionReleased = false;
      return;
    }
    if (this._disableRenegotiation) {
      this._emitTLSError(codedError(Error, 'ERR_TLS_RENEGOTIATION_DISABLED',
                                    'TLS session renegotiation disabled for this socket'));
      return;
    }
    // Client-initiated renegotiation costs the server a handshake each time:
    // node:tls allows CLIENT_RENEG_LIMIT of them per CLIENT_RENEG_WINDOW.
    const now = Date.now();
    if (now - this._renegotiationWindowStart >= defaults.CLIENT_RENEG_WINDOW * 1000) {
      this._renegotiationWindowStart = now;
      this._renegotiations = 0;
    }
    if (++this._renegotiations > defaults.CLIENT_RENEG_LIMIT) {
      this._emitTLSError(codedError(Error, 'ERR_TLS_SESSION_ATTACK', 'TLS session renegotiation attack detected'));
    }
  }

  _onHandshakeDone() {
    const handle = this._handle;
    if (handle === null) return;
    // As node:tls: a server's 'secure' (so 'secureConnection') waits for the
    // 'newSession' callbacks of its handshake, as its Finished does.
    if (this._newSessionsPending > 0) {
      this._securePending = true;
      return;
    }
    this.alpnProtocol = handle.getALPNProtocol();
    if (this.servername === null || this._tlsOptions.isServer) this.servername = handle.getServername();
    this._secureEstablished = true;
    this.secureConnecting = false;
    if (this._handshakeTimer !== null) {
      clearTimeout(this._handshakeTimer);
      this._handshakeTimer = null;
      if (this._timeoutMs === 0) this.timeout = 0;
    }
    if (this._pauseAfterHandshake) {
      this._pauseAfterHandshake = false;
      this._pauseEngine();
    }
    this.emit('secure');
  }

  // On TLS 1.2 OpenSSL hands the client its session before the handshake is
  // done, so before verification: only the latest one is kept until then, as
  // node:tls does.
  _onSession(session) {
    if (this._sessionReleased) this.emit('session', session);
    else this._pendingSession = session;
  }

  // connect() calls this once verification has let the connection through
  // (passed, or rejectUnauthorized:false): the session held back goes out.
  // A socket that nothing verifies (a client TLSSocket made without
  // connect()) never emits 'session', as with node:tls.
  _releaseSession() {
    this._sessionReleased = true;
    const session = this._pendingSession;
    this._pendingSession = null;
    if (session !== null) this.emit('session', session);
  }

  // The certificate callback's pause: the SNICallback first, then
  // 'OCSPRequest', then the handshake goes on (as in node:tls).
  _onCertCb(servername, ocspRequested) {
    const handle = this._handle;
    if (servername) this.servername = servername;
    const sniCallback = this._tlsOptions.SNICallback;
    if (!servername || typeof sniCallback !== 'function') {
      requestOCSP(this, handle, undefined, ocspRequested);
      return;
    }
    const done = answerOnce(this, handle, (context) => {
      let native;
      try {
        native = sniContext(context);
      } catch (e) {
        this.destroy(e);
        return;
      }
      requestOCSP(this, handle, native, ocspRequested);
    });
    // A throwing SNICallback fails this connection only, as in node:tls.
    try {
      sniCallback.call(this, servername, done);
    } catch (err) {
      this.destroy(err);
    }
  }

  // Server session cache kept by the application. As with node:tls, what the
  // server sends from here on (its Finished, or a TLS 1.3 ticket) waits
  // until the callback says the session is stored.
  _onNewSession(payload) {
    const idLength = payload[0];
    const id = payload.subarray(1, 1 + idLength);
    const data = payload.subarray(1 + idLength);
    const handle = this._handle;
    let called = false;
    const done = () => {
      if (called || this._handle !== handle) return;
      called = true;
      this._newSessionsPending--;
      handle.newSessionDone();
      if (this._newSessionsPending === 0 && this._securePending && this._handle === handle) {
        this._securePending = false;
        this._onHandshakeDone();
      }
    };
    this._newSessionsPending++;
    // No listener left (a once() listener and TLS 1.3's second ticket, or
    // one removed after the connection came): nobody will call back.
    if (!this.server || !this.server.emit('newSession', id, data, done)) done();
  }

  _onResumeSession(id) {
    const handle = this._handle;
    const onSession = answerOnce(this, handle, (data) => {
      // Any ArrayBufferView is a session, as node:tls reads it; anything
      // else means "not found" (a full handshake), never a throw into the
      // application's store code.
      const der = ArrayBuffer.isView(data) ? bufferOf(data) : null;
      handle.loadSession(der);
    });
    // Without a listener (removed after the connection came) nobody answers.
    if (!this.server.emit('resumeSession', id, onSession)) onSession(null, null);
  }
}

function addHandshakeEvents(Socket) {
  addSurface(Socket, HandshakeEvents);
}

module.exports = { addHandshakeEvents };
