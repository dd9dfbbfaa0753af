'use strict';

// Child of socket.test.js: connects to the parent's server (port in argv[2]),
// then unref()s the connected socket. With nothing else keeping the loop
// alive, the process must exit by itself while the connection is still open.
// Honours TLSWRAP_TEST_BUILTIN through common.js.

const { tlswrap, clientOptions } = require('../common');

const client = tlswrap.connect(clientOptions(Number(process.argv[2])));
client.on('secureConnect', () => {
  const same = client.unref();
  process.stdout.write(`${JSON.stringify({ authorized: client.authorized, returnsThis: same === client })}\n`);
});
client.on('error', (err) => {
  process.stdout.write(`${JSON.stringify({ error: err.code || err.message })}\n`);
  process.exitCode = 1;
});
