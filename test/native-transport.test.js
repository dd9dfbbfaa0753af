'use strict';

// The native transport: TCP connections (accepted, connected, upgraded) move
// onto the engine's own libuv handle; other Duplexes stay on the generic
// one. These tests also run with TLSWRAP_TRANSPORT=js (npm test runs both),
// where every connection is generic and the same behaviour must hold.

const assert = require('node:assert');
const crypto = require('node:crypto');
const net = require('node:net');
const path = require('node:path');
const { PassThrough, Duplex } = require('node:stream');
const util = require('node:util');
const { execFile } = require('node:child_process');
const { once } = require('node:events');
const {
  builtin, fixtures, tlswrap, serverOptions, clientOptions, listen, closeServer, pattern, makePair,
  sanitized,
} = require('./common');

const expectNative = !builtin && process.env.TLSWRAP_TRANSPORT !== 'js';

describe(`transport selection (${expectNative ? 'native' : 'generic'} expected for TCP)`, function () {
  before(function () {
    if (builtin) this.skip();
  });

  it('accepted and connected TCP sockets are taken over', async function () {
    const p = await makePair();
    try {
      assert.strictEqual(p.client._native, expectNative);
      assert.strictEqual(p.sock._native, expectNative);
      // The net.Socket surface still answers from the connection.
      assert.strictEqual(p.client.remotePort, p.port);
      assert.strictEqual(p.sock.remotePort, p.client.localPort);
      assert.strictEqual(p.client.remoteAddress, '127.0.0.1');
      assert.deepStrictEqual(p.client.address(), { address: '127.0.0.1', family: 'IPv4', port: p.client.localPort });
      assert.strictEqual(p.client.setNoDelay(true), p.client);
      assert.strictEqual(p.client.setKeepAlive(true, 1000), p.client);
    } finally {
      p.client.destroy();
      p.sock.destroy();
      await closeServer(p.server);
    }
  });

  it('an upgraded connected net.Socket is taken over; a non-TCP Duplex is not', async function () {
    const server = tlswrap.createServer(serverOptions(), (s) => s.end('over tcp'));
    const port = await listen(server);
    try {
      const raw = net.connect(port, '127.0.0.1');
      await once(raw, 'connect');
      const client = tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca });
      assert.strictEqual(client._native, expectNative);
      const chunks = [];
      client.on('data', (d) => chunks.push(d));
      await once(client, 'end');
      assert.strictEqual(Buffer.concat(chunks).toString(), 'over tcp');
      client.destroy();
    } finally {
      await closeServer(server);
    }

    // Two PassThroughs crossed: a Duplex with no fd at all.
    const aToB = new PassThrough();
    const bToA = new PassThrough();
    const a = new Duplex({ read() {}, write(c, e, cb) { aToB.write(c, cb); } });
    const b = new Duplex({ read() {}, write(c, e, cb) { bToA.write(c, cb); } });
    aToB.on('data', (c) => b.push(c));
    bToA.on('data', (c) => a.push(c));
    const sside = new tlswrap.TLSSocket(b, { isServer: true, secureContext: tlswrap.createSecureContext(serverOptions()) });
    const cside = tlswrap.connect({ socket: a, servername: 'localhost', ca: fixtures.ca });
    await once(cside, 'secureConnect');
    assert.strictEqual(cside._native, false);
    assert.strictEqual(sside._native, false);
    cside.destroy();
    sside.destroy();
  });
});

