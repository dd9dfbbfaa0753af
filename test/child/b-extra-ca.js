'use strict';

// Child of verify.test.js: connects to a server whose CA is only known through
// NODE_EXTRA_CA_CERTS (when the parent sets it), with no `ca` option, and
// prints what the client saw as one JSON line. Honours TLSWRAP_TEST_BUILTIN
// through common.js.

const { tlswrap, serverOptions } = require('../common');

const server = tlswrap.createServer(serverOptions());
server.on('secureConnection', (sock) => sock.end('ok'));
server.on('tlsClientError', () => {});
server.listen(0, '127.0.0.1', () => {
  const client = tlswrap.connect({ host: '127.0.0.1', port: server.address().port, servername: 'localhost' });
  const report = (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    client.destroy();
    server.close();
  };
  client.on('secureConnect', () => report({ authorized: client.authorized, error: null }));
  client.on('error', (err) => report({ authorized: false, error: err.code }));
});
