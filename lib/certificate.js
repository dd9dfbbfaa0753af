'use strict';

// Certificate objects in node:tls's getPeerCertificate() shape, built by
// node's own X509Certificate from the DER the engine hands over.
//
// Parsing is the expensive part (OpenSSL 3 decodes the public key through
// its provider machinery), and a process sees the same few certificates
// over and over (every connection to one server), so parsed certificates
// are kept by their DER; callers always get fresh copies.

const { X509Certificate } = require('node:crypto');

const kCacheSize = 256;
const cache = new Map(); // DER (latin1) -> { legacy, selfIssued }

// node's X509Certificate reads PEM first and DER only if no PEM block is
// found anywhere in its input. A peer's DER can carry one (in any string or
// extension): given the DER itself, it would describe that embedded
// certificate, not the one OpenSSL verified. So it always gets a PEM block
// of our own making, which it reads first.
function x509FromDer(der) {
  const base64 = der.toString('base64');
  let pem = '-----BEGIN CERTIFICATE-----\n';
  for (let i = 0; i < base64.length; i += 64) pem += `${base64.slice(i, i + 64)}\n`;
  return new X509Certificate(`${pem}-----END CERTIFICATE-----\n`);
}

function parsed(der) {
  const key = der.toString('latin1');
  let entry = cache.get(key);
  if (entry !== undefined) {
    // Most recently used last, so the oldest is first to go.
    cache.delete(key);
    cache.set(key, entry);
    return entry;
  }
  const x509 = x509FromDer(der);
  entry = { legacy: x509.toLegacyObject(), selfIssued: x509.checkIssued(x509) };
  cache.set(key, entry);
  if (cache.size > kCacheSize) cache.delete(cache.keys().next().value);
  return entry;
}

// A copy nobody else holds: the same shape and prototypes as the original.
function copy(value) {
  if (Buffer.isBuffer(value)) return Buffer.from(value);
  if (Array.isArray(value)) return value.map(copy);
  if (value !== null && typeof value === 'object') {
    const out = Object.create(Object.getPrototypeOf(value));
    for (const key of Object.keys(value)) out[key] = copy(value[key]);
    return out;
  }
  return value;
}

// `ders` is the chain leaf first. With `detailed`, each certificate links to
// its issuer and a self-signed root links to itself, as in node:tls.
function certificateObject(ders, detailed) {
  if (!ders || ders.length === 0) return {};
  if (!detailed) return copy(parsed(ders[0]).legacy);
  const entries = ders.map(parsed);
  const certs = entries.map((e) => copy(e.legacy));
  for (let i = 0; i + 1 < certs.length; i++) certs[i].issuerCertificate = certs[i + 1];
  if (entries[entries.length - 1].selfIssued) {
    certs[certs.length - 1].issuerCertificate = certs[certs.length - 1];
  }
  return certs[0];
}

// The cached parse itself, not a copy: only for a reader that neither keeps
// nor changes it (node's own checkServerIdentity, when it passes).
function sharedCertificate(der) {
  return parsed(der).legacy;
}

module.exports = { certificateObject, sharedCertificate, x509FromDer };
