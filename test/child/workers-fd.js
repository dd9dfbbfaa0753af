'use strict';

// WORKERS worker threads each serve TLS and connect CONNS clients to the
// other workers' servers, with data flowing both ways. Once every
// connection is up, the main thread terminate()s some workers mid-transfer,
// makes others call process.exit() with their connections open, and lets
// the survivors see their peers vanish before they exit too. The main
// thread then counts its open fds: the same number as before the workers
// started (every socket of every worker closed), and it ends by itself.
// Prints one JSON line: { before, after, exits, errors }.

const fs = require('node:fs');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

const WORKERS = 8;
const CONNS = Number(process.argv[2]) || 100;
const countFds = () => fs.readdirSync('/proc/self/fd').length;

if (isMainThread) {
  main();
} else {
  worker();
}

async function main() {
  // A first worker loads what every worker shares (the addon, node's own
  // lazily made fds), so that `before` counts only what must stay.
  await new Promise((resolve) => {
    const w = new Worker(__filename, { workerData: { warmup: true } });
    w.on('exit', resolve);
  });
  const before = countFds();
  const workers = [];
  const exits = new Array(WORKERS).fill(null);
  const errors = [];
  const ports = [];
  let ready = 0;
  const allExited = [];
  for (let i = 0; i < WORKERS; i++) {
    const w = new Worker(__filename, { workerData: { index: i } });
    workers.push(w);
    w.on('error', (err) => errors.push(`worker ${i}: ${err.stack}`));
    allExited.push(new Promise((resolve) => w.on('exit', (code) => { exits[i] = code; resolve(); })));
    w.on('message', (m) => {
      if (m.port) {
        ports[i] = m.port;
        if (ports.filter(Boolean).length === WORKERS) for (const x of workers) x.postMessage({ ports });
      } else if (m.ready && ++ready === WORKERS) {
        for (const x of workers) x.postMessage({ go: true });
        setTimeout(attack, 200);
      } else if (m.error) {
        errors.push(`worker ${i}: ${m.error}`);
      }
    });
  }
  function attack() {
    // 0-2: terminated mid-transfer; 3-5: process.exit() with connections
    // open; 6-7: survive a while, see resets, then exit.
    for (let i = 0; i < 3; i++) workers[i].terminate();
    for (let i = 3; i < 6; i++) workers[i].postMessage({ exit: true });
    setTimeout(() => { for (let i = 6; i < WORKERS; i++) workers[i].postMessage({ exit: true }); }, 300);
  }
  await Promise.all(allExited);
  // Closing a handle takes a loop turn or two after the worker's exit.
  let after = countFds();
  for (let i = 0; i < 50 && after > before; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    after = countFds();
  }
  process.stdout.write(`${JSON.stringify({ before, after, exits, errors })}\n`);
}

function worker() {
  const { tlswrap, serverOptions, clientOptions } = require('../common');
  if (workerData.warmup) {
    // Load the addon and make one connection, then leave.
    const server = tlswrap.createServer(serverOptions(), (s) => s.end('x'));
    server.listen(0, '127.0.0.1', () => {
      const c = tlswrap.connect(clientOptions(server.address().port));
      c.on('data', () => {});
      c.on('close', () => server.close());
    });
    return;
  }
  const { index } = workerData;
  const chunk = Buffer.alloc(4 * 1024, index);
  // Peers vanish: their resets are expected, anything else is reported.
  const quiet = (sock) => sock.on('error', (err) => {
    if (!/^(ECONNRESET|EPIPE)$/.test(err.code)) parentPort.postMessage({ error: `${err.code} ${err.message}` });
  });
  // Once every connection is up (handshakes are the costly part), each
  // client writes, the server echoes and the client writes again on every
  // echo: every connection has data in flight when the workers go.
  const server = tlswrap.createServer(serverOptions(), (sock) => {
    quiet(sock);
    sock.on('data', (d) => sock.write(d));
  });
  const clients = [];
  server.on('tlsClientError', () => {});
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
  parentPort.on('message', (m) => {
    if (m.exit) process.exit(0);
    if (m.go) for (const c of clients) c.write(chunk);
    if (!m.ports) return;
    let up = 0;
    for (let j = 0; j < CONNS; j++) {
      // Round robin over the other workers.
      const target = (index + 1 + (j % (WORKERS - 1))) % WORKERS;
      const client = tlswrap.connect(clientOptions(m.ports[target]));
      quiet(client);
      clients.push(client);
      client.on('secureConnect', () => {
        if (++up === CONNS) parentPort.postMessage({ ready: true });
      });
      client.on('data', () => client.write(chunk));
    }
  });
}
