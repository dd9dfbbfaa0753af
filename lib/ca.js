'use strict';

// The default trust store as tls.getCACertificates() / setDefaultCACertificates()
// see it: node's bundled roots plus NODE_EXTRA_CA_CERTS (named when this
// module loads, as node reads it once at startup), until replaced. As node's, it
// follows --use-openssl-ca (OpenSSL's default paths instead of the bundled
// roots) and --use-system-ca / NODE_USE_SYSTEM_CA=1 (the system store too).

const fs = require('node:fs');
const nodeTls = require('node:tls');
const { X509Certificate } = require('node:crypto');
const { codedError, invalidArgType } = require('./errors');
const { hasFlag } = require('./cli_flags');
const { bufferOf } = require('./bytes');

const pemBlock = /^-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/gm;

// A certificate as node prints it (PEM ending in a newline), or null where
// `pem` does not parse.
function normalized(pem) {
  try {
    return new X509Certificate(pem).toString();
  } catch {
    return null;
  }
}

// Every certificate of a file, skipping what does not parse (as OpenSSL's PEM
// reader does).
function splitPems(text) {
  return (text.match(pemBlock) || []).map(normalized).filter((pem) => pem !== null);
}

let extraText = null; // the NODE_EXTRA_CA_CERTS file, '' if none
let extra = null; // its certificates, split on first use
let defaults = null;
let replaced = null; // set by setDefaultCACertificates()
let version = 0; // bumped on each replacement, so the native store is rebuilt

// node reads NODE_EXTRA_CA_CERTS once, before any module runs: a program
// that sets or deletes it later changes nothing for node:tls. Where node
// lists what it read (22.15+), that list is used; before, the variable as it
// was when this module loaded (the file read at first use). A file that
// fails to load is skipped quietly: node has said so at startup.
const extraFileName = process.env.NODE_EXTRA_CA_CERTS;
function extraFile() {
  if (extraText === null) {
    extraText = '';
    if (typeof nodeTls.getCACertificates === 'function') {
      extraText = nodeTls.getCACertificates('extra').join('\n');
    } else if (extraFileName) {
      try {
        extraText = fs.readFileSync(extraFileName, 'latin1');
      } catch {
        // node's startup warning covers it.
      }
    }
  }
  return extraText;
}

function extraCertificates() {
  if (extra === null) extra = Object.freeze(splitPems(extraFile()));
  return extra;
}

// Node refuses --use-openssl-ca together with --use-bundled-ca or
// --use-system-ca, so each case stands alone.
const useOpenSSLCA = hasFlag('--use-openssl-ca');
let useSystemCA = null;

// Whether node trusts the system store: its flag, or the environment
// variable where this Node reads it (22.19+, 24.6+); where node's own
// default list holds every system certificate, node read it (or it adds
// nothing).
function systemCAInUse() {
  if (useSystemCA === null) {
    useSystemCA = false;
    if (!useOpenSSLCA && typeof nodeTls.getCACertificates === 'function') {
      if (hasFlag('--use-system-ca')) {
        useSystemCA = true;
      } else if (process.env.NODE_USE_SYSTEM_CA === '1') {
        const inDefault = new Set(nodeTls.getCACertificates('default'));
        useSystemCA = nodeTls.getCACertificates('system').every((pem) => inDefault.has(pem));
      }
    }
  }
  return useSystemCA;
}

// Where node gets its roots: its bundled list, unless --use-openssl-ca
// (OpenSSL's default paths, which no list shows: node's 'default' list
// then holds only the extra certificates).
function baseCertificates() {
  if (useOpenSSLCA) return [];
  if (systemCAInUse()) return [...nodeTls.rootCertificates, ...nodeTls.getCACertificates('system')];
  return nodeTls.rootCertificates;
}

function defaultCertificates() {
  if (replaced !== null) return replaced;
  if (defaults === null) defaults = Object.freeze([...baseCertificates(), ...extraCertificates()]);
  return defaults;
}

function getCACertificates(type = 'default') {
  if (typeof type !== 'string') throw invalidArgType('type', 'string', type);
  switch (type) {
    case 'default':
      return defaultCertificates();
    case 'bundled':
      return nodeTls.rootCertificates;
    case 'extra':
      return extraCertificates();
    case 'system':
      // Reading the OS store is node's job; tlswrap does not trust it by
      // default (nor does node without --use-system-ca).
      if (typeof nodeTls.getCACertificates === 'function') return nodeTls.getCACertificates('system');
      throw codedError(Error, 'ERR_TLSWRAP_NOT_SUPPORTED',
                       "getCACertificates('system') needs a Node that has tls.getCACertificates()");
    default:
      throw codedError(TypeError, 'ERR_INVALID_ARG_VALUE', `The argument 'type' is invalid. Received '${type}'`);
  }
}

function setDefaultCACertificates(certs) {
  if (!Array.isArray(certs)) {
    throw invalidArgType('certs', 'Array', certs);
  }
  for (let i = 0; i < certs.length; i++) {
    if (typeof certs[i] !== 'string' && !ArrayBuffer.isView(certs[i])) {
      throw invalidArgType(`certs[${i}]`, ['string', 'ArrayBufferView'], certs[i]);
    }
  }
  // Every certificate of every entry (a bundle in one string too),
  // duplicates once, as node reads them; a block that does not parse
  // refuses the whole list, the store left as it was.
  const pems = [];
  for (const one of certs) {
    const text = typeof one === 'string' ? one : bufferOf(one).toString('latin1');
    for (const block of text.match(pemBlock) || []) {
      const pem = normalized(block);
      if (pem === null) throw codedError(Error, 'ERR_OSSL_PEM_ASN1_LIB', 'error:0488000D:PEM routines::ASN1 lib');
      if (!pems.includes(pem)) pems.push(pem);
    }
  }
  if (certs.length > 0 && pems.length === 0) {
    throw codedError(Error, 'ERR_CRYPTO_OPERATION_FAILED', 'No valid certificates found in the provided array');
  }
  replaced = Object.freeze(pems);
  version++;
}

// What the native store is built from (PEM texts, each may hold several
// certificates: the extra file is not split in JS for every process that
// only connects), a number that changes when that list is replaced, and
// whether OpenSSL's default paths are looked up too (--use-openssl-ca).
let storeTexts = null;

function defaultStore() {
  if (replaced !== null) return { pems: replaced, version, defaultPaths: false };
  if (storeTexts === null) storeTexts = [...baseCertificates(), extraFile()];
  return { pems: storeTexts, version, defaultPaths: useOpenSSLCA };
}

module.exports = { getCACertificates, setDefaultCACertificates, defaultStore };
