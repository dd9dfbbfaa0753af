'use strict';

// Soak and load: what a long-running server sees, in one process on
// 127.0.0.1, with the same impl at both ends. Not part of `npm test`.
//
//   npm run soak                       # all three phases, tlswrap
//   node --expose-gc benchmark/soak.js phase=cycles cycles=100000 impl=builtin
//
// phase=cycles   `cycles` times: connect, handshake, 1 KiB each way, destroy,
//                `concurrency` at a time. Open fds and RSS (after GC) are
//                sampled every 10%; it fails if fds grow or RSS grows by 5% or
//                more over the 20% sample. The first 20% is warm-up: malloc's
//                working set (handshake buffers, 64 KiB ciphertext blocks
//                beyond the pool's spares) reaches its high-water mark there,
//                at the same ~97 MiB in runs of 30,000 and 100,000 cycles;
//                a leak would keep growing with the run's length instead.
// phase=idle     `idle` connections open at once, each after a handshake and
//                one byte each way: RSS per connection (both ends counted).
// phase=bulk     `bulk` connections, `bulkConcurrency` at once, each sending
//                `bulkBytes` of seeded random bytes to the server, which
//                answers with a SHA-256 of what it got; every digest must
//                match. The first `bulkConcurrency` all finish their
//                handshakes (256 at a time) before any sends, so that many
//                move data together (peakOpen). Clients run in a child
//                process (idle too): one process could not hold both ends
//                under the fd limit.
// Prints one JSON line per phase; exits non-zero on any failure.

const crypto = require('node:crypto');
const fs = require('node:fs');
const common = require('./common.js');

const { opts, tls } = common.setup({
  impl: 'tlswrap',
  phase: 'all',
  tlsVersion: 'TLSv1.3',
  cipher: 'AES-256-GCM',
  cycles: 100000,
  concurrency: 32,
  idle: 10000,
  bulk: 10000,
  bulkBytes: 1024 * 1024,
  bulkConcurrency: 10000,
  role: 'main',
  port: 0,
}, (o) => {
  if (!['all', 'cycles', 'idle', 'bulk'].includes(o.phase)) throw new Error(`unknown phase ${o.phase}`);
  common.checkInt(o, 'cycles', 10);
  common.checkInt(o, 'concurrency', 1);
  common.checkInt(o, 'idle', 1);
  common.checkInt(o, 'bulk', 1);
  common.checkInt(o, 'bulkBytes', 4);
  if (o.bulkBytes % 4 !== 0) throw new Error('bulkBytes must be a multiple of 4');
  common.checkInt(o, 'bulkConcurrency', 1);
  if (typeof global.gc !== 'function') throw new Error('run with --expose-gc');
});

const { server: serverOpts, client: clientOpts } = common.tlsOptions(opts.tlsVersion, opts.cipher);
const KiB = Buffer.alloc(1024, 'k');

function openFds() {
  return fs.readdirSync('/proc/self/fd').length;
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => resolve(server.address().port));
  });
}

function close(server) {
  return new Promise((resolve) => server.close(() => resolve()));
}

// Runs `count` jobs, `width` at a time.
async function pool(count, width, job) {
  let next = 0;
  async function lane() {
    while (next < count) await job(next++);
  }
  await Promise.all(Array.from({ length: Math.min(width, count) }, lane));
}

// The message a client child sends when it is done; a child that exits
// without one (it failed, and said why on stderr) fails the phase instead
// of leaving it waiting forever.
function childResult(child) {
  return new Promise((resolve, reject) => {
    const onExit = (code, signal) => reject(new Error(`client process exited (${signal || code}) before reporting`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message);
    });
  });
}

// connect -> 1 KiB each way -> destroy; resolves once both ends closed.
function cycle(port) {
  return new Promise((resolve, reject) => {
    const client = tls.connect({ ...clientOpts, port });
    let got = 0;
    client.on('error', reject);
    client.on('data', (chunk) => {
      got += chunk.length;
      if (got === KiB.length) client.destroy();
    });
    client.on('close', () => (got === KiB.length ? resolve() : reject(new Error('short reply'))));
    client.write(KiB);
  });
}

