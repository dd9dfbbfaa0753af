'use strict';

// New TLS connections per second with full handshakes (or, with resume=1,
// resumed ones), one measurement per process.
//
//   node benchmark/handshake.js [impl=tlswrap] [tlsVersion=TLSv1.3]
//     [concurrency=8] [dur=5] [cipher=AES-256-GCM] [warmup=0.5] [resume=0]
//     [cache=0] [https=0] [key=rsa] [groups=] [conns=0] [split=0]
//
// Server and client in this one process on 127.0.0.1, same impl both ends.
// split=1 runs the server in a child process instead: the CPU of each side
// is then reported on its own (clientCpuMsPerConn, serverCpuMsPerConn), as a
// client that only connects (a proxy to its upstreams) pays it.
// `concurrency` connections are kept in flight: each one connects, completes
// the handshake, the server sends one byte and ends, the client reads it and
// the connection closes; then the next one starts. A connection counts when
// the client sees it close, so the server's side of the handshake and the
// teardown are inside the measurement too (counting at the client's
// 'secureConnect' would let a TLS 1.3 client finish before the server has).
//
// resume=0: no resumption: the server turns tickets off and has no session
// cache listeners, the client never passes `session`; every connection is
// checked with isSessionReused() and the run fails if one was resumed.
// resume=1: the server issues tickets, and every connection offers the latest
// session any earlier one received (the same code for both impls, so the
// difference is the engines'); a connection that offered one and was not
// resumed fails the run.
// cache=1 (impl=tlswrap, resume=1): the client resumes through
// connect({ sessionCache }) instead of passing `session` by hand: what a
// tlswrap program does, against the best a node:tls program can do.
// https=1: each connection is one HTTPS GET on a fresh connection (node:https
// or tlswrap/https, the server answers one byte), through `agent: false`
// (resume=0: a new Agent each time, so no session) or one Agent with
// keepAlive off that resumes its cached sessions (resume=1). The server issues
// tickets in both.
//
// key=rsa: the server has an RSA-2048 key; key=p256: an ECDSA P-256 key
// (cheaper to sign with, so resumption saves less).
//
// groups=X25519 (any `ecdhCurve` value) sets the key exchange groups of both
// ends; empty keeps the implementation's default (on Node 24, the hybrid
// X25519MLKEM768, which every TLS 1.3 handshake does, resumed or not).
//
// Timing as in throughput-s2c: the window opens `warmup` seconds after the
// first completed connection and lasts `dur` seconds. Prints one JSON line.
// conns=N (N > 0) instead makes exactly N connections, untimed, and prints
// how many: for handshake-instructions.js, which runs this under valgrind.

const { fork } = require('node:child_process');
const { constants: cryptoConstants } = require('node:crypto');
const common = require('./common.js');

const { opts, tls } = common.setup({
  impl: 'tlswrap',
  tlsVersion: 'TLSv1.3',
  concurrency: 8,
  dur: 5,
  cipher: 'AES-256-GCM',
  warmup: 0.5,
  resume: 0,
  cache: 0,
  https: 0,
  key: 'rsa',
  groups: '',
  conns: 0,
  split: 0,
  role: '',
}, (o) => {
  common.checkInt(o, 'concurrency', 1);
  common.checkInt(o, 'resume', 0, 1);
  common.checkInt(o, 'cache', 0, 1);
  common.checkInt(o, 'https', 0, 1);
  common.checkInt(o, 'conns', 0);
  common.checkInt(o, 'split', 0, 1);
  if (o.split && o.conns) throw new Error('split=1 is for timed runs (conns=0)');
  if (o.cache && (o.impl !== 'tlswrap' || !o.resume || o.https)) {
    throw new Error('cache=1 needs impl=tlswrap and resume=1 (https=1 resumes through the Agent anyway)');
  }
  if (!(o.dur > 0) || !(o.warmup >= 0)) throw new Error('dur must be > 0 and warmup >= 0');
});

const monitor = common.createMonitor();
const { server: serverOpts, client: clientOpts } = common.tlsOptions(opts.tlsVersion, opts.cipher, opts.key);
// SSL_OP_NO_TICKET: no TLS 1.2 tickets; in TLS 1.3 it makes tickets stateful,
// which need a server-side cache that does not exist here, so nothing can be
// resumed either way (and the client never offers a session anyway).
if (opts.groups) {
  serverOpts.ecdhCurve = opts.groups;
  clientOpts.ecdhCurve = opts.groups;
}
if (!opts.resume && !opts.https) serverOpts.secureOptions = cryptoConstants.SSL_OP_NO_TICKET;
let session; // resume=1: the latest session received
const sessionCache = opts.cache ? new tls.SessionCache() : undefined;
const https = opts.https ? common.loadHttps(opts.impl) : undefined;
// https=1, resume=1: the one Agent, which resumes its cached sessions.
const agent = opts.https && opts.resume ? new https.Agent({ keepAlive: false }) : false;

