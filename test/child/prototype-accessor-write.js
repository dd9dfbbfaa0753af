'use strict';

// A program that put an accessor on Array.prototype[1] (here one that keeps
// arrays working, and counts). A write of three chunks made before the
// handshake waits in the engine, which keeps its chunks; the accessor must
// never run from inside writev() (that is JavaScript in the middle of the
// engine: a destroy() from it freed the write still in use). Run by
// test/socket-writes.test.js; prints one JSON line.

const tls = require('node:tls');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions, listen, closeServer, pattern } = require('../common');

async function run() {
  const chunks = [pattern(5000, 1), pattern(6000, 2), pattern(7000, 3)];
  const expected = Buffer.concat(chunks);
  // Not an Array: its element 1 would live in the accessor's map.
  const received = Buffer.alloc(expected.length + 1024);
  let receivedBytes = 0;
  let gotAll;
  const all = new Promise((resolve) => { gotAll = resolve; });
  const server = tls.createServer(serverOptions(), (socket) => {
    socket.on('error', () => {});
    socket.on('data', (d) => {
      d.copy(received, receivedBytes);
      receivedBytes += d.length;
      if (receivedBytes >= expected.length) gotAll();
    });
  });
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port));
  client.on('error', () => {});

  let inWritev = false;
  let accessorInWritev = 0;
  const handle = client._handle;
  const writev = handle.writev;
  Object.defineProperty(handle, 'writev', {
    value(...args) {
      inWritev = true;
      try {
        return writev.apply(this, args);
      } finally {
        inWritev = false;
      }
    },
  });
  const values = new WeakMap();
  Object.defineProperty(Array.prototype, '1', {
    configurable: true,
    get() {
      if (inWritev) accessorInWritev++;
      return values.get(this);
    },
    set(v) {
      if (inWritev) accessorInWritev++;
      values.set(this, v);
    },
  });
  try {
    client.cork();
    for (const chunk of chunks) client.write(chunk);
    client.uncork();
    await Promise.race([all, once(client, 'close')]);
  } finally {
    delete Array.prototype[1];
  }
  const got = received.subarray(0, receivedBytes);
  client.destroy();
  await closeServer(server);
  return { accessorInWritev, received: got.length, equal: got.equals(expected) };
}

run().then((result) => {
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
