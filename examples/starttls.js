'use strict';

// STARTTLS: a plain TCP connection that both ends upgrade to TLS in the
// middle of a conversation (as SMTP, IMAP and PostgreSQL do).
// Prints: server: hello over TLSv1.3

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

const secureContext = tls.createSecureContext({ key, cert });

// The server answers "STARTTLS" with "OK" and then speaks TLS on the same
// socket. (A real protocol parser must also hand over any bytes that arrived
// after the command; here the client sends nothing until it reads "OK".)
const server = net.createServer((plain) => {
  plain.once('data', (line) => {
    if (String(line) !== 'STARTTLS\r\n') return plain.end('ERR\r\n');
    plain.write('OK\r\n');
    const secure = new tls.TLSSocket(plain, { isServer: true, secureContext });
    secure.setEncoding('utf8');
    secure.on('data', (text) => secure.end(`server: ${text} over ${secure.getProtocol()}`));
  });
});

server.listen(0, '127.0.0.1', () => {
  const plain = net.connect(server.address().port, '127.0.0.1', () => plain.write('STARTTLS\r\n'));
  plain.once('data', (line) => {
    if (String(line) !== 'OK\r\n') throw new Error(`no STARTTLS: ${line}`);
    const secure = tls.connect({ socket: plain, ca: cert, servername: 'localhost' }, () => secure.write('hello'));
    secure.setEncoding('utf8');
    secure.on('data', (text) => console.log(text));
    secure.on('close', () => server.close());
  });
});
