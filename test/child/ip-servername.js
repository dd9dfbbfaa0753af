'use strict';

// Child of sni-alpn.test.js: three connections with an IP address as the
// servername, one with a name. Prints one JSON line: the warnings emitted
// (code and message) and the servernames the server saw. In a child because
// node:tls warns once per process. Honours TLSWRAP_TEST_BUILTIN.

const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions } = require('../common');

const warnings = [];
process.on('warning', (w) => warnings.push({ name: w.name, code: w.code, message: w.message }));

async function main() {
  const seen = [];
  const server = tlswrap.createServer(serverOptions(), (sock) => {
    seen.push(sock.servername);
    sock.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  for (const servername of ['127.0.0.1', '127.0.0.1', '::1', 'localhost']) {
    const client = tlswrap.connect(clientOptions(server.address().port, { servername, rejectUnauthorized: false }));
    await once(client, 'secureConnect');
    client.resume();
    await once(client, 'close');
  }
  server.close();
  // Warnings are emitted on a later tick.
  await new Promise((resolve) => setImmediate(resolve));
  console.log(JSON.stringify({ warnings, seen }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
