'use strict';

// Certificate objects in node:tls's getPeerCertificate() shape, built by
// node's own X509Certificate from the DER the engine hands over.

const { X509Certificate } = require('node:crypto');

function legacyObject(der) {
  return new X509Certificate(der).toLegacyObject();
}

// `ders` is the chain leaf first. With `detailed`, each certificate links to
// its issuer and a self-signed root links to itself, as in node:tls.
function certificateObject(ders, detailed) {
  if (!ders || ders.length === 0) return {};
  const certs = ders.map(legacyObject);
  if (!detailed) return certs[0];
  for (let i = 0; i + 1 < certs.length; i++) certs[i].issuerCertificate = certs[i + 1];
  const last = certs[certs.length - 1];
  const lastX509 = new X509Certificate(ders[ders.length - 1]);
  if (lastX509.checkIssued(lastX509)) last.issuerCertificate = last;
  return certs[0];
}

module.exports = { certificateObject };
