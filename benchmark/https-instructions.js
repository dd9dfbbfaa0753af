'use strict';

// Instructions an HTTPS server executes per keep-alive request, node:https
// against tlswrap/https, counted by valgrind (callgrind): a measure that the
// machine's noise does not move, for cells where requests/s differ by less
// than their run-to-run spread (the h1 rows of `compare.js --https`).
//
//   node benchmark/https-instructions.js [size=1024] [concurrency=1]
//     [requests=10000] [impls=builtin,tlswrap] [cachesim=0] [proto=h1]
//
// proto=h2: node:http2's and tlswrap/http2's secure servers instead, and
// `concurrency` streams in flight on one session from a node:http2 client.
//
// For each impl, the server runs twice under callgrind (Linux, valgrind
// installed), serving `requests` and then 3 x `requests` requests of a
// `size`-byte body to a node:https client in a child process that valgrind
// does not follow (`concurrency` keep-alive connections, one request in
// flight on each). The difference of the two totals over the extra requests
// cancels start-up, module loading and the first JIT tiers; what is left is
// the steady per-request cost, JIT compilation included, on every thread of
// the server process. Kernel work (system calls, TCP) is not counted. About
// 3 minutes per impl at the defaults. Prints one JSON line per impl, then
// one with the ratio tlswrap / builtin.
//
// cachesim=1 also runs valgrind's cache model (I1, D1 and last-level caches
// of this machine's geometry, about twice as slow) and prints misses per
// request and an estimate of cycles per request, callgrind's usual weighting:
// instructions + 10 x L1 misses + 100 x last-level misses. Equal instruction
// counts can hide different cache behaviour (the addon's code is cold at each
// request); this counts it without the machine's timing noise, though the
// weights are a model, not this CPU's penalties.
//
// role=server and role=client are the two halves, started by this script;
// `role=server impl=<impl> requests=<n>` alone serves n requests, untimed.

const { fork } = require('node:child_process');
const common = require('./common.js');

const { opts } = common.setup({
  role: 'driver',
  impl: 'tlswrap',
  impls: 'builtin,tlswrap',
  size: 1024,
  concurrency: 1,
  requests: 10000,
  port: 0,
  cachesim: 0,
  proto: 'h1',
}, (o) => {
  if (o.proto !== 'h1' && o.proto !== 'h2') throw new Error(`proto must be h1 or h2, got "${o.proto}"`);
  common.checkInt(o, 'size', 0);
  common.checkInt(o, 'concurrency', 1);
  common.checkInt(o, 'requests', 1);
});

const tlsOpts = common.tlsOptions('TLSv1.3', 'AES-256-GCM');

if (opts.role === 'server') runServer();
else if (opts.role === 'client') runClient();
else runDriver();

// Serves until the client child has made its requests, then exits.
function runServer() {
  const body = Buffer.alloc(opts.size, 'b');
  const handler = (req, res) => {
    res.setHeader('content-length', opts.size);
    res.end(body);
  };
  let server;
  if (opts.proto === 'h2') {
    const http2 = opts.impl === 'builtin' ? require('node:http2') : require('../lib/http2.js');
    server = http2.createSecureServer(tlsOpts.server, handler);
  } else {
    const https = opts.impl === 'builtin' ? require('node:https') : require('../lib/https.js');
    server = https.createServer(tlsOpts.server, handler);
  }
  server.listen(0, '127.0.0.1', () => {
    const args = [`role=client`, `port=${server.address().port}`, `requests=${opts.requests}`,
      `concurrency=${opts.concurrency}`, `size=${opts.size}`, `proto=${opts.proto}`];
    const client = fork(__filename, args, { execArgv: [] });
    client.on('exit', (code) => {
      if (code !== 0) process.exitCode = 1;
      else console.log(JSON.stringify({ bench: 'https-instructions', role: 'server', impl: opts.impl, requests: opts.requests }));
      server.close();
      if (typeof server.closeAllConnections === 'function') server.closeAllConnections();
    });
  });
}

