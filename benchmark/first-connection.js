'use strict';

// What a process pays for its first TLS connection: start-up, loading the
// module, a server's context, a client's context with the default trust store
// (no `ca`), and one handshake. One measurement per process; run it several
// times per impl, alternating, as a CLI or a short-lived worker would start.
//
//   node benchmark/first-connection.js [impl=tlswrap] [tlsVersion=TLSv1.3]
//
// The client verifies against the default store (node's bundled roots plus
// NODE_EXTRA_CA_CERTS, if set: set it to test/fixtures/ca-cert.pem and the
// connection is authorized) but lets an unverified server through, so the
// run completes either way. cpuMs and wallMs count from process start;
// rssMiB is the process's resident memory then.
// Prints one JSON line.

const common = require('./common.js');

const { opts, tls } = common.setup({ impl: 'tlswrap', tlsVersion: 'TLSv1.3' }, () => {});
const { server: serverOpts, client: clientOpts } = common.tlsOptions(opts.tlsVersion, 'AES-256-GCM');

const server = tls.createServer(serverOpts, (socket) => socket.end('x'));
server.on('tlsClientError', common.fail);
server.listen(0, '127.0.0.1', () => {
  const { ca, ...noCa } = clientOpts;
  const client = tls.connect({ ...noCa, port: server.address().port, rejectUnauthorized: false }, () => {
    const cpu = process.cpuUsage();
    const result = {
      bench: 'first-connection',
      impl: opts.impl,
      tlsVersion: opts.tlsVersion,
      cpuMs: common.round((cpu.user + cpu.system) / 1000, 1),
      wallMs: common.round(process.uptime() * 1000, 1),
      rssMiB: common.round(process.memoryUsage().rss / 1048576, 1),
      authorized: client.authorized,
      extraCaCerts: Boolean(process.env.NODE_EXTRA_CA_CERTS),
      ...common.runtimeInfo(),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    // Closed once the server has its side up and answered: an earlier close
    // is a handshake the server sees cut off.
    client.once('data', () => {
      client.destroy();
      server.close();
    });
  });
  client.on('error', common.fail);
});
