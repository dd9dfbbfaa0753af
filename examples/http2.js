'use strict';

// An HTTP/2 server (which also serves HTTP/1.1 on its port) and one h2
// request to it, both over tlswrap.
// Prints: /hi over HTTP/2.0, TLSv1.3

const http2 = require('tlswrap/http2'); // instead of require('node:http2')
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// A throwaway self-signed key and certificate for localhost
// (bring your own for anything real).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
  '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
const key = fs.readFileSync(path.join(dir, 'key.pem'));
const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
fs.rmSync(dir, { recursive: true });

const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, (req, res) => {
  res.end(`${req.url} over HTTP/${req.httpVersion}, ${req.socket.getProtocol()}\n`);
});
server.listen(0, '127.0.0.1', () => {
  const session = http2.connect(`https://127.0.0.1:${server.address().port}`, { ca: cert });
  session.on('connect', () => console.log(session.alpnProtocol, session.socket.getCipher().name));
  const req = session.request({ ':path': '/hi' });
  req.pipe(process.stdout);
  req.on('end', () => {
    session.close();
    server.close();
  });
});
