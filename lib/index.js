'use strict';

// tlswrap: node:tls's API over a C++ engine that hands JavaScript one chunk
// per burst of TLS records.
//
// The module has the names node:tls has on the running Node, no more and no
// fewer (createSecurePair on 20 and 22, getCACertificates on 22.15+ ...), so
// code that feature-tests node:tls takes the same branch. lib/index.mjs gives
// the same names to ESM importers; keep the two lists in step.

const nodeTls = require('node:tls');
const defaults = require('./defaults');
const live = require('./live');
const { convertALPNProtocols } = require('./alpn');
const { getCACertificates, setDefaultCACertificates } = require('./ca');
const { connect } = require('./connect');
const { SecureContext, createSecureContext } = require('./context');
const { Server, createServer } = require('./server');
const { TLSSocket } = require('./socket');

const checkServerIdentity = nodeTls.checkServerIdentity;
const getCiphers = nodeTls.getCiphers;

module.exports = {
  connect,
  createServer,
  createSecureContext,
  checkServerIdentity,
  convertALPNProtocols,
  getCiphers,
  SecureContext,
  Server,
  TLSSocket,
  SessionCache: require('./session_cache').SessionCache,
};

// Accessors: the engine follows assignments. Not configurable (node:tls's
// are data properties): a value put in place by defineProperty would not
// reach the engine, so that throws rather than go unheard.
for (const name of Object.keys(defaults)) {
  Object.defineProperty(module.exports, name, {
    enumerable: true,
    get: () => defaults[name],
    set: (value) => {
      defaults[name] = value;
      live.defaultSet(name, value);
    },
  });
}

Object.defineProperty(module.exports, 'rootCertificates', {
  enumerable: true,
  get: () => nodeTls.rootCertificates,
});

if ('getCACertificates' in nodeTls) module.exports.getCACertificates = getCACertificates;
if ('setDefaultCACertificates' in nodeTls) module.exports.setDefaultCACertificates = setDefaultCACertificates;

// The certificateCompression option's algorithms: those of the OpenSSL that
// node:tls and tlswrap share.
if ('getCertificateCompressionAlgorithms' in nodeTls) {
  module.exports.getCertificateCompressionAlgorithms = function getCertificateCompressionAlgorithms() {
    return nodeTls.getCertificateCompressionAlgorithms();
  };
}

// Deprecated since Node 0.11 (DEP0064) and gone in Node 24.
if ('createSecurePair' in nodeTls) module.exports.createSecurePair = require('./secure_pair').createSecurePair;
