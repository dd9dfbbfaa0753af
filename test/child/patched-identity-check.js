'use strict';

// Child of verify.test.js: puts a wrapper in place of node:tls's
// checkServerIdentity before tlswrap is loaded (as an instrumentation
// library might), then makes two verified connections. The wrapper must get
// what node:tls gives it, a detailed certificate of its own: it records what
// it saw and then scribbles on it. Prints one JSON line.

const nodeTls = require('node:tls');

const original = nodeTls.checkServerIdentity;
const seen = [];
nodeTls.checkServerIdentity = function checkServerIdentity(hostname, cert) {
  seen.push({ altnames: cert.subjectaltname, chain: !!cert.issuerCertificate });
  const result = original(hostname, cert);
  cert.subjectaltname = 'DNS:elsewhere.example';
  return result;
};

const { tlswrap, serverOptions, clientOptions } = require('../common');

function connectOnce(port) {
  return new Promise((resolve) => {
    const client = tlswrap.connect(clientOptions(port));
    client.on('secureConnect', () => {
      resolve({ authorized: client.authorized, error: null });
      client.destroy();
    });
    client.on('error', (err) => resolve({ authorized: false, error: err.code }));
  });
}

const server = tlswrap.createServer(serverOptions());
server.on('secureConnection', (sock) => sock.on('error', () => {}));
server.on('tlsClientError', () => {});
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const results = [await connectOnce(port), await connectOnce(port)];
  process.stdout.write(`${JSON.stringify({ results, seen })}\n`);
  server.close();
});
