'use strict';

// What a process pays for its first TLS connection: start-up, loading the
// module, a server's context, a client's context and one handshake. One
// measurement per process; run it several times per impl, alternating, as a
// CLI or a short-lived worker would start.
//
//   node benchmark/first-connection.js [impl=tlswrap] [tlsVersion=TLSv1.3]
//     [ca=none]
//
// ca=none: the client has no `ca`, so it verifies against the default store
// (node's bundled roots plus NODE_EXTRA_CA_CERTS, if set: set it to
// test/fixtures/ca-cert.pem and the connection is authorized), but lets an
// unverified server through, so the run completes either way. ca=list:
// `ca: [...tls.rootCertificates, testCA]`, the usual way to add a private CA
// to the defaults; ca=bundle: the same certificates as one PEM text. Then
// nextContextMs is what one more createSecureContext({ ca }) takes, as a
// program pays for each context it makes (per SNI name, per connection).
// cpuMs and wallMs count from process start; rssMiB is the process's
// resident memory then. Prints one JSON line.

const common = require('./common.js');

const { opts, tls } = common.setup({ impl: 'tlswrap', tlsVersion: 'TLSv1.3', ca: 'none' }, (o) => {
  if (!['none', 'list', 'bundle'].includes(o.ca)) throw new Error(`ca must be none, list or bundle, got "${o.ca}"`);
});
const { server: serverOpts, client: clientOpts } = common.tlsOptions(opts.tlsVersion, 'AES-256-GCM');
const caList = opts.ca === 'none' ? undefined : [...tls.rootCertificates, clientOpts.ca.toString()];
const caOption = opts.ca === 'bundle' ? caList.join('\n') : caList;

const server = tls.createServer(serverOpts, (socket) => socket.end('x'));
server.on('tlsClientError', common.fail);
server.listen(0, '127.0.0.1', () => {
  const { ca, ...noCa } = clientOpts;
  const client = tls.connect({ ...noCa, ca: caOption, port: server.address().port, rejectUnauthorized: false }, () => {
    const cpu = process.cpuUsage();
    let nextContextMs;
    if (caOption !== undefined) {
      const start = process.hrtime.bigint();
      tls.createSecureContext({ ca: caOption });
      nextContextMs = common.round(Number(process.hrtime.bigint() - start) / 1e6, 2);
    }
    const result = {
      bench: 'first-connection',
      impl: opts.impl,
      tlsVersion: opts.tlsVersion,
      cpuMs: common.round((cpu.user + cpu.system) / 1000, 1),
      wallMs: common.round(process.uptime() * 1000, 1),
      rssMiB: common.round(process.memoryUsage().rss / 1048576, 1),
      ca: opts.ca,
      nextContextMs,
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
