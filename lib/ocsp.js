'use strict';

// OCSP stapling and protocol tracing, as node:tls has them: the server's
// 'OCSPRequest' runs inside the certificate callback's pause, after the
// SNICallback; a client's requestOCSP gets 'OCSPResponse' before
// 'secureConnect'; enableTrace prints OpenSSL's SSL_trace to stderr.

const { codedError, invalidArgType } = require('./errors');
const { bufferOf } = require('./bytes');

// node reads --trace-tls through its own option parser; a bare boolean flag,
// from NODE_OPTIONS or the command line.
const traceTls = process.execArgv.includes('--trace-tls') ||
  (process.env.NODE_OPTIONS || '').split(/\s+/).includes('--trace-tls');
let traceWarned = false;

// The enableTrace option as node:tls reads it: unset means --trace-tls.
function traceOption(value) {
  if (value === undefined || value === null) {
    if (traceTls && !traceWarned) {
      traceWarned = true;
      process.emitWarning('Enabling --trace-tls can expose sensitive data in the resulting log.');
    }
    return traceTls;
  }
  if (typeof value !== 'boolean') throw invalidArgType('options.enableTrace', 'boolean', value);
  return value;
}

// Whether a server socket must pause in the certificate callback for
// 'OCSPRequest' (node decides it when the socket is made).
function wantsOCSPRequest(options) {
  const server = options.server;
  return !!server && typeof server.listenerCount === 'function' && server.listenerCount('OCSPRequest') > 0;
}

// The end of the certificate callback: with the client asking for a status
// and a listener, 'OCSPRequest' (certificate, issuer, callback) decides what
// is stapled; then the handshake resumes with `native` (the SNI context, if
// any) serving.
function requestOCSP(socket, handle, native, ocspRequested) {
  const server = socket.server;
  const done = () => {
    try {
      handle.certCbDone(native);
    } catch (err) {
      // An object that inherits from a context but wraps none: node:tls's
      // uncoded TypeError for an SNI answer it cannot use.
      socket.destroy(err.code === 'ERR_TLS_INVALID_CONTEXT' ? new TypeError('Invalid SNI context') : err);
    }
  };
  if (!ocspRequested || !server || server.listenerCount('OCSPRequest') === 0) {
    done();
    return;
  }
  let context = native;
  if (context === undefined) {
    // A TLSSocket handed a net.Server has no credentials to describe.
    if (!server._sharedCreds) {
      done();
      return;
    }
    context = server._sharedCreds.context;
  }
  let once = false;
  const onOCSP = (err, response) => {
    if (once) {
      socket.destroy(codedError(Error, 'ERR_MULTIPLE_CALLBACK', 'Callback called multiple times'));
      return;
    }
    once = true;
    if (err) {
      socket.destroy(err);
      return;
    }
    if (socket._handle !== handle) {
      socket.destroy(codedError(Error, 'ERR_SOCKET_CLOSED', 'Socket is closed'));
      return;
    }
    if (response) {
      if (!ArrayBuffer.isView(response)) {
        throw codedError(TypeError, 'ERR_INVALID_ARG_TYPE', 'OCSP response must be a buffer');
      }
      handle.setOCSPResponse(bufferOf(response));
    }
    done();
  };
  server.emit('OCSPRequest', context.getCertificate(), context.getIssuer(), onOCSP);
}

module.exports = { requestOCSP, traceOption, wantsOCSPRequest };