async function phaseCycles() {
  const server = tls.createServer(serverOpts, (socket) => {
    let got = 0;
    socket.on('error', () => {}); // the client destroys as soon as it has its reply
    socket.on('data', (chunk) => {
      got += chunk.length;
      if (got === KiB.length) socket.write(KiB);
    });
  });
  const port = await listen(server);
  const warm = Math.floor(opts.cycles / 10);
  const samples = [];
  const start = process.hrtime.bigint();
  for (let done = 0; done < opts.cycles; done += warm) {
    await pool(Math.min(warm, opts.cycles - done), opts.concurrency, () => cycle(port));
    await new Promise((resolve) => setTimeout(resolve, 100)); // server sides close
    const rss = await common.settledRss();
    samples.push({ cycles: done + warm, fds: openFds(), rss, heap: process.memoryUsage().heapUsed });
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await close(server);
  const base = samples[Math.min(1, samples.length - 1)];
  const last = samples[samples.length - 1];
  const maxRss = Math.max(...samples.slice(2).map((s) => s.rss), base.rss);
  const maxFromFirst = Math.max(...samples.slice(1).map((s) => s.rss), samples[0].rss);
  const result = {
    phase: 'cycles', impl: opts.impl, cycles: opts.cycles, seconds: common.round(seconds, 1),
    perSecond: Math.round(opts.cycles / seconds),
    fds: samples.map((s) => s.fds),
    rssMiB: samples.map((s) => common.round(s.rss / 1048576, 1)),
    // Live JS objects: a leak of sockets or listeners shows here first.
    heapUsedMiB: samples.map((s) => common.round(s.heap / 1048576, 1)),
    rssGrowthPct: common.round((maxRss / base.rss - 1) * 100, 2),
    // The same over the 10% sample, inside the warm-up: for comparison.
    rssGrowthOver10PctSample: common.round((maxFromFirst / samples[0].rss - 1) * 100, 2),
  };
  result.ok = last.fds <= samples[0].fds && result.rssGrowthPct < 5;
  return result;
}

// The clients of phase=idle, in a child process of their own: one process
// cannot hold both ends of 10,000 connections under a 20,000 fd limit.
async function idleClients(port, count) {
  const sockets = [];
  const openOne = () => new Promise((resolve, reject) => {
    const client = tls.connect({ ...clientOpts, port });
    client.on('error', reject);
    client.once('data', () => {
      sockets.push(client);
      resolve();
    });
    client.write('c');
  });
  for (let i = 0; i < 20; i++) await openOne();
  const before = await common.settledRss();
  await pool(count, 50, openOne);
  const after = await common.settledRss();
  process.send({ kibPerConnection: (after - before) / count / 1024 });
  process.once('message', () => process.exit(0));
}

async function phaseIdle() {
  const sockets = [];
  let secure = 0;
  const server = tls.createServer(serverOpts, (socket) => {
    sockets.push(socket);
    secure++;
    socket.on('error', common.fail);
    socket.once('data', () => socket.write('s'));
  });
  const port = await listen(server);
  const before = await common.settledRss();
  const child = require('node:child_process').fork(__filename, [
    `impl=${opts.impl}`, `tlsVersion=${opts.tlsVersion}`, `cipher=${opts.cipher}`,
    `role=idle-client`, `port=${port}`, `idle=${opts.idle}`,
  ], { execArgv: ['--expose-gc'] });
  const client = await childResult(child);
  const after = await common.settledRss();
  child.send('done');
  await require('node:events').once(child, 'exit');
  for (const s of sockets) s.destroy();
  await close(server);
  return {
    phase: 'idle', impl: opts.impl, connections: opts.idle,
    // The server's side also counts its 20 warm-up connections.
    serverKiBPerConnection: common.round((after - before) / (secure - 20 || 1) / 1024, 1),
    clientKiBPerConnection: common.round(client.kibPerConnection, 1),
    ok: secure === opts.idle + 20,
  };
}

// Deterministic bytes per connection (xorshift32 from its seed), made 64 KiB
// at a time so 10,000 connections do not hold their payloads at once.
function* payload(seed, size) {
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let left = size; left > 0;) {
    const piece = Buffer.alloc(Math.min(left, 65536));
    for (let i = 0; i < piece.length; i += 4) {
      x ^= x << 13; x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5; x >>>= 0;
      piece.writeUInt32LE(x, i);
    }
    left -= piece.length;
    yield piece;
  }
}

