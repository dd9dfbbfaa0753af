'use strict';

// tlsSocket.ssl is the native handle, and a program may keep it past
// destroy() (node:tls exposes its own the same way). Every method of it,
// called then with a few shapes of arguments, must throw or return, never
// crash: the engine behind it is gone. Run in a child process by
// test/destroy.test.js. Prints one JSON line: how many calls were made.

const { tlswrap, serverOptions, clientOptions, listen, closeServer } = require('../common');

const ARGS = [[], [0], [1, 2], [Buffer.alloc(48)], [0, Buffer.alloc(48)], ['x'], [{}], [() => {}]];

async function main() {
  const server = tlswrap.createServer(serverOptions(), (socket) => socket.on('error', () => {}));
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port));
  await new Promise((resolve, reject) => {
    client.once('secureConnect', resolve);
    client.once('error', reject);
  });
  const handle = client.ssl;
  client.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  const names = new Set();
  for (let p = Object.getPrototypeOf(handle); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (name !== 'constructor' && typeof handle[name] === 'function') names.add(name);
    }
  }
  let calls = 0;
  for (const name of names) {
    for (const args of ARGS) {
      try {
        handle[name](...args);
      } catch {
        // A TypeError for arguments of the wrong shape is fine.
      }
      calls++;
    }
  }
  await closeServer(server);
  console.log(JSON.stringify({ methods: names.size, calls }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