// Keeps `concurrency` requests in flight, `requests` in all: `request(cb)`
// makes one and calls cb with its body length; `finish()` after the last.
function drive(request, finish) {
  let started = 0;
  let done = 0;
  const one = () => {
    if (started === opts.requests) return;
    started++;
    request((bytes) => {
      if (bytes !== opts.size) common.fail(new Error(`body of ${bytes} bytes, ${opts.size} expected`));
      if (++done === opts.requests) finish();
      else one();
    });
  };
  for (let i = 0; i < opts.concurrency; i++) one();
}

// Counts a response's body bytes, then calls cb with them.
function countBody(res, cb) {
  let bytes = 0;
  res.on('data', (d) => { bytes += d.length; });
  res.on('end', () => cb(bytes));
}

function runClient() {
  if (opts.proto === 'h2') {
    // Streams on one session.
    const http2 = require('node:http2');
    const session = http2.connect(`https://127.0.0.1:${opts.port}`, tlsOpts.client);
    session.on('error', common.fail);
    drive((cb) => {
      const req = session.request({ ':path': '/' });
      countBody(req, cb);
      req.on('error', common.fail);
    }, () => session.close());
    return;
  }
  const https = require('node:https');
  const agent = new https.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  drive((cb) => {
    const req = https.get({ ...tlsOpts.client, agent, port: opts.port, path: '/' }, (res) => countBody(res, cb));
    req.on('error', common.fail);
  }, () => agent.destroy());
}

// Event totals of one server process under callgrind.
function countEvents(impl, requests) {
  return common.callgrindEvents([__filename, 'role=server', `impl=${impl}`, `requests=${requests}`,
    `size=${opts.size}`, `concurrency=${opts.concurrency}`, `proto=${opts.proto}`], { cachesim: !!opts.cachesim });
}

// callgrind_annotate's and KCachegrind's cycle estimate.
function estimatedCycles(e) {
  return e.Ir + 10 * (e.I1mr + e.D1mr + e.D1mw) + 100 * (e.ILmr + e.DLmr + e.DLmw);
}

function runDriver() {
  common.checkValgrind();
  const perRequest = {};
  const cyclesPerRequest = {};
  const per = (short, long, f) => (f(long) - f(short)) / (2 * opts.requests);
  for (const impl of opts.impls.split(',')) {
    const short = countEvents(impl, opts.requests);
    const long = countEvents(impl, 3 * opts.requests);
    perRequest[impl] = per(short, long, (e) => e.Ir);
    const line = {
      impl, proto: opts.proto, size: opts.size, concurrency: opts.concurrency, requests: opts.requests,
      instructionsPerRequest: Math.round(perRequest[impl]),
    };
    if (opts.cachesim) {
      cyclesPerRequest[impl] = per(short, long, estimatedCycles);
      line.L1MissesPerRequest = Math.round(per(short, long, (e) => e.I1mr + e.D1mr + e.D1mw));
      line.I1MissesPerRequest = Math.round(per(short, long, (e) => e.I1mr));
      line.LLMissesPerRequest = Math.round(per(short, long, (e) => e.ILmr + e.DLmr + e.DLmw));
      line.estimatedCyclesPerRequest = Math.round(cyclesPerRequest[impl]);
    }
    console.log(JSON.stringify({ ...line, ...common.runtimeInfo() }));
  }
  if (perRequest.builtin && perRequest.tlswrap) {
    const ratio = { ratio: 'tlswrap/builtin', instructions: +(perRequest.tlswrap / perRequest.builtin).toFixed(3) };
    if (opts.cachesim) ratio.estimatedCycles = +(cyclesPerRequest.tlswrap / cyclesPerRequest.builtin).toFixed(3);
    console.log(JSON.stringify(ratio));
  }
}
