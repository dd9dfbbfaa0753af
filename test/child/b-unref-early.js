'use strict';

// Child of socket.test.js: ref()/unref() asked of a client before the
// connection is up (argv[3] says how), with the parent's server on port
// argv[2]. It prints one line at secureConnect; with the socket unref'd it
// must then exit by itself while the connection is still open, with it
// ref'd it must stay until the parent closes the connection.
// Honours TLSWRAP_TEST_BUILTIN through common.js.

const net = require('node:net');
const { tlswrap, clientOptions } = require('../common');

const port = Number(process.argv[2]);
const mode = process.argv[3];
// An asynchronous lookup: node's socket has no handle yet while it runs.
const lookup = (host, options, cb) => setImmediate(() => {
  if (options.all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
  else cb(null, '127.0.0.1', 4);
});

// The loop's only other reason to live, until the connection is secure: an
// unref'd connection would otherwise end the process mid-handshake.
const keepAlive = setInterval(() => {}, 1000);

let client;
if (mode === 'upgrade-unrefed') {
  // A net.Socket unref'd by its owner, then upgraded.
  const raw = net.connect(port, '127.0.0.1');
  raw.unref();
  raw.once('connect', () => start(tlswrap.connect(clientOptions(port, { socket: raw }))));
} else {
  const c = tlswrap.connect(clientOptions(port, mode.endsWith('-lookup') ? { host: 'localhost', lookup } : {}));
  c.unref();
  if (mode.startsWith('ref-again')) c.ref();
  start(c);
}

function start(c) {
  client = c;
  client.on('secureConnect', () => {
    clearInterval(keepAlive);
    process.stdout.write(`${JSON.stringify({ authorized: client.authorized })}\n`);
  });
  client.on('error', (err) => {
    // The parent ends a ref'd connection itself: that is how it lets us go.
    if (mode.startsWith('ref-again')) return;
    process.stdout.write(`${JSON.stringify({ error: err.code || err.message })}\n`);
    process.exitCode = 1;
  });
}
