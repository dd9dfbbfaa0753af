'use strict';

// ALPN protocol lists: what users pass (an array of strings or Buffers, or a
// wire-format buffer) to the length-prefixed wire format OpenSSL takes.

const { codedError, invalidArgType, invalidArgValue } = require('./errors');
const { bufferOf } = require('./bytes');

function toWire(protocols) {
  const parts = protocols.map((p, i) => {
    if (typeof p === 'string') return Buffer.from(p);
    if (ArrayBuffer.isView(p)) return bufferOf(p);
    throw invalidArgType(`protocols[${i}]`, ['string', 'Buffer', 'TypedArray', 'DataView'], p);
  });
  parts.forEach((part, i) => {
    if (part.length === 0) throw invalidArgValue(`protocols[${i}]`, protocols[i], 'must be a non-empty string');
    if (part.length > 255) {
      throw codedError(RangeError, 'ERR_OUT_OF_RANGE',
                       `The byte length of the protocol at index ${i} exceeds the maximum length. ` +
                       `It must be <= 255. Received ${part.length}`);
    }
  });
  const out = Buffer.allocUnsafe(parts.reduce((n, p) => n + 1 + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out[at++] = part.length;
    part.copy(out, at);
    at += part.length;
  }
  return out;
}

// A list already in wire format must be one: OpenSSL would refuse it later
// (node:tls before 24 aborts the process on it). Empty means no ALPN.
function checkWire(wire) {
  for (let at = 0; at < wire.length; at += 1 + wire[at]) {
    if (wire[at] === 0) throw invalidArgValue('ALPNProtocols', wire, 'must not contain zero-length protocol');
    if (at + 1 + wire[at] > wire.length) throw invalidArgValue('ALPNProtocols', wire, 'contains truncated protocol');
  }
  return wire;
}

// Mirrors node:tls: arrays and byte views are taken (copied), anything else
// ignored.
function convertALPNProtocols(protocols, out) {
  if (Array.isArray(protocols)) {
    out.ALPNProtocols = toWire(protocols);
  } else if (ArrayBuffer.isView(protocols)) {
    out.ALPNProtocols = checkWire(Buffer.from(protocols.buffer.slice(protocols.byteOffset,
                                                                     protocols.byteOffset + protocols.byteLength)));
  }
}

// The client's offer (wire format) as strings, and the offset of each.
// Decoded as node:tls decodes it for ALPNCallback: 'ascii', which drops each
// byte's high bit, so a callback sees the same names under either module.
function parseWire(wire) {
  const names = [];
  const offsets = [];
  for (let at = 0; at < wire.length; at += 1 + wire[at]) {
    offsets.push(at);
    names.push(wire.toString('ascii', at + 1, at + 1 + wire[at]));
  }
  return { names, offsets };
}

module.exports = { convertALPNProtocols, parseWire };
