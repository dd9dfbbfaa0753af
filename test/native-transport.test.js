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
        const resources = process.getActiveResourcesInfo().filter((r) => r !== 'Timeout').sort();
        for (let i = 0; i < ROUNDS; i++) await run(port);
        // The server's side of the last ones closes a little later.
        const deadline = Date.now() + 2000;
        let connections;
        do {
          await new Promise((resolve) => setTimeout(resolve, 20));
          connections = await new Promise((resolve, reject) => {
            server.getConnections((err, n) => (err ? reject(err) : resolve(n)));
          });
        } while ((connections > 0 || countFds() > fds + 2) && Date.now() < deadline);
        assert.strictEqual(connections, 0, 'the server still counts connections');
        assert.ok(countFds() <= fds + 2, `fds: ${fds} before, ${countFds()} after ${ROUNDS} rounds`);
        assert.deepStrictEqual(process.getActiveResourcesInfo().filter((r) => r !== 'Timeout').sort(), resources);
      } finally {
        await closeServer(server);
      }
    });
  }
});

describe('STARTTLS over TCP: handing a net.Socket over to TLS', function () {
  // node:tls would put such bytes on the wire, into the middle of the TLS
  // stream; once the engine holds the fd, tlswrap fails the write instead.
  it('a write to the net.Socket underneath fails with EBADF and ends the connection, no crash', async function () {
    if (!expectNative) this.skip();
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.on('error', () => {});
      sock.resume();
    });
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    const client = tlswrap.connect({ socket: raw, ca: fixtures.ca, servername: 'localhost' });
    try {
      await once(client, 'secureConnect');
      const rawError = once(raw, 'error');
      // As any error of the socket underneath (node:tls forwards them), the
      // TLS socket fails with it, before the raw socket's 'close' ends it.
      const clientErrors = [];
      client.on('error', (e) => clientErrors.push(e.code));
      const closed = new Promise((resolve) => client.on('close', resolve));
      raw.write('not TLS');
      const [err] = await rawError;
      assert.strictEqual(err.code, 'EBADF');
      assert.strictEqual(err.syscall, 'write');
      await closed;
      assert.deepStrictEqual(clientErrors, ['EBADF']);
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  // The upgraded servers here answer a client's first data with
  // `secret:<data>` and end: checks that round trip over `client`, once it
  // is connected (`alreadyConnected`: past 'secureConnect' already).
  async function secretReply(client, alreadyConnected = false) {
    if (!alreadyConnected) await once(client, 'secureConnect');
    const chunks = [];
    client.on('data', (d) => chunks.push(d));
    client.write('hello');
    await once(client, 'end');
    assert.strictEqual(Buffer.concat(chunks).toString(), 'secret:hello');
  }

  // A plain TCP connection on loopback, both ends connected, to upgrade.
  // track() adds a socket (errors ignored) to what close() destroys.
  async function plainTcpPair() {
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

  // Resolves with exactly `n` bytes from `raw`; whatever came behind them
  // (the peer's first TLS bytes) is put back for the TLS socket to read.
  function readExactly(raw, n) {
    return new Promise((resolve, reject) => {
      const chunks = [];
      let got = 0;
      const fail = () => reject(new Error(`the connection ended after ${got} of ${n} plaintext bytes`));
      const onData = (d) => {
        chunks.push(d);
        got += d.length;
        if (got < n) return;
        raw.off('data', onData);
        raw.off('end', fail);
        raw.off('close', fail);
        raw.pause();
        const all = Buffer.concat(chunks);
        if (all.length > n) raw.unshift(all.subarray(n));
        resolve(all.subarray(0, n));
      };
      raw.on('data', onData);
      raw.once('end', fail);
      raw.once('close', fail);
    });
  }

  // The writer's bytes are still queued in node's net.Socket when its TLS
  // socket is made: the handover must wait for them, not drop them.
  for (const writer of ['server', 'client']) {
    it(`the ${writer} writes 8 MiB of plaintext and upgrades at once: all of it arrives, then TLS both ways`, async function () {
      this.timeout(30000);
      const plaintext = pattern(8 * 1024 * 1024, 1);
      const toClient = pattern(1024 * 1024, 2);
      const toServer = pattern(1024 * 1024, 3);
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: clientRaw, server: serverRaw } = tcp;
        const upgrade = (side) => tcp.track(side === 'server' ?
          new tlswrap.TLSSocket(serverRaw, { isServer: true, secureContext }) :
          tlswrap.connect({ socket: clientRaw, servername: 'localhost', ca: fixtures.ca }));
        const reader = writer === 'server' ? 'client' : 'server';
        const readerRaw = reader === 'server' ? serverRaw : clientRaw;
        const writerRaw = writer === 'server' ? serverRaw : clientRaw;

        const plainIn = readExactly(readerRaw, plaintext.length);
        assert.strictEqual(writerRaw.write(plaintext), false, 'the plaintext is still queued in node');
        const tls = { [writer]: upgrade(writer) };
        assert.ok((await plainIn).equals(plaintext), 'the plaintext differs');
        tls[reader] = upgrade(reader);

        await Promise.all([once(tls.client, 'secureConnect'), once(tls.server, 'secure')]);
        if (!builtin) for (const side of ['client', 'server']) assert.strictEqual(tls[side]._native, expectNative, side);
        const clientIn = readExactly(tls.client, toClient.length);
        const serverIn = readExactly(tls.server, toServer.length);
        tls.server.write(toClient);
        tls.client.write(toServer);
        assert.ok((await clientIn).equals(toClient), 'server-to-client TLS data differs');
        assert.ok((await serverIn).equals(toServer), 'client-to-server TLS data differs');
      } finally {
        await tcp.close();
      }
    });
  }

  // node:tls sets them on the connection's fd; here they go to the engine's
  // handle, which holds it now.
  it('setNoDelay() and setKeepAlive() on the net.Socket after the takeover reach the connection', async function () {
    if (!expectNative) this.skip();
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext })).resume();
      const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
      await once(client, 'secureConnect');
      assert.strictEqual(client._native, true);
      const calls = [];
      const handle = client._handle;
      const { setNoDelay, setKeepAlive } = handle;
      // (The native methods are read-only properties of the prototype.)
      Object.defineProperty(handle, 'setNoDelay', {
        value(...args) { calls.push(['setNoDelay', ...args]); return setNoDelay.apply(this, args); },
      });
      Object.defineProperty(handle, 'setKeepAlive', {
        value(...args) { calls.push(['setKeepAlive', ...args]); return setKeepAlive.apply(this, args); },
      });
      raw.setNoDelay(true);
      raw.setKeepAlive(true, 7000);
      assert.deepStrictEqual(calls, [['setNoDelay', true], ['setKeepAlive', true, 7]]);
    } finally {
      await tcp.close();
    }
  });

  // The program destroys the net.Socket under its TLS socket: as with
  // node:tls, the TLS socket closes with no error (none to an 'error'
  // listener it may not have), mid-handshake or with a write just made.
  for (const when of ['right after connect()', 'with a write just made']) {
    it(`the net.Socket underneath destroyed ${when}: the TLS socket closes without an error`, async function () {
      if (!builtin && !expectNative) this.skip(); // a Duplex's close fails what it held (ECANCELED)
      // node:tls 24 and 26 fail the socket with EBADF there (their write
      // reaches the closed handle); tlswrap keeps 20 and 22's quiet close.
      if (builtin && when !== 'right after connect()' && Number(process.versions.node.split('.')[0]) >= 24) this.skip();
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext })).resume();
        const client = tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca });
        const errors = [];
        client.on('error', (err) => errors.push(err.code));
        if (when === 'right after connect()') {
          raw.destroy();
        } else {
          await once(client, 'secureConnect');
          client.write('x', () => {});
          raw.destroy();
        }
        const [hadError] = await once(client, 'close');
        assert.deepStrictEqual(errors, []);
        assert.strictEqual(hadError, false);
      } finally {
        await tcp.close();
      }
    });
  }

  // As any stream, the net.Socket under a TLS socket emits 'error' before
  // 'close' when the program destroys it with one; a tls.Server it was
  // handed to reports that error, as node:tls's does.
  it("the net.Socket underneath destroyed with an error: its 'error' before its 'close', the server's tlsClientError",
    async function () {
      const server = tlswrap.createServer(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { server: plain } = tcp;
        const events = [];
        server.on('tlsClientError', (err) => events.push(`tlsClientError ${err.code}`));
        plain.on('error', (err) => events.push(`error ${err.code}`));
        // (once() would reject on the 'error'.)
        const closed = new Promise((resolve) => plain.on('close', resolve));
        plain.on('close', (hadError) => events.push(`close ${hadError}`));
        server.emit('connection', plain);
        plain.destroy(Object.assign(new Error('boom'), { code: 'EBOOM' }));
        await closed;
        await new Promise((resolve) => setImmediate(resolve));
        // (node:tls reports the server's first; tlswrap has ended the
        // connection when destroy() returns, before the socket's own.)
        assert.deepStrictEqual(events.filter((e) => e !== 'tlsClientError EBOOM'), ['error EBOOM', 'close true']);
        assert.ok(events.includes('tlsClientError EBOOM'), events.join());
      } finally {
        await tcp.close();
      }
    });

  // The client's own bytes are still queued in node when it upgrades, and
  // the peer leaves without reading them. node:tls reads the connection
  // meanwhile and sees the FIN: the client fails as any whose peer left
  // mid-handshake, instead of waiting for a drain that never comes.
  it("the peer ends without reading node's queued bytes: ECONNRESET and 'close', not a hang", async function () {
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      plain.pause();
      assert.strictEqual(raw.write(Buffer.alloc(8 * 1024 * 1024)), false, 'the bytes are still queued in node');
      const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
      const events = [];
      client.on('error', (err) => events.push(`error ${err.code}`));
      const closed = new Promise((resolve) => client.on('close', resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
      plain.end();
      let timer;
      const timedOut = new Promise((resolve) => { timer = setTimeout(resolve, 5000, 'timed out'); });
      const outcome = await Promise.race([closed.then((hadError) => `close ${hadError}`), timedOut]);
      clearTimeout(timer);
      events.push(outcome);
      assert.deepStrictEqual(events, ['error ECONNRESET', 'close true']);
    } finally {
      await tcp.close();
    }
  });

  // A client made by hand starts with its first write: a peer that leaves
  // before it ends the socket all the same, as node:tls's, which reads it.
  it("a TLSSocket made by hand whose peer ends before its first write: 'end', then 'close'", async function () {
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      const client = tcp.track(new tlswrap.TLSSocket(raw, {}));
      const events = [];
      client.on('error', (err) => events.push(`error ${err.code}`));
      client.on('end', () => events.push('end'));
      client.resume();
      const closed = new Promise((resolve) => client.on('close', resolve));
      plain.end();
      let timer;
      const timedOut = new Promise((resolve) => { timer = setTimeout(resolve, 5000, 'timed out'); });
      const outcome = await Promise.race([closed.then((hadError) => `close ${hadError}`), timedOut]);
      clearTimeout(timer);
      events.push(outcome);
      assert.deepStrictEqual(events, ['end', 'close false']);
    } finally {
      await tcp.close();
    }
  });

  // resetAndDestroy() on the net.Socket under a TLS socket: as with
  // node:tls, both close without an error. The peer sees the RST node
  // documents (node:tls 20 and 24 send a FIN there, once the peer's bytes
  // are all read: their TCP handle is closing already when its reset()
  // comes). The TLS socket's own resetAndDestroy() refuses, as node:tls's
  // does: its handle is not a TCP one.
  it('resetAndDestroy() on the net.Socket underneath: the peer sees ECONNRESET; on the TLS socket it throws',
    async function () {
      const server = tlswrap.createServer(serverOptions());
      const accepted = once(server, 'secureConnection');
      const port = await listen(server);
      const raw = net.connect(port, '127.0.0.1');
      const client = tlswrap.connect({ socket: raw, ca: fixtures.ca, servername: 'localhost' });
      try {
        await once(client, 'secureConnect');
        const [peer] = await accepted;
        const peerEvents = [];
        peer.on('error', (err) => peerEvents.push(`error ${err.code}`));
        const peerClosed = new Promise((resolve) => peer.on('close', resolve));
        assert.throws(() => client.resetAndDestroy(), { code: 'ERR_INVALID_HANDLE_TYPE' });
        const events = [];
        client.on('error', (err) => events.push(`tls error ${err.code}`));
        raw.on('error', (err) => events.push(`raw error ${err.code}`));
        const closed = Promise.all([
          new Promise((resolve) => client.on('close', (hadError) => resolve(`tls close ${hadError}`))),
          new Promise((resolve) => raw.on('close', (hadError) => resolve(`raw close ${hadError}`))),
        ]);
        assert.strictEqual(raw.resetAndDestroy(), raw);
        assert.strictEqual(raw.destroyed, true);
        events.push(...await closed);
        await peerClosed;
        assert.deepStrictEqual(events, ['tls close false', 'raw close false']);
        if (!builtin) assert.deepStrictEqual(peerEvents, ['error ECONNRESET']);
      } finally {
        client.destroy();
        await closeServer(server);
      }
    });

  // A line-protocol server keeps its plaintext parser on the raw socket,
  // which ignores input once it has upgraded; the client's ClientHello came
  // in the same read as its STARTTLS line. As node:tls, the buffered bytes
  // are read from the raw socket on the next tick, after new TLSSocket()
  // has returned: the parser sees them as upgraded.
  it("bytes buffered before the upgrade reach the raw socket's listeners only after new TLSSocket() returns",
    async function () {
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        let upgraded = null;
        const parserSaw = [];
        plain.on('data', (d) => {
          if (upgraded !== null) {
            parserSaw.push('after upgrade');
            return;
          }
          const at = d.indexOf('STARTTLS\r\n');
          if (at === -1) {
            parserSaw.push('a command');
            plain.write('500 unknown command\r\n');
            return;
          }
          plain.pause();
          const rest = d.subarray(at + 10);
          if (rest.length > 0) plain.unshift(rest);
          upgraded = tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext }));
          upgraded.on('data', (x) => upgraded.end(`secret:${x}`));
        });
        // The ClientHello right behind the line; the server reads both at
        // once.
        plain.pause();
        raw.write('STARTTLS\r\n');
        const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
        await new Promise((resolve) => setTimeout(resolve, 100));
        plain.resume();
        await secretReply(client);
        assert.ok(!parserSaw.includes('a command'), `the parser saw: ${parserSaw}`);
      } finally {
        await tcp.close();
      }
    });

  // Once the TLS socket exists, what the peer sends is TLS: while the
  // takeover waits for node's queued reply, none of it reaches the raw
  // socket's listeners (as node:tls, whose TLS layer reads the handle).
  it("bytes that arrive while node's reply is queued go to TLS, not to the raw socket's listeners", async function () {
    // Through the generic transport, the net.Socket is a Duplex read through
    // its 'data' events, which every listener of it sees (as node:tls's
    // over any Duplex).
    if (!builtin && !expectNative) this.skip();
    this.timeout(30000);
    const reply = pattern(16 * 1024 * 1024, 5);
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      let upgraded = null;
      let afterUpgrade = 0;
      let unshifted = 0;
      plain.on('data', (d) => {
        if (upgraded !== null) {
          afterUpgrade += d.length;
          return;
        }
        // What came behind the line is TLS already (it is read from the raw
        // socket once more, as node:tls reads what it finds buffered).
        plain.pause();
        unshifted = d.length - 10;
        if (unshifted > 0) plain.unshift(d.subarray(10));
        plain.write(reply);
        upgraded = tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext }));
        upgraded.on('data', (x) => upgraded.end(`secret:${x}`));
      });
      raw.write('STARTTLS\r\n');
      // The client reads the reply only after its ClientHello is at the
      // server, which gets it after the line.
      raw.pause();
      await new Promise((resolve) => setTimeout(resolve, 100));
      let skip = reply.length;
      const tail = new Duplex({
        read() {},
        write(chunk, encoding, cb) { raw.write(chunk, cb); },
        final(cb) { raw.end(); cb(); },
      });
      const client = tcp.track(tlswrap.connect({ socket: tail, servername: 'localhost', ca: fixtures.ca }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(plain.writableLength > 0, 'the reply was already written: nothing tested');
      raw.on('data', (d) => {
        if (skip > 0) {
          const n = Math.min(skip, d.length);
          skip -= n;
          d = d.subarray(n);
        }
        if (d.length > 0) tail.push(d);
      });
      raw.on('end', () => tail.push(null));
      raw.resume();
      await secretReply(client);
      assert.strictEqual(afterUpgrade, unshifted, `the raw socket's listener got ${afterUpgrade} bytes after the upgrade`);
    } finally {
      await tcp.close();
    }
  });

  // The client sends its ClientHello right behind its STARTTLS line, so
  // node has read TLS bytes before the server upgrades: the engine gets them.
  for (const how of ['left unread in the buffer', 'read and unshifted']) {
    it(`TLS bytes node read with the plaintext, ${how}, reach the engine`, async function () {
      const line = 'STARTTLS\r\n';
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        raw.write(line);
        const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
        let first;
        if (how === 'left unread in the buffer') {
          plain.pause();
          while (plain.readableLength <= line.length) await new Promise((resolve) => setTimeout(resolve, 5));
          first = plain.read(line.length);
        } else {
          const chunks = [];
          let got = 0;
          await new Promise((resolve) => {
            const onData = (d) => {
              chunks.push(d);
              got += d.length;
              if (got <= line.length) return;
              plain.off('data', onData);
              plain.pause();
              resolve();
            };
            plain.on('data', onData);
          });
          const all = Buffer.concat(chunks);
          first = all.subarray(0, line.length);
          plain.unshift(all.subarray(line.length));
        }
        assert.strictEqual(first.toString(), line);
        const t = tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext }));
        t.on('data', (d) => t.end(`secret:${d}`));
        await secretReply(client);
      } finally {
        await tcp.close();
      }
    });
  }

  // Here the client does not wait for the plaintext: its ClientHello
  // arrives while the server's takeover still waits for node's writes.
  it('TLS bytes that arrive while node still writes the plaintext reach the engine', async function () {
    this.timeout(30000);
    // More than loopback's socket buffers hold while nobody reads.
    const plaintext = pattern(16 * 1024 * 1024, 4);
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: serverRaw } = tcp;
      serverRaw.write(plaintext);
      const t = tcp.track(new tlswrap.TLSSocket(serverRaw, { isServer: true, secureContext }));
      t.on('data', (d) => t.end(`secret:${d}`));

      // The client's TLS runs over a Duplex that hands it what follows the
      // plaintext; it reads nothing until its ClientHello is at the server.
      let skip = plaintext.length;
      const head = [];
      let helloSent;
      const sent = new Promise((resolve) => { helloSent = resolve; });
      const tail = new Duplex({
        read() { if (reading) raw.resume(); },
        write(chunk, encoding, cb) {
          raw.write(chunk, (err) => {
            helloSent();
            cb(err);
          });
        },
        final(cb) { raw.end(); cb(); },
      });
      let reading = false;
      const client = tcp.track(tlswrap.connect({ socket: tail, servername: 'localhost', ca: fixtures.ca }));
      // The ClientHello is in the server's kernel buffer (loopback) once its
      // write is done. (The server's net.Socket no longer reads by then.)
      await sent;
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(serverRaw.writableLength > 0, 'the plaintext was already written: nothing tested');
      reading = true;
      raw.on('data', (d) => {
        if (skip > 0) {
          const n = Math.min(skip, d.length);
          head.push(d.subarray(0, n));
          skip -= n;
          d = d.subarray(n);
        }
        if (d.length > 0 && !tail.push(d)) raw.pause();
      });
      raw.on('end', () => tail.push(null));

      await once(client, 'secureConnect');
      assert.ok(Buffer.concat(head).equals(plaintext), 'the plaintext differs');
      await secretReply(client, true);
    } finally {
      await tcp.close();
    }
  });
});
