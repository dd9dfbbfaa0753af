'use strict';

// Child of socket.test.js: a server whose one connection is unref'd on its
// raw net.Socket (argv[2] says where) and whose listening socket closes at
// once. It prints its port, then a line once the connection is secure, and
// must then exit by itself while the parent's client keeps the connection
// open. Honours TLSWRAP_TEST_BUILTIN through common.js.

const net = require('node:net');
const { tlswrap, serverOptions, listen } = require('../common');

const mode = process.argv[2];
const secure = (sock) => {
  clearInterval(keepAlive);
  sock.on('error', () => {});
  process.stdout.write(`${JSON.stringify({ secure: true })}\n`);
};

// The loop's only other reason to live, until the connection is secure: an
// unref'd connection would otherwise end the process mid-handshake.
const keepAlive = setInterval(() => {}, 1000);

let server;
if (mode === 'before-upgrade') {
  // STARTTLS style: the raw socket is unref'd, then wrapped.
  const secureContext = tlswrap.createSecureContext(serverOptions());
  server = net.createServer((raw) => {
    server.close();
    raw.unref();
    const t = new tlswrap.TLSSocket(raw, { isServer: true, secureContext });
    t.on('secure', () => secure(t));
    t.on('error', () => {});
  });
} else {
  // A 'connection' listener of a TLS server: it runs after the server has
  // wrapped the raw socket.
  server = tlswrap.createServer(serverOptions(), secure);
  server.on('connection', (raw) => {
    server.close();
    raw.unref();
  });
}
listen(server).then((port) => process.stdout.write(`${JSON.stringify({ port })}\n`));
