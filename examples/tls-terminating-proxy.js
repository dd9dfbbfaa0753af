'use strict';

// A TLS-terminating proxy: tlswrap takes TLS connections and forwards the
// plaintext to a backend that speaks plain TCP.
// Prints: reply: HELLO THROUGH THE PROXY

const net = require('node:net');
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

// The backend: plain TCP, upper-cases what it reads.
const backend = net.createServer((socket) => {
  socket.on('data', (data) => socket.write(String(data).toUpperCase()));
});

// The proxy: each TLS connection gets its own backend connection, and the two
// are piped both ways; half-open on both, so an end in one direction is passed
// on and the other keeps flowing. An error on either side drops both.
const proxy = tls.createServer({ key, cert, allowHalfOpen: true }, (client) => {
  const upstream = net.connect({ port: backend.address().port, host: '127.0.0.1', allowHalfOpen: true });
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});

backend.listen(0, '127.0.0.1', () => proxy.listen(0, '127.0.0.1', () => {
  const client = tls.connect({ host: '127.0.0.1', port: proxy.address().port, ca: cert }, () => {
    client.write('hello through the proxy');
  });
  client.setEncoding('utf8');
  client.on('data', (text) => {
    console.log(`reply: ${text}`);
    client.end();
  });
  client.on('close', () => {
    proxy.close();
    backend.close();
  });
}));
