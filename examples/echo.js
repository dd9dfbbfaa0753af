'use strict';

// A TLS echo server and a client that sends it a line.
// Prints: echo: hello over TLSv1.3

const tls = require('tlswrap'); // instead of require('node:tls')
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// A throwaway self-signed key and certificate for localhost and 127.0.0.1
// (bring your own for anything real).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
  '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
const key = fs.readFileSync(path.join(dir, 'key.pem'));
const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
fs.rmSync(dir, { recursive: true });

const server = tls.createServer({ key, cert }, (socket) => socket.pipe(socket));
server.listen(0, '127.0.0.1', () => {
  const client = tls.connect({ host: '127.0.0.1', port: server.address().port, ca: cert }, () => {
    client.write('hello');
  });
  client.setEncoding('utf8');
  client.on('data', (text) => {
    console.log(`echo: ${text} over ${client.getProtocol()}`);
    client.end();
  });
  client.on('close', () => server.close());
});
