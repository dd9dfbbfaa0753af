'use strict';

// Memory held per open, idle TLS connection, one measurement per process.
//
//   node benchmark/idle-memory.js [impl=tlswrap] [tlsVersion=TLSv1.3]
//     [connections=1000] [cipher=AES-256-GCM] [message=4096] [rest=0]
//
// Server and client in this one process on 127.0.0.1, same impl both ends,
// so each connection is counted twice (one socket per side). Every
// connection completes its handshake and moves `message` bytes each way,
// then sits idle. RSS is read after a settle period and a full GC (run with
// --expose-gc so garbage from the handshakes is not counted), before the
// first connection and after the last; the difference per connection is
// the result. Prints one JSON line.
//
// rest=<seconds>: also read RSS again after that long idle. V8 keeps the
// young generation it grew during the handshakes (tens of MiB, whatever the
// connection count) until its memory reducer runs, some 8-16 s into an idle
// period; kibPerConnectionAtRest is what an idle server holds after that.

const common = require('./common.js');

const { opts, tls } = common.setup({
  impl: 'tlswrap',
  tlsVersion: 'TLSv1.3',
  connections: 1000,
  cipher: 'AES-256-GCM',
  message: 4096,
  rest: 0,
}, (o) => {
  common.checkInt(o, 'connections', 1);
  common.checkInt(o, 'message', 1);
  common.checkInt(o, 'rest', 0);
  if (typeof global.gc !== 'function') throw new Error('run with --expose-gc');
});

const { server: serverOpts, client: clientOpts } = common.tlsOptions(opts.tlsVersion, opts.cipher);
const message = Buffer.alloc(opts.message, 'm');
const sockets = [];

// One connection: handshake, `message` bytes each way, then idle.
function openOne(port) {
  return new Promise((resolve, reject) => {
    const client = tls.connect({ ...clientOpts, port });
    let got = 0;
    client.on('error', reject);
    client.on('data', (chunk) => {
      got += chunk.length;
      if (got === opts.message) {
        sockets.push(client);
        resolve();
      }
    });
    client.write(message);
  });
}

const server = tls.createServer(serverOpts, (socket) => {
  sockets.push(socket);
  let got = 0;
  socket.on('error', common.fail);
  socket.on('data', (chunk) => {
    got += chunk.length;
    if (got === opts.message) socket.write(message);
  });
});
server.on('tlsClientError', common.fail);
server.on('error', common.fail);

server.listen(0, '127.0.0.1', async () => {
  try {
    const { port } = server.address();
    // Warm up code paths and allocator arenas before the baseline.
    for (let i = 0; i < 20; i++) await openOne(port);
    const before = await common.settledRss();
    const heapBefore = process.memoryUsage().heapUsed;
    // A few at a time: the point is memory at rest, not a connection storm.
    const batch = 50;
    for (let done = 0; done < opts.connections; done += batch) {
      const n = Math.min(batch, opts.connections - done);
      await Promise.all(Array.from({ length: n }, () => openOne(port)));
    }
    const after = await common.settledRss();
    const heapAfter = process.memoryUsage().heapUsed;
    const perConnection = (after - before) / opts.connections;
    let atRest;
    if (opts.rest > 0) {
      await new Promise((resolve) => setTimeout(resolve, opts.rest * 1000));
      atRest = common.round((await common.settledRss() - before) / opts.connections / 1024, 1);
    }
    process.stdout.write(
      `${JSON.stringify({
        bench: 'idle-memory',
        impl: opts.impl,
        tlsVersion: opts.tlsVersion,
        connections: opts.connections,
        message: opts.message,
        rssBeforeMiB: common.round(before / common.MiB, 1),
        rssAfterMiB: common.round(after / common.MiB, 1),
        kibPerConnection: common.round(perConnection / 1024, 1),
        kibPerConnectionAtRest: atRest,
        heapKibPerConnection: common.round((heapAfter - heapBefore) / opts.connections / 1024, 1),
        node: process.version,
      })}\n`,
    );
    for (const s of sockets) s.destroy();
    server.close();
    setTimeout(() => process.exit(0), 500).unref();
  } catch (err) {
    common.fail(err);
  }
});
