'use strict';

// Shared test plumbing: fixtures, the implementation under test, and small
// promise helpers. Every server listens on loopback, port 0.

const fs = require('node:fs');
const path = require('node:path');
const { once } = require('node:events');
const { Duplex } = require('node:stream');

const fixturesDir = path.join(__dirname, 'fixtures');
const fixture = (name) => fs.readFileSync(path.join(fixturesDir, name));

const fixtures = {
  ca: fixture('ca-cert.pem'),
  serverKey: fixture('server-key.pem'),
  serverCert: fixture('server-cert.pem'),
  serverKeyEncrypted: fixture('server-key-encrypted.pem'),
  serverPfx: fixture('server.pfx'),
  otherKey: fixture('other-key.pem'),
  otherCert: fixture('other-cert.pem'),
  clientKey: fixture('client-key.pem'),
  clientCert: fixture('client-cert.pem'),
  selfSignedKey: fixture('selfsigned-key.pem'),
  selfSignedCert: fixture('selfsigned-cert.pem'),
  passphrase: 'sesame',
};

// TLSWRAP_TEST_BUILTIN=1 runs the suite against node:tls itself: a way to
// check that a test asserts what node:tls users rely on (and, for the
// coalescing tests, that it fails where tlswrap's difference is missing).
const builtin = !!process.env.TLSWRAP_TEST_BUILTIN;
const tlswrap = builtin ? require('node:tls') : require('..');

function serverOptions(extra) {
  return { key: fixtures.serverKey, cert: fixtures.serverCert, ...extra };
}

function clientOptions(port, extra) {
  return { host: '127.0.0.1', port, ca: fixtures.ca, servername: 'localhost', ...extra };
}

// Starts `server` on 127.0.0.1 and resolves with its port.
async function listen(server) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server.address().port;
}

function closeServer(server) {
  return new Promise((resolve) => server.close(() => resolve()));
}

// A test's teardown: destroys `sockets` (emptying the array), then stops
// `peer` (a record proxy's close(), an openssl process's stop()), then
// closes `server`. Missing ones are skipped.
async function release(sockets, peer, server) {
  for (const s of sockets.splice(0)) s.destroy();
  if (peer) await (typeof peer.close === 'function' ? peer.close() : peer.stop());
  if (server) await closeServer(server);
}

// Deterministic bytes that do not repeat with any short period, so a lost,
// duplicated or reordered span cannot compare equal. `seed` tells two
// payloads of one test apart.
function pattern(size, seed = 0) {
  const buf = Buffer.alloc(size);
  for (let i = 0; i < size; i++) buf[i] = (i * 31 + seed + (i >>> 8) * 7 + (i >>> 16)) & 0xff;
  return buf;
}

// A server and one client connected to it over loopback, both tlswrap (or
// node:tls with TLSWRAP_TEST_BUILTIN), once both ends are secure.
async function makePair(extraServer = {}, extraClient = {}) {
  const server = tlswrap.createServer(serverOptions(extraServer));
  const serverSide = once(server, 'secureConnection');
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port, extraClient));
  await once(client, 'secureConnect');
  const [sock] = await serverSide;
  return { server, port, client, sock };
}

// A plain TCP connection on loopback, both ends connected, to upgrade
// (STARTTLS). track() adds a socket (errors ignored) to what close()
// destroys.
async function plainTcpPair() {
  const net = require('node:net');
  let onAccepted;
  const accepted = new Promise((resolve) => { onAccepted = resolve; });
  const server = net.createServer((s) => onAccepted(s));
  const port = await listen(server);
  const sockets = [];
  const track = (s) => {
    sockets.push(s);
    s.on('error', () => {});
    return s;
  };
  const client = track(net.connect(port, '127.0.0.1'));
  const serverSide = track(await accepted);
  await once(client, 'connect');
  return {
    client,
    server: serverSide,
    track,
    async close() {
      for (const s of sockets) s.destroy();
      await closeServer(server);
    },
  };
}

