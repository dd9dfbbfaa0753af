'use strict';

// The load generator of https.js, run by it as a child process (fork, with
// IPC) so that it never shares the server's event loop or core. Not meant to
// be run by hand: its one argument is the JSON config https.js gives it.
//
// It keeps `concurrency` requests in flight and counts completed requests and
// body bytes. h1: a keep-alive https.Agent with `concurrency` sockets, one
// request in flight on each. h2: one session, `concurrency` streams in flight.
// `client=node` uses node:https / node:http2, `client=tlswrap` uses
// tlswrap/https / tlswrap/http2; either way the same client runs against
// both servers, so only the server differs within a cell.
//
// Messages to the parent: {type: 'begin'} when the timed window opens
// (`warmup` seconds after the first response byte), {type: 'end', ...counts}
// when it closes `dur` seconds later; it exits when the parent disconnects.
// Any error before then ends the child with a message on stderr and a
// non-zero exit code.

const common = require('./common.js');

const cfg = JSON.parse(process.argv[2]);
const { client: clientOpts } = common.tlsOptions(cfg.tlsVersion, cfg.cipher);

let requests = 0; // completed responses
let bytes = 0; // body bytes received
let windowStart = null; // { requests, bytes, t, cpu } at 'begin'
let finished = false;
let started = false;

function firstByte() {
  if (started) return;
  started = true;
  clearTimeout(noDataTimer);
  setTimeout(begin, cfg.warmup * 1000);
}

function begin() {
  windowStart = { requests, bytes, t: process.hrtime.bigint(), cpu: process.cpuUsage() };
  process.send({ type: 'begin' });
  setTimeout(end, cfg.dur * 1000);
}

function end() {
  const elapsed = Number(process.hrtime.bigint() - windowStart.t) / 1e9;
  const cpu = process.cpuUsage(windowStart.cpu);
  finished = true;
  process.send({
    type: 'end',
    requests: requests - windowStart.requests,
    bytes: bytes - windowStart.bytes,
    elapsed,
    clientCpu: (cpu.user + cpu.system) / 1e6,
    connections,
  });
  // Stay connected until the parent has its numbers: exiting now could reset
  // connections the server still counts as live, before the message arrives.
}

function fail(err) {
  if (finished) return;
  common.fail(err);
}

const noDataTimer = setTimeout(() => fail(new Error('load generator: no response within 15 s')), 15000);

let connections = 0; // TLS connections opened (h1: must stay `concurrency`)

function checkSocket(socket) {
  const protocol = socket.getProtocol();
  if (protocol !== cfg.tlsVersion) fail(new Error(`negotiated ${protocol}, asked for ${cfg.tlsVersion}`));
}

function runH1() {
  const https = cfg.client === 'tlswrap' ? require('tlswrap/https') : require('node:https');
  const agent = new https.Agent({ keepAlive: true, maxSockets: cfg.concurrency, maxFreeSockets: cfg.concurrency });
  const options = {
    ...clientOpts, agent, port: cfg.port, path: '/', method: 'GET',
  };
  const seen = new WeakSet();
  function one() {
    if (finished) return;
    const req = https.request(options, (res) => {
      if (res.statusCode !== 200) fail(new Error(`status ${res.statusCode}`));
      res.on('data', (chunk) => {
        bytes += chunk.length;
        firstByte();
      });
      res.on('end', () => {
        requests++;
        one();
      });
      res.on('error', fail);
    });
    req.on('socket', (socket) => {
      if (seen.has(socket)) return;
      seen.add(socket);
      connections++;
      socket.once('secureConnect', () => checkSocket(socket));
    });
    req.on('error', fail);
    req.end();
  }
  for (let i = 0; i < cfg.concurrency; i++) one();
}

function runH2() {
  const http2 = cfg.client === 'tlswrap' ? require('tlswrap/http2') : require('node:http2');
  const session = http2.connect(`https://127.0.0.1:${cfg.port}`, {
    ...clientOpts,
    // Flow-control windows as large as a browser's (Chromium: 6 MiB per
    // stream, 15 MiB per session), so a download is not paced by
    // WINDOW_UPDATE round trips.
    settings: { initialWindowSize: 6 * common.MiB },
  });
  connections++;
  session.on('error', fail);
  session.on('connect', () => {
    session.setLocalWindowSize(15 * common.MiB);
    checkSocket(session.socket);
    if (session.alpnProtocol !== 'h2') fail(new Error(`ALPN ${session.alpnProtocol}, expected h2`));
  });
  function one() {
    if (finished) return;
    const stream = session.request({ ':path': '/' }, { endStream: true });
    stream.on('response', (headers) => {
      if (headers[':status'] !== 200) fail(new Error(`status ${headers[':status']}`));
    });
    stream.on('data', (chunk) => {
      bytes += chunk.length;
      firstByte();
    });
    stream.on('end', () => {
      requests++;
      one();
    });
    stream.on('error', fail);
  }
  for (let i = 0; i < cfg.concurrency; i++) one();
}

process.on('disconnect', () => process.exit(0));
if (cfg.proto === 'h2') runH2();
else runH1();
