'use strict';

// Child of session.test.js: a cluster primary with two workers, each a TLS
// server on the one shared port. node's cluster hands the first worker's
// _getServerData() to the others' _setServerData(), so every worker issues
// and accepts the same tickets. The primary connects until one worker has
// given a session and another has taken a connection, resumes that session
// on the other worker, and prints one JSON line: the workers' ticket keys
// and whether the resumption worked. Honours TLSWRAP_TEST_BUILTIN (and
// TLSWRAP_TRANSPORT in the workers) through common.js.

const cluster = require('node:cluster');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions } = require('../common');

const version = process.argv[2] || 'TLSv1.3';

if (cluster.isPrimary) {
  cluster.schedulingPolicy = cluster.SCHED_RR;
  primary().catch((err) => {
    process.stdout.write(`${JSON.stringify({ error: String(err && err.stack) })}\n`);
    process.exitCode = 1;
  }).finally(() => {
    for (const w of Object.values(cluster.workers)) w.kill();
  });
} else {
  const server = tlswrap.createServer(serverOptions({ minVersion: version, maxVersion: version }), (sock) => {
    sock.on('error', () => {});
    sock.end(String(cluster.worker.id));
  });
  server.on('tlsClientError', () => {});
  server.listen(0, '127.0.0.1', () => {
    process.send({ port: server.address().port, keys: server.getTicketKeys().toString('hex') });
  });
}

// One connection: which worker answered, whether it resumed, its session.
async function connectOnce(port, session) {
  const client = tlswrap.connect(clientOptions(port, { session, minVersion: version, maxVersion: version }));
  let last = null;
  client.on('session', (s) => { last = s; });
  let text = '';
  client.setEncoding('utf8');
  client.on('data', (d) => { text += d; });
  // The reply and its end may come in the same read as the handshake's end.
  const ended = once(client, 'end');
  await once(client, 'secureConnect');
  const reused = client.isSessionReused();
  await ended;
  client.destroy();
  return { worker: Number(text), reused, session: last };
}

async function primary() {
  const workers = [cluster.fork(), cluster.fork()];
  const ready = await Promise.all(workers.map((w) => once(w, 'message').then(([m]) => m)));
  const port = ready[0].port;
  // Fresh connections until two different workers have answered (round
  // robin makes this the second, but nothing here relies on it).
  const first = await connectOnce(port);
  let other = null;
  for (let i = 0; i < 20 && other === null; i++) {
    const c = await connectOnce(port);
    if (c.worker !== first.worker) other = c.worker;
  }
  const result = { samePort: ready[0].port === ready[1].port, sameKeys: ready[0].keys === ready[1].keys };
  result.twoWorkers = other !== null;
  result.gotSession = first.session !== null;
  // Resume first's session until the other worker takes it.
  for (let i = 0; i < 20 && result.resumedOnOther === undefined; i++) {
    const c = await connectOnce(port, first.session);
    if (c.worker !== first.worker) result.resumedOnOther = c.reused;
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