// The clients of phase=bulk, in a child process (see idleClients): each
// sends its payload, hashing it as it goes, and compares the server's hash.
// peakOpen in the result is how many were open at once.
async function bulkClients(port) {
  let mismatches = 0;
  let open = 0;
  let peakOpen = 0;
  // At most this many handshakes under way at once, as a load generator
  // ramps up: 10,000 SYNs in one burst overflow the listen queue (the
  // kernel then resets some of them) while the server is busy with the
  // handshakes it has. Transfers stay concurrent.
  const handshakes = semaphore(256);
  // The first `bulkConcurrency` connections all finish their handshakes
  // before any sends: that many move their data at the same time.
  const firstWave = Math.min(opts.bulk, opts.bulkConcurrency);
  let secured = 0;
  let go;
  const allSecure = new Promise((resolve) => { go = resolve; });
  await pool(opts.bulk, opts.bulkConcurrency, async (i) => {
    await handshakes.take();
    return bulkOne(i);
  });
  function bulkOne(i) {
    return new Promise((resolve, reject) => {
      const expected = crypto.createHash('sha256');
      const pieces = payload(i + 1, opts.bulkBytes);
      const client = tls.connect({ ...clientOpts, port });
      peakOpen = Math.max(peakOpen, ++open);
      client.once('close', () => open--);
      let slot = true;
      const release = () => {
        if (slot) handshakes.give();
        slot = false;
      };
      client.once('secureConnect', release);
      client.once('close', release);
      const reply = [];
      client.on('error', reject);
      client.on('data', (chunk) => reply.push(chunk));
      client.on('end', () => {
        if (!Buffer.concat(reply).equals(expected.digest())) mismatches++;
        client.destroy();
        resolve();
      });
      const pump = () => {
        for (let next = pieces.next(); !next.done; next = pieces.next()) {
          expected.update(next.value);
          if (!client.write(next.value)) {
            client.once('drain', pump);
            return;
          }
        }
        client.end();
      };
      client.once('secureConnect', () => {
        if (++secured === firstWave) go();
        allSecure.then(pump);
      });
    });
  }
  process.send({ mismatches, peakOpen });
}

function semaphore(width) {
  let free = width;
  const waiting = [];
  return {
    take() {
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    give() {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

async function phaseBulk() {
  let served = 0;
  const server = tls.createServer(serverOpts, (socket) => {
    const hash = crypto.createHash('sha256');
    let got = 0;
    socket.on('error', common.fail);
    socket.on('data', (chunk) => {
      hash.update(chunk);
      got += chunk.length;
    });
    socket.on('end', () => {
      if (got === opts.bulkBytes) served++;
      socket.end(hash.digest());
    });
  });
  // A connection the server drops during its handshake shows up here
  // (and as the client's error).
  server.on('tlsClientError', (err) => process.stderr.write(`server: tlsClientError ${err.code}\n`));
  const port = await listen(server);
  const start = process.hrtime.bigint();
  const child = require('node:child_process').fork(__filename, [
    `impl=${opts.impl}`, `tlsVersion=${opts.tlsVersion}`, `cipher=${opts.cipher}`,
    'role=bulk-client', `port=${port}`, `bulk=${opts.bulk}`, `bulkBytes=${opts.bulkBytes}`,
    `bulkConcurrency=${opts.bulkConcurrency}`,
  ], { execArgv: ['--expose-gc'] });
  const { mismatches, peakOpen } = await childResult(child);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await require('node:events').once(child, 'exit');
  await close(server);
  return {
    phase: 'bulk', impl: opts.impl, connections: opts.bulk, concurrency: opts.bulkConcurrency,
    peakOpen,
    bytesEach: opts.bulkBytes, seconds: common.round(seconds, 1),
    mibPerSecond: common.round(opts.bulk * opts.bulkBytes / 1048576 / seconds, 1),
    mismatches, ok: mismatches === 0 && served === opts.bulk,
  };
}

(async () => {
  if (opts.role === 'idle-client') return idleClients(opts.port, opts.idle);
  if (opts.role === 'bulk-client') return bulkClients(opts.port);
  const phases = { cycles: phaseCycles, idle: phaseIdle, bulk: phaseBulk };
  const run = opts.phase === 'all' ? Object.keys(phases) : [opts.phase];
  let ok = true;
  for (const name of run) {
    const result = await phases[name]();
    console.log(JSON.stringify(result));
    ok = ok && result.ok;
  }
  process.exit(ok ? 0 : 1);
})().catch(common.fail);
