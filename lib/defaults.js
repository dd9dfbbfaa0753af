'use strict';

// tlswrap's DEFAULT_* values start as node:tls's and can be changed on the
// tlswrap module (as node:tls's can) without touching node:tls itself.

const nodeTls = require('node:tls');

module.exports = {
  DEFAULT_CIPHERS: nodeTls.DEFAULT_CIPHERS,
  DEFAULT_ECDH_CURVE: nodeTls.DEFAULT_ECDH_CURVE,
  DEFAULT_MIN_VERSION: nodeTls.DEFAULT_MIN_VERSION,
  DEFAULT_MAX_VERSION: nodeTls.DEFAULT_MAX_VERSION,
  CLIENT_RENEG_LIMIT: nodeTls.CLIENT_RENEG_LIMIT,
  CLIENT_RENEG_WINDOW: nodeTls.CLIENT_RENEG_WINDOW,
};
