'use strict';

// tlswrap: node:tls's API over a C++ engine that hands JavaScript one chunk
// per burst of TLS records.

const nodeTls = require('node:tls');
const defaults = require('./defaults');
const { convertALPNProtocols } = require('./alpn');
const { connect } = require('./connect');
const { SecureContext, createSecureContext } = require('./context');
const { Server, createServer } = require('./server');
const { TLSSocket } = require('./socket');

module.exports = {
  connect,
  createServer,
  createSecureContext,
  checkServerIdentity: nodeTls.checkServerIdentity,
  convertALPNProtocols,
  getCiphers: nodeTls.getCiphers,
  SecureContext,
  Server,
  TLSSocket,
};

for (const name of Object.keys(defaults)) {
  Object.defineProperty(module.exports, name, {
    enumerable: true,
    get: () => defaults[name],
    set: (value) => {
      defaults[name] = value;
    },
  });
}

Object.defineProperty(module.exports, 'rootCertificates', {
  enumerable: true,
  get: () => nodeTls.rootCertificates,
});
