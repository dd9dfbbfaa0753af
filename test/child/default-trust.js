'use strict';

// Child of verify.test.js: connects with no `ca` option to a server whose CA
// only the default trust store can know (through NODE_EXTRA_CA_CERTS, or
// SSL_CERT_FILE / SSL_CERT_DIR under --use-openssl-ca / --use-system-ca, as
// the parent sets them), and prints one JSON line: whether it was trusted,
// and (where node:tls has getCACertificates) whether the module's 'default'
// list is node:tls's. Honours TLSWRAP_TEST_BUILTIN through common.js.
// TLSWRAP_TEST_LEAF: the server's certificate and key (test/fixtures/<name>-
// cert.pem and -key.pem; default: server). TLSWRAP_TEST_CLIENT: more client
// options, as JSON. TLSWRAP_TEST_UNSET_EXTRA=1: the program deletes
// NODE_EXTRA_CA_CERTS from its environment before it loads anything, which
// node (it read the variable at startup) does not notice.

if (process.env.TLSWRAP_TEST_UNSET_EXTRA === '1') delete process.env.NODE_EXTRA_CA_CERTS;
const nodeTls = require('node:tls');
const { tlswrap, serverOptions, fixture } = require('../common');

const leaf = process.env.TLSWRAP_TEST_LEAF;
// The server has a `ca` of its own that does not hold its issuer: it looks
// its issuer up there, not in the default store (so the client is the first
// to consult that), and finds none to send with its certificate.
const serverExtra = {
  ca: fixture('selfsigned-cert.pem'),
  ...(leaf ? { key: fixture(`${leaf}-key.pem`), cert: fixture(`${leaf}-cert.pem`) } : {}),
};
const clientExtra = JSON.parse(process.env.TLSWRAP_TEST_CLIENT || '{}');

function sameDefaults() {
  if (typeof nodeTls.getCACertificates !== 'function') return null;
  const ours = tlswrap.getCACertificates('default');
  const node = nodeTls.getCACertificates('default');
  return ours.length === node.length && ours.every((pem, i) => pem === node[i]);
}

const server = tlswrap.createServer(serverOptions(serverExtra));
server.on('secureConnection', (sock) => sock.end('ok'));
server.on('tlsClientError', () => {});
server.listen(0, '127.0.0.1', () => {
  const client = tlswrap.connect({ host: '127.0.0.1', port: server.address().port, servername: 'localhost', ...clientExtra });
  const report = (result) => {
    result.sameDefaults = sameDefaults();
    process.stdout.write(`${JSON.stringify(result)}\n`);
    client.destroy();
    server.close();
  };
  client.on('secureConnect', () => report({ authorized: client.authorized, error: null }));
  client.on('error', (err) => report({ authorized: false, error: err.code }));
});
