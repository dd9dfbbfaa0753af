'use strict';

// Child of trace.test.js: one connection with tracing asked for as argv[2]
// says ('client', 'server': the enableTrace option; 'method': the client's
// enableTrace() before the handshake; 'off': enableTrace false on both;
// 'none': neither; 'fail': both traced, versions that cannot agree), then prints one JSON line (the handshake went through,
// the warnings). The trace itself is on stderr. Honours TLSWRAP_TEST_BUILTIN
// through common.js.

const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions } = require('../common');

const warnings = [];
process.on('warning', (w) => warnings.push(w.message));

// Both sides traced through a handshake that fails: the errors must be the
// ones OpenSSL reported, whatever the trace did with the error queue.
async function fail() {
  const codes = {};
  const server = tlswrap.createServer(serverOptions({ minVersion: 'TLSv1.3', enableTrace: true }));
  const serverError = new Promise((resolve) => server.on('tlsClientError', (err) => resolve(err.code)));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = tlswrap.connect(clientOptions(server.address().port, { maxVersion: 'TLSv1.2', enableTrace: true }));
  codes.client = await new Promise((resolve) => client.on('error', (err) => resolve(err.code)));
  codes.server = await serverError;
  server.close();
  process.stdout.write(`${JSON.stringify({ secure: true, codes, warnings })}\n`);
}

async function main() {
  const mode = process.argv[2];
  if (mode === 'fail') return fail();
  const off = mode === 'off' ? { enableTrace: false } : {};
  const server = tlswrap.createServer(serverOptions({ enableTrace: mode === 'server' ? true : off.enableTrace }));
  server.on('secureConnection', (sock) => sock.end());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const serverSide = once(server, 'secureConnection');
  const client = tlswrap.connect(clientOptions(server.address().port, {
    enableTrace: mode === 'client' ? true : off.enableTrace,
  }));
  if (mode === 'method') client.enableTrace();
  await once(client, 'secureConnect');
  await serverSide;
  client.destroy();
  server.close();
  // Let the warning events (emitted on a tick) arrive.
  await new Promise((resolve) => setImmediate(resolve));
  process.stdout.write(`${JSON.stringify({ secure: true, warnings })}\n`);
}

main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ error: err.message })}\n`);
});