// Resolves with everything `stream` emits as 'data' until it has `n` bytes.
function readBytes(stream, n) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let got = 0;
    const onData = (d) => {
      chunks.push(d);
      got += d.length;
      if (got >= n) {
        stream.off('data', onData);
        resolve(Buffer.concat(chunks));
      }
    };
    stream.on('data', onData);
    stream.once('error', reject);
  });
}

// What `promise` resolves with, or `timedOut` if it has not within `ms`: a
// step that hangs fails its test's assertion instead of its timeout.
function orTimeout(promise, ms, timedOut) {
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(resolve, ms, timedOut); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// One HTTP/2 frame: its 9-byte header (length, type, flags, stream id),
// then `payload`, for tests that speak the protocol by hand.
function h2Frame(type, flags, streamId, payload = Buffer.alloc(0)) {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

// The HTTP/2 servers and client sessions of one describe block. `http2`:
// tlswrap/http2 or node:http2. start(options, handler) listens with a secure
// server on loopback; client(port, extra) connects a session that verifies
// it as "localhost"; release() (an afterEach) destroys the sessions, then
// closes the servers. Others made by hand go in `servers` and `sessions`.
function http2Peers(http2) {
  const servers = [];
  const sessions = [];
  return {
    servers,
    sessions,
    async start(options, handler) {
      const server = http2.createSecureServer(serverOptions(options), handler);
      servers.push(server);
      return { server, port: await listen(server) };
    },
    client(port, extra = {}) {
      const session = http2.connect(`https://127.0.0.1:${port}`, { ca: fixtures.ca, servername: 'localhost', ...extra });
      sessions.push(session);
      return session;
    },
    async release() {
      for (const s of sessions.splice(0)) s.destroy();
      for (const s of servers.splice(0)) {
        if (!s.listening) continue;
        if (typeof s.closeAllConnections === 'function') s.closeAllConnections();
        await closeServer(s);
      }
    },
  };
}

// One request on `session`: resolves with the response headers, the body as
// text and the trailers (if any).
function http2Fetch(session, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': '/', ...headers }, { endStream: body === undefined });
    let text = '';
    let trailers = null;
    let responseHeaders = null;
    req.setEncoding('utf8');
    req.on('response', (h) => { responseHeaders = h; });
    req.on('trailers', (t) => { trailers = t; });
    req.on('data', (d) => { text += d; });
    req.on('end', () => resolve({ headers: responseHeaders, text, trailers }));
    req.on('error', reject);
    if (body !== undefined) req.end(body);
  });
}

module.exports = {
  makePair, pattern, builtin, fixtures, fixture, tlswrap, serverOptions, clientOptions, listen, closeServer, release,
  plainTcpPair, readBytes, orTimeout, http2Peers, h2Frame, http2Fetch,
};

// --- TLS record proxy (appended for the record-level tests) ---
// A TCP proxy on 127.0.0.1 in front of 127.0.0.1:targetPort that cuts each
// direction into TLS records (5-byte header: type, version, length) and hands
// every complete record to onRecord(direction, record), direction being
// 'toServer' or 'toClient'. onRecord may return a replacement Buffer (to
// corrupt a record) or nothing (pass it on). All complete records of one
// incoming chunk are forwarded in one write, so a burst stays a burst.
// Resolves with { port, close() }; close() destroys every proxied socket.
async function startRecordProxy(targetPort, onRecord = () => {}) {
  const net = require('node:net');
  const sockets = new Set();
  const pipe = (from, to, direction) => {
    let pending = Buffer.alloc(0);
    from.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      const out = [];
      while (pending.length >= 5) {
        const size = 5 + pending.readUInt16BE(3);
        if (pending.length < size) break;
        const record = Buffer.from(pending.subarray(0, size));
        pending = pending.subarray(size);
        out.push(onRecord(direction, record) || record);
      }
      if (out.length) to.write(Buffer.concat(out));
    });
    from.on('end', () => to.end());
  };
  // Half-open on both legs, so a FIN is passed on as a FIN and the other
  // direction keeps flowing; a reset or error tears both legs down.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ port: targetPort, host: '127.0.0.1', allowHalfOpen: true });
    for (const [s, other] of [[client, upstream], [upstream, client]]) {
      sockets.add(s);
      s.on('error', () => other.destroy());
      s.on('close', () => sockets.delete(s));
    }
    pipe(client, upstream, 'toServer');
    pipe(upstream, client, 'toClient');
  });
  const port = await listen(server);
  return {
    port,
    close() {
      for (const s of sockets) s.destroy();
      return closeServer(server);
    },
  };
}