describe('connection lifetime over TCP', function () {
  it('server.close() waits for open connections; getConnections() counts them', async function () {
    const p = await makePair();
    const count = await new Promise((resolve, reject) => {
      p.server.getConnections((err, n) => (err ? reject(err) : resolve(n)));
    });
    assert.strictEqual(count, 1);
    let closed = false;
    const serverClosed = new Promise((resolve) => p.server.close(() => { closed = true; resolve(); }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.strictEqual(closed, false, 'server closed while a connection was open');
    p.client.end();
    p.sock.end();
    await serverClosed;
    assert.strictEqual(closed, true);
  });

  it('half-close: the client ends, the allowHalfOpen server still answers, then ends', async function () {
    const p = await makePair({ allowHalfOpen: true });
    try {
      const request = pattern(100 * 1024, 1);
      const reply = pattern(300 * 1024, 2);
      const got = [];
      p.sock.on('data', (d) => got.push(d));
      const clientGot = [];
      p.client.on('data', (d) => clientGot.push(d));
      const serverEnd = once(p.sock, 'end');
      p.client.end(request);
      await serverEnd;
      assert.ok(Buffer.concat(got).equals(request), 'request differs');
      // Our side is still writable after the peer's end.
      assert.strictEqual(p.sock.writable, true);
      const clientEnd = once(p.client, 'end');
      p.sock.end(reply);
      await clientEnd;
      assert.ok(Buffer.concat(clientGot).equals(reply), 'reply differs');
    } finally {
      p.client.destroy();
      p.sock.destroy();
      await closeServer(p.server);
    }
  });

  it('128 MiB to a slow reader: nothing lost, memory bounded by backpressure', async function () {
    this.timeout(60000);
    const p = await makePair();
    try {
      const chunk = pattern(1024 * 1024, 3);
      const total = 128;
      const expected = crypto.createHash('sha256');
      for (let i = 0; i < total; i++) expected.update(chunk);
      const hash = crypto.createHash('sha256');
      let received = 0;
      let maxRss = 0;
      const done = new Promise((resolve) => {
        p.client.on('data', (d) => {
          hash.update(d);
          received += d.length;
          // Slow: every 4 MiB the reader stops for a moment.
          if (received % (4 * 1024 * 1024) < d.length) {
            p.client.pause();
            setTimeout(() => p.client.resume(), 20);
          }
          maxRss = Math.max(maxRss, process.memoryUsage().rss);
          if (received === total * chunk.length) resolve();
        });
      });
      const rssBefore = process.memoryUsage().rss;
      let maxQueued = 0;
      for (let i = 0; i < total; i++) {
        if (!p.sock.write(chunk)) await once(p.sock, 'drain');
        maxQueued = Math.max(maxQueued, p.sock.writableLength);
      }
      await done;
      assert.strictEqual(hash.digest('hex'), expected.digest('hex'));
      // The writer never had more than a chunk beyond its high-water mark
      // queued, and the process grew by well under what was sent.
      assert.ok(maxQueued <= chunk.length + p.sock.writableHighWaterMark, `queued ${maxQueued}`);
      // (node:tls itself grows by 30-40 MiB here: garbage not yet collected.
      // On Node 24 tlswrap's 'data' chunks wait longer for V8's collector,
      // the known gap of the README's "Not yet" list: 67-83 MiB measured on
      // the generic transport, so the bound there is 100 MiB, still short of
      // the 128 MiB a writer that ignored backpressure would add.)
      const bound = (Number(process.versions.node.split('.')[0]) >= 24 ? 100 : 64) * 1024 * 1024;
      if (!sanitized) assert.ok(maxRss - rssBefore < bound, `RSS grew by ${((maxRss - rssBefore) / 1048576).toFixed(1)} MiB`);
    } finally {
      p.client.destroy();
      p.sock.destroy();
      await closeServer(p.server);
    }
  });

  it('500 concurrent connections each get their own answer', async function () {
    this.timeout(60000);
    const server = tlswrap.createServer(serverOptions(), (s) => {
      s.once('data', (d) => s.end(`echo:${d}`));
    });
    const port = await listen(server);
    try {
      const n = 500;
      const clients = [];
      for (let i = 0; i < n; i++) clients.push(tlswrap.connect(clientOptions(port)));
      const answers = await Promise.all(clients.map((c, i) => new Promise((resolve, reject) => {
        const chunks = [];
        c.on('error', reject);
        c.on('secureConnect', () => c.write(String(i)));
        c.on('data', (d) => chunks.push(d));
        c.on('end', () => resolve(Buffer.concat(chunks).toString()));
      })));
      answers.forEach((a, i) => assert.strictEqual(a, `echo:${i}`));
      // The server's count goes back to 0 once every connection is gone
      // (`count <= n` could never fail: there were only n).
      for (const c of clients) c.destroy();
      const count = () => new Promise((resolve) => server.getConnections((e, c) => resolve(c)));
      let left = await count();
      for (let i = 0; i < 250 && left !== 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        left = await count();
      }
      assert.strictEqual(left, 0, 'server.getConnections() still counts closed connections');
    } finally {
      await closeServer(server);
    }
  });

  it('a peer that resets the connection: ECONNRESET as net reports it', async function () {
    // A plain TCP server that answers the ClientHello with a reset.
    const server = net.createServer((s) => s.once('data', () => s.resetAndDestroy()));
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      // 'close' follows 'error' within the same tick queue: listen for both now.
      const closed = new Promise((resolve) => client.once('close', resolve));
      const [err] = await once(client, 'error');
      assert.strictEqual(err.code, 'ECONNRESET');
      assert.strictEqual(err.syscall, 'read');
      assert.match(err.message, /ECONNRESET/);
      await closed;
    } finally {
      await closeServer(server);
    }
  });

  for (const how of ['exit', 'terminate']) {
    it(`a worker thread ${how === 'exit' ? 'calling process.exit()' : 'terminated'} with connections open ends cleanly`, async function () {
      if (builtin) this.skip();
      const script = path.join(__dirname, 'child', 'worker-exit.js');
      const { code, stdout } = await new Promise((resolve) => {
        execFile(process.execPath, [script, how], { timeout: 15000 }, (err, out) => {
          resolve({ code: err ? (err.code ?? err.signal) : 0, stdout: out });
        });
      });
      assert.strictEqual(code, 0, stdout);
      assert.match(stdout, new RegExp(`connected native=${expectNative}`));
      assert.match(stdout, /worker exit (0|1)/);
    });
  }
});

// Each way a connection can fail or be cut short, repeated: every path that
// ends one must close its fd (the duplicate the native transport made, or
// node's) and leave no handle or timer behind. A leak grows with the count.
describe('connections that fail leave nothing behind', function () {
  const fs = require('node:fs');
  const countFds = () => fs.readdirSync('/proc/self/fd').length;
  const ROUNDS = 25;

  // A client of `port` with `extra` options; `hook(client)` may cut it short.
  // Resolves at its 'close'.
  function attempt(port, extra = {}, hook = () => {}) {
    return new Promise((resolve) => {
      const client = tlswrap.connect(clientOptions(port, extra));
      client.on('error', () => {});
      client.on('close', resolve);
      client.resume();
      hook(client);
    });
  }

  const cases = {
    'an untrusted certificate': [{}, (port) => attempt(port, { ca: fixtures.otherCert })],
    'a wrong name': [{}, (port) => attempt(port, { servername: 'nope.example' })],
    'no shared version': [{ minVersion: 'TLSv1.3' }, (port) => attempt(port, { maxVersion: 'TLSv1.2' })],
    'an ALPNCallback that rejects': [{ ALPNCallback: () => undefined }, (port) => attempt(port, { ALPNProtocols: ['x'] })],
    'destroy() at connect': [{}, (port) => attempt(port, {}, (c) => c.on('connect', () => c.destroy()))],
    'destroy(err) at secureConnect (TLS 1.2)': [{}, (port) => attempt(port, { maxVersion: 'TLSv1.2' },
      (c) => c.on('secureConnect', () => c.destroy(new Error('gone'))))],
    'end() at secureConnect': [{}, (port) => attempt(port, {}, (c) => c.on('secureConnect', () => c.end()))],
    'a peer reset after the ClientHello': [{}, async (port) => {
      const raw = net.connect(port, '127.0.0.1');
      await once(raw, 'connect');
      raw.on('error', () => {});
      raw.write(Buffer.from([0x16, 3, 1, 0, 200, 1, 0, 0, 196, 3, 3]));
      setImmediate(() => raw.resetAndDestroy());
      await once(raw, 'close');
    }],
    'a peer FIN mid-handshake': [{}, async (port) => {
      const raw = net.connect(port, '127.0.0.1');
      await once(raw, 'connect');
      raw.on('error', () => {});
      raw.end(Buffer.from([0x16, 3, 1, 0, 200, 1, 0]));
      raw.resume();
      await once(raw, 'close');
    }],
    // Pins tlswrap's: node:tls (20) emits 'tlsClientError' at the timeout but
    // leaves the connection open (skipped under TLSWRAP_TEST_BUILTIN).
    'handshakeTimeout': [{ handshakeTimeout: 20 }, async (port) => {
      const raw = net.connect(port, '127.0.0.1');
      raw.on('error', () => {});
      raw.resume();
      await once(raw, 'close');
    }],
    'an upgraded net.Socket destroyed at once': [{}, async (port) => {
      const raw = net.connect(port, '127.0.0.1');
      await once(raw, 'connect');
      const client = new tlswrap.TLSSocket(raw, {});
      client.on('error', () => {});
      raw.destroy();
      await once(client, 'close');
    }],
  };

  for (const [name, [serverExtra, run]] of Object.entries(cases)) {
    it(`${name}: ${ROUNDS} times, the fd count and active resources return to where they were`, async function () {
      if (!fs.existsSync('/proc/self/fd') || (builtin && name === 'handshakeTimeout')) this.skip();
      const server = tlswrap.createServer(serverOptions(serverExtra), (s) => { s.on('error', () => {}); s.end('hi'); });
      server.on('tlsClientError', () => {});
      const port = await listen(server);
      try {
        await run(port); // warms up what a first connection sets up once
        await new Promise((resolve) => setTimeout(resolve, 20));
        const fds = countFds();
        const activeResources = () => process.getActiveResourcesInfo().filter((r) => r !== 'Timeout').sort();
        const resources = activeResources();
        for (let i = 0; i < ROUNDS; i++) await run(port);
        // The server's side of the last ones closes a little later, and a
        // TLS socket's 'close' comes from an immediate after its TCP
        // socket's: a timer can fire between the two.
        const deadline = Date.now() + 2000;
        let connections;
        do {
          await new Promise((resolve) => setTimeout(resolve, 20));
          connections = await new Promise((resolve, reject) => {
            server.getConnections((err, n) => (err ? reject(err) : resolve(n)));
          });
        } while ((connections > 0 || countFds() > fds + 2 ||
                  !util.isDeepStrictEqual(activeResources(), resources)) && Date.now() < deadline);
        assert.strictEqual(connections, 0, 'the server still counts connections');
        assert.ok(countFds() <= fds + 2, `fds: ${fds} before, ${countFds()} after ${ROUNDS} rounds`);
        assert.deepStrictEqual(activeResources(), resources);
      } finally {
        await closeServer(server);
      }
    });
  }
});
