'use strict';

// An HTTPS server and one request to it, both over tlswrap.
// Prints: hello from /hi over TLSv1.3

const https = require('tlswrap/https'); // instead of require('node:https')
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

const server = https.createServer({ key, cert }, (req, res) => {
  res.end(`hello from ${req.url} over ${req.socket.getProtocol()}\n`);
});
server.listen(0, '127.0.0.1', () => {
  https.get(`https://127.0.0.1:${server.address().port}/hi`, { ca: cert }, (res) => {
    res.pipe(process.stdout);
    // close() also closes the idle keep-alive connection, so the process exits.
    res.on('end', () => server.close());
  });
});
