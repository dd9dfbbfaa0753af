'use strict';

// Pre-shared keys (options.pskCallback, options.pskIdentityHint) as node:tls
// has them. The engine asks while OpenSSL is on the stack; the adapters here
// check the user's answer as node:tls does and turn a throw or a bad answer
// into destroy(err), which fails the handshake.

const { inspect } = require('node:util');
const { codedError, invalidArgType } = require('./errors');
const { kOwner } = require('./transport');

// The code's spelling was fixed in Node 23 (nodejs/node#52627).
const HINT_FAILED = Number(process.versions.node.split('.')[0]) >= 23
  ? 'ERR_TLS_PSK_SET_IDENTITY_HINT_FAILED' : 'ERR_TLS_PSK_SET_IDENTIY_HINT_FAILED';


function invalidArgValue(name, value, reason) {
  let shown = inspect(value);
  if (shown.length > 128) shown = `${shown.slice(0, 128)}...`;
  return codedError(TypeError, 'ERR_INVALID_ARG_VALUE', `The argument '${name}' ${reason}. Received ${shown}`);
}

function validateBuffer(value, name) {
  if (!ArrayBuffer.isView(value)) throw invalidArgType(name, ['Buffer', 'TypedArray', 'DataView'], value);
}

function checkLength(psk, maxPskLen) {
  // As node: the view's length (its byte length is checked natively).
  if (psk.length > maxPskLen) throw invalidArgValue('psk', psk, `Pre-shared key exceeds ${maxPskLen} bytes`);
}

// The engine calls these with the handle as `this`; they are shared and find
// the socket through it (a closure over the socket, held by the native
// object, would keep a socket JS has dropped alive).

// Server: callback(socket, identity) answers with the key, or
// { psk } (null/undefined: unknown identity).
function onPskServer(identity, maxPskLen) {
  const socket = this[kOwner];
  try {
    const ret = socket._tlsOptions.pskCallback.call(socket, socket, identity);
    if (ret === null || ret === undefined) return undefined;
    let psk;
    if (ArrayBuffer.isView(ret)) {
      psk = ret;
    } else {
      if (typeof ret !== 'object') {
        throw invalidArgType('ret', ['Buffer', 'TypedArray', 'DataView', 'Object'], ret);
      }
      psk = ret.psk;
      validateBuffer(psk, 'psk');
    }
    checkLength(psk, maxPskLen);
    return psk;
  } catch (err) {
    socket.destroy(err);
    return undefined;
  }
}

// Client: callback(hint) answers with { psk, identity } (null/undefined:
// offer no key). hint is null where the server sent none (always in TLS 1.3).
function onPskClient(hint, maxPskLen, maxIdentityLen) {
  const socket = this[kOwner];
  try {
    const ret = socket._tlsOptions.pskCallback.call(socket, hint);
    if (ret === null || ret === undefined) return undefined;
    if (typeof ret !== 'object' || Array.isArray(ret)) throw invalidArgType('ret', 'object', ret);
    validateBuffer(ret.psk, 'psk');
    checkLength(ret.psk, maxPskLen);
    if (typeof ret.identity !== 'string') throw invalidArgType('identity', 'string', ret.identity);
    if (Buffer.byteLength(ret.identity) > maxIdentityLen) {
      throw invalidArgValue('identity', ret.identity, `PSK identity exceeds ${maxIdentityLen} bytes`);
    }
    return { psk: ret.psk, identity: ret.identity };
  } catch (err) {
    socket.destroy(err);
    return undefined;
  }
}

// TLSSocket options -> the handle. Returns the error node:tls destroys the
// socket with when OpenSSL refuses the hint, or null.
function enablePsk(handle, opts) {
  if (!opts.pskCallback) return null;
  if (typeof opts.pskCallback !== 'function') throw invalidArgType('pskCallback', 'function', opts.pskCallback);
  handle.enablePskCallback(opts.isServer ? onPskServer : onPskClient);
  if (!opts.pskIdentityHint) return null;
  if (typeof opts.pskIdentityHint !== 'string') {
    throw invalidArgType('options.pskIdentityHint', 'string', opts.pskIdentityHint);
  }
  if (handle.setPskIdentityHint(opts.pskIdentityHint)) return null;
  return codedError(Error, HINT_FAILED, 'Failed to set PSK identity hint');
}

// tls.Server options, checked when the server is made, as node:tls does.
function validateServerPsk(options) {
  if (options.pskCallback && typeof options.pskCallback !== 'function') {
    throw invalidArgType('options.pskCallback', 'function', options.pskCallback);
  }
  if (options.pskIdentityHint && typeof options.pskIdentityHint !== 'string') {
    throw invalidArgType('options.pskIdentityHint', 'string', options.pskIdentityHint);
  }
}

module.exports = { enablePsk, validateServerPsk };
