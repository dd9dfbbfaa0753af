'use strict';

// HTTPS and HTTP/2 servers: requests per second and download MiB/s, one
// measurement per process.
//
//   node benchmark/https.js [impl=tlswrap] [proto=h1] [size=1024]
//     [concurrency=1] [client=node] [tlsVersion=TLSv1.3] [dur=5]
//     [cipher=AES-256-GCM] [warmup=0.5] [loadnode=/path/to/node]
//
// This process runs the server: node:https or tlswrap/https (proto=h1),
// node:http2's or tlswrap/http2's createSecureServer (proto=h2). Every
// response is a 200 with a `size`-byte body (Content-Length set); a body
// over 1 MiB is written in 1 MiB chunks as backpressure allows, so
// size=268435456 is a 256 MiB download. The load comes from https-load.js in
// a child process with its own event loop: `concurrency` keep-alive
// connections with one request in flight each (h1), or `concurrency` streams
// in flight over one session (h2). `client` picks the client library
// (node or tlswrap); it is the same for both servers.
//
// Timing: the child opens the window `warmup` seconds after the first
// response byte and closes it `dur` seconds later. reqPerSec and mibps
// (body bytes) are counted by the child; the server's CPU and GC are for the
// window, peak RSS is the server's over the whole run. Prints one JSON line.

const { fork } = require('node:child_process');
const path = require('node:path');
const common = require('./common.js');

const CHUNK = common.MiB;

const { opts } = common.setup({
  impl: 'tlswrap',
  proto: 'h1',
  size: 1024,
  concurrency: 1,
  client: 'node',
  tlsVersion: 'TLSv1.3',
  dur: 5,
  cipher: 'AES-256-GCM',
  warmup: 0.5,
  loadnode: '',
}, (o) => {
  if (o.proto !== 'h1' && o.proto !== 'h2') throw new Error(`proto must be h1 or h2, got "${o.proto}"`);
  if (o.client !== 'node' && o.client !== 'tlswrap') throw new Error(`client must be node or tlswrap, got "${o.client}"`);
  common.checkInt(o, 'size', 0);
  common.checkInt(o, 'concurrency', 1);
  if (!(o.dur > 0) || !(o.warmup >= 0)) throw new Error('dur must be > 0 and warmup >= 0');
});

const monitor = common.createMonitor();
const { server: serverOpts } = common.tlsOptions(opts.tlsVersion, opts.cipher);
const body = Buffer.alloc(Math.min(opts.size, CHUNK), 'b');
let finished = false; // after this, errors are teardown noise
let cipherSuite; // as the server negotiated it (Bun ignores TLS 1.3 `ciphers`)

function onError(err) {
  if (!finished) common.fail(err);
}

// Writes `size` bytes to an http.ServerResponse or an Http2Stream, then ends.
function sendBody(out) {
  if (opts.size <= CHUNK) {
    out.end(body);
    return;
  }
  let left = opts.size;
  const more = () => {
    while (left > 0) {
      const n = Math.min(left, CHUNK);
      left -= n;
      const ok = out.write(n === CHUNK ? body : body.subarray(0, n));
      if (left === 0) {
        out.end();
        return;
      }
      if (!ok) {
        out.once('drain', more);
        return;
      }
    }
  };
  more();
}

let server;
let child; // the load generator
const sockets = new Set();
if (opts.proto === 'h1') {
  const https = opts.impl === 'builtin' ? require('node:https') : require('tlswrap/https');
  server = https.createServer(serverOpts, (req, res) => {
    res.writeHead(200, { 'content-length': opts.size, 'content-type': 'application/octet-stream' });
    sendBody(res);
  });
  server.on('secureConnection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', onError);
  });
} else {
  const http2 = opts.impl === 'builtin' ? require('node:http2') : require('tlswrap/http2');
  server = http2.createSecureServer(serverOpts);
  server.on('stream', (stream) => {
    stream.on('error', onError);
    stream.respond({ ':status': 200, 'content-length': opts.size, 'content-type': 'application/octet-stream' });
    sendBody(stream);
  });
  server.on('session', (session) => {
    sockets.add(session);
    session.on('close', () => sockets.delete(session));
    session.on('error', onError);
  });
  server.on('sessionError', onError);
}
// Bun's node:https hands out sockets without getCipher(): no cipherSuite there
// (its client is our Node one, which offers only the requested suite).
server.on('secureConnection', (socket) => {
  if (cipherSuite || typeof socket.getCipher !== 'function') return;
  const c = socket.getCipher();
  cipherSuite = c && (c.standardName || c.name);
});
server.on('tlsClientError', onError);
server.on('clientError', onError);
server.on('error', onError);

server.listen(0, '127.0.0.1', () => {
  const cfg = {
    port: server.address().port,
    proto: opts.proto,
    concurrency: opts.concurrency,
    client: opts.client,
    tlsVersion: opts.tlsVersion,
    cipher: opts.cipher,
    dur: opts.dur,
    warmup: opts.warmup,
  };
  // The load generator runs under `loadnode` when given (compare.js --bun
  // passes its node, so a Bun server faces the same Node client as the
  // others), else under this runtime.
  child = fork(path.join(__dirname, 'https-load.js'), [JSON.stringify(cfg)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(opts.loadnode ? { execPath: opts.loadnode } : {}),
  });
  child.on('message', (msg) => {
    if (msg.type === 'begin') monitor.begin();
    else if (msg.type === 'end') end(msg);
  });
  child.on('exit', (code, signal) => {
    if (!finished) common.fail(new Error(`load generator exited (${signal || `code ${code}`}) before its result`));
  });
});

function end(counts) {
  const res = monitor.end();
  finished = true;
  const { requests, bytes, elapsed, clientCpu, connections } = counts;
  // h1 must be measured over keep-alive connections only.
  if (opts.proto === 'h1' && connections !== opts.concurrency) {
    common.fail(new Error(`the client opened ${connections} connections for ${opts.concurrency} in flight`));
  }
  const result = {
    bench: 'https',
    impl: opts.impl,
    proto: opts.proto,
    size: opts.size,
    concurrency: opts.concurrency,
    client: opts.client,
    tlsVersion: opts.tlsVersion,
    dur: opts.dur,
    cipher: opts.cipher,
    reqPerSec: common.round(requests / elapsed, 1),
    mibps: common.round(bytes / common.MiB / elapsed, 1),
    requests,
    bytes,
    elapsed: common.round(elapsed, 3),
    ...res,
    clientCpu: common.round(clientCpu, 3),
    connections,
    cipherSuite,
    ...common.runtimeInfo(),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);

  // Close the server's side first, then let the child go (it exits on
  // disconnect), so this process exits by itself.
  for (const s of sockets) s.destroy();
  child.disconnect();
  server.close();
  setTimeout(() => {
    process.stderr.write('warning: process did not exit by itself within 2 s of the result\n');
    process.exit(3);
  }, 2000).unref();
}