let finished = false; // after this, errors are teardown noise, not failures
const serverSockets = new Set();
let cipherSuite; // as negotiated (Bun's client ignores TLS 1.3 `ciphers`)
// The key exchange group: Node 24 (OpenSSL 3.5) offers X25519MLKEM768 first,
// Node 20 X25519, which costs differently. Bun's getEphemeralKeyInfo() is
// empty, so there it is unknown.
let group;

function noteCipher(socket) {
  if (cipherSuite || typeof socket.getCipher !== 'function') return;
  const c = socket.getCipher();
  cipherSuite = c && (c.standardName || c.name);
  const k = typeof socket.getEphemeralKeyInfo === 'function' ? socket.getEphemeralKeyInfo() : null;
  group = (k && k.name) || undefined;
}

function onRequest(req, res) {
  res.end('k');
}

// role=server: the child of a split=1 run, which serves until told to stop.
const serves = opts.role === 'server' || !opts.split;
const server = !serves ? null : opts.https ? https.createServer(serverOpts, onRequest) : tls.createServer(serverOpts, (socket) => {
  serverSockets.add(socket);
  socket.on('close', () => serverSockets.delete(socket));
  socket.on('error', (err) => {
    if (!finished) common.fail(err);
  });
  // One byte so the client has proof the server finished its handshake.
  socket.end('k');
});
if (server !== null) {
  if (opts.https) {
    server.on('secureConnection', (socket) => {
      serverSockets.add(socket);
      socket.on('close', () => serverSockets.delete(socket));
    });
  }
  server.on('tlsClientError', (err) => {
    if (!finished) common.fail(err);
  });
  server.on('error', (err) => common.fail(err));
}

let completed = 0;
let startCount;
let startTime;
let started = false;
const clients = new Set();

// One connection is done: count it and start the next.
function onDone(port) {
  if (finished) return;
  completed++;
  if (opts.conns > 0) {
    if (completed === opts.conns) endCounted();
    else if (completed + clients.size < opts.conns) connectOne(port);
    return;
  }
  if (!started) {
    started = true;
    clearTimeout(noConnTimer);
    setTimeout(begin, opts.warmup * 1000);
  }
  connectOne(port);
}

function checkConnection(socket, resume) {
  // Only from the kind of connection measured: a resumed TLS 1.2 handshake
  // has no key exchange, and node:tls's first connection is a full one.
  if (resume === Boolean(opts.resume)) noteCipher(socket);
  if (socket.isSessionReused() !== resume) {
    common.fail(new Error(resume ? 'session was not resumed' : 'session was resumed; expected full handshakes'));
  }
  const protocol = socket.getProtocol();
  if (protocol !== opts.tlsVersion) {
    common.fail(new Error(`negotiated ${protocol}, asked for ${opts.tlsVersion}`));
  }
}

// The first `concurrency` connections start before any session exists.
let opened = 0;

function requestOne(port) {
  if (finished) return;
  const check = !agent || opened++ >= opts.concurrency;
  const req = https.get({ ...clientOpts, port, path: '/', agent }, (res) => {
    const socket = res.socket;
    clients.add(socket);
    if (check) checkConnection(socket, !!agent);
    let body = '';
    res.setEncoding('latin1');
    res.on('data', (d) => {
      body += d;
    });
    res.on('end', () => {
      if (body !== 'k') common.fail(new Error(`unexpected response body ${JSON.stringify(body)}`));
      const next = () => {
        clients.delete(socket);
        onDone(port);
      };
      if (socket.destroyed) next();
      else socket.once('close', next);
    });
  });
  req.on('error', (err) => {
    if (!finished) common.fail(err);
  });
}

function connectOne(port) {
  if (opts.https) {
    requestOne(port);
    return;
  }
  if (finished) return;
  const offered = opts.resume ? session : undefined;
  if (sessionCache) {
    const check = opened++ >= opts.concurrency;
    const client = tls.connect({ ...clientOpts, port, sessionCache }, () => {
      if (check) checkConnection(client, true);
    });
    track(client, port);
    return;
  }
  const client = tls.connect({ ...clientOpts, port, session: offered }, () => {
    checkConnection(client, offered !== undefined);
  });
  if (opts.resume) {
    client.on('session', (s) => {
      session = s;
    });
  }
  track(client, port);
}