// TLS record content types, as they appear in the record header's first byte.
const RecordType = { changeCipherSpec: 20, alert: 21, handshake: 22, applicationData: 23 };

module.exports.startRecordProxy = startRecordProxy;
module.exports.RecordType = RecordType;

// Asserts two long strings are equal without a diff of the whole text: the
// message gives the lengths and the first offset where they differ.
function assertSameText(actual, expected, what) {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && actual[i] === expected[i]) i++;
  const at = (s) => JSON.stringify(s.slice(i, i + 24));
  require('node:assert').fail(`${what}: got ${actual.length} chars, expected ${expected.length}; ` +
    `first difference at ${i}: ${at(actual)} instead of ${at(expected)}`);
}

module.exports.assertSameText = assertSameText;

// The environment for real peers the tests start (curl, nginx, Chromium):
// without the sanitizer runtimes that npm run test:asan preloads into node
// (and so into every child). They are not code under test, and some of them
// hang with libasan preloaded (curl --version, Chromium).
const peerEnv = { ...process.env };
for (const name of ['LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS']) delete peerEnv[name];
module.exports.peerEnv = peerEnv;

// The bytes a node:tls client sends first: one complete ClientHello record
// (`extra`: its connect() options).
async function captureClientHello(extra = {}) {
  const net = require('node:net');
  const raw = net.createServer();
  const port = await listen(raw);
  const got = new Promise((resolve) => raw.once('connection', (s) => {
    let buf = Buffer.alloc(0);
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 5 && buf.length >= 5 + buf.readUInt16BE(3)) {
        s.destroy();
        resolve(buf.subarray(0, 5 + buf.readUInt16BE(3)));
      }
    });
  }));
  const client = require('node:tls').connect({ host: '127.0.0.1', port, servername: 'localhost', ...extra });
  client.on('error', () => {});
  const hello = await got;
  client.destroy();
  await closeServer(raw);
  return hello;
}
module.exports.captureClientHello = captureClientHello;

// True under npm run test:asan. ASan holds freed memory in quarantine and
// pads every allocation, so RSS says nothing about our memory there: the
// RSS bounds are checked by the plain runs only.
module.exports.sanitized = /libasan/.test(process.env.LD_PRELOAD || '');

// A Duplex over a TCP socket that passes bytes through both ways: the
// generic transport over real TCP. Tests subclass it to watch or hold what
// goes through (_fromSocket, _socketEnded, _write).
class SocketDuplex extends Duplex {
  constructor(raw) {
    super();
    this.raw = raw;
    raw.on('data', (chunk) => this._fromSocket(chunk));
    raw.on('end', () => this._socketEnded());
    raw.on('error', (err) => this.destroy(err));
  }

  _fromSocket(chunk) {
    this.push(chunk);
  }

  _socketEnded() {
    this.push(null);
  }

  _read() {}

  _write(chunk, encoding, cb) {
    this.raw.write(chunk, cb);
  }

  _final(cb) {
    this.raw.end();
    cb();
  }

  _destroy(err, cb) {
    this.raw.destroy();
    cb(err);
  }
}

module.exports.SocketDuplex = SocketDuplex;

// What a client sent while nothing answered it (`bytes`) is one whole
// handshake record (0x16) holding a ClientHello (0x01), and nothing else.
function assertOneClientHello(bytes) {
  const assert = require('node:assert');
  assert.ok(bytes.length >= 6, `${bytes.length} bytes`);
  const head = bytes.subarray(0, 6).toString('hex');
  assert.deepStrictEqual([bytes[0], bytes[1], bytes[5]], [0x16, 0x03, 0x01], `got ${head}`);
  assert.strictEqual(bytes.length, 5 + bytes.readUInt16BE(3));
}

module.exports.assertOneClientHello = assertOneClientHello;