function track(client, port) {
  clients.add(client);
  let gotByte = false;
  client.on('data', () => {
    gotByte = true;
  });
  client.on('error', (err) => {
    if (!finished) common.fail(err);
  });
  client.on('close', () => {
    clients.delete(client);
    if (finished) return;
    if (!gotByte) common.fail(new Error('connection closed before the server byte arrived'));
    onDone(port);
  });
}

// If nothing completes, fail instead of hanging the caller (valgrind, with
// conns=N, is some 50 times slower).
const noConnSeconds = opts.conns > 0 ? 600 : 15;
const noConnTimer = setTimeout(() => common.fail(new Error(`no connection completed within ${noConnSeconds} s`)),
                               noConnSeconds * 1000);

function startClients(port) {
  for (let i = 0; i < Math.min(opts.concurrency, opts.conns || Infinity); i++) connectOne(port);
}

// split=1: the server child answers 'cpu' with its CPU time so far, and
// exits on 'stop'.
let serverChild = null;
let serverCpu = null; // the child's at begin(), then the difference at end()
function askServerCpu() {
  return new Promise((resolve) => {
    serverChild.once('message', (m) => resolve(m.cpu.user + m.cpu.system));
    serverChild.send('cpu');
  });
}

if (opts.role === 'server') {
  clearTimeout(noConnTimer);
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (m) => {
    if (m === 'cpu') {
      process.send({ cpu: process.cpuUsage() });
    } else if (m === 'stop') {
      finished = true;
      process.disconnect();
      tearDown();
    }
  });
} else if (opts.split) {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('split=') && !a.startsWith('role='));
  serverChild = fork(__filename, [...args, 'role=server'], { execArgv: process.execArgv });
  serverChild.on('exit', (code) => {
    if (!finished) common.fail(new Error(`the server process exited (${code}) before the end`));
  });
  serverChild.once('message', (m) => startClients(m.port));
} else {
  server.listen(0, '127.0.0.1', () => startClients(server.address().port));
}

function endCounted() {
  clearTimeout(noConnTimer);
  finished = true;
  process.stdout.write(`${JSON.stringify({ bench: 'handshake', impl: opts.impl, conns: completed, cipherSuite, group })}\n`);
  tearDown();
}

function begin() {
  startCount = completed;
  startTime = process.hrtime.bigint();
  monitor.begin();
  if (serverChild !== null) {
    askServerCpu().then((cpu) => {
      serverCpu = cpu;
    });
  }
  setTimeout(serverChild === null ? end : endSplit, opts.dur * 1000);
}

// The client's numbers are taken at once; the server's CPU comes by IPC.
function endSplit() {
  const stop = end(false);
  askServerCpu().then((cpu) => {
    const { result } = stop;
    const perConnMs = (us) => common.round(us / 1000 / result.conns, 3);
    result.clientCpuMsPerConn = perConnMs(result.cpuUser * 1e6 + result.cpuSystem * 1e6);
    result.serverCpuMsPerConn = perConnMs(cpu - serverCpu);
    result.split = 1;
    process.stdout.write(`${JSON.stringify(result)}\n`);
    // The server stops first: the clients' resets would reach it as errors.
    serverChild.once('exit', tearDown);
    serverChild.send('stop');
  });
}

function end(print = true) {
  const elapsed = Number(process.hrtime.bigint() - startTime) / 1e9;
  const conns = completed - startCount;
  const res = monitor.end();
  finished = true;

  const result = {
    bench: 'handshake',
    impl: opts.impl,
    tlsVersion: opts.tlsVersion,
    concurrency: opts.concurrency,
    dur: opts.dur,
    cipher: opts.cipher,
    resume: opts.resume,
    cache: opts.cache,
    https: opts.https,
    key: opts.key,
    connsPerSec: common.round(conns / elapsed, 1),
    conns,
    elapsed: common.round(elapsed, 3),
    ...res,
    cipherSuite,
    group,
    ...common.runtimeInfo(),
  };
  if (!print) return { result };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  tearDown();
  return { result };
}

// So the process exits by itself; see throughput-s2c.js.
function tearDown() {
  if (agent) agent.destroy();
  for (const c of clients) c.destroy();
  for (const s of serverSockets) s.destroy();
  if (server !== null) server.close();
  setTimeout(() => {
    process.stderr.write('warning: process did not exit by itself within 2 s of the result\n');
    process.exit(3);
  }, 2000).unref();
}
