'use strict';

// A TLS socket over a net.Socket the program made and passed in
// (connect({ socket }), new TLSSocket(socket)), on either side: what is left
// to that net.Socket once it carries TLS. node:tls reads and writes such a
// socket's handle itself, so the socket's own listeners, its encoding and
// its flow control do not see the ciphertext, and a write is done once the
// kernel has it. These run on both transports (npm test runs the suite with
// TLSWRAP_TRANSPORT=js too, where the engine does not take the socket over).

const assert = require('node:assert');
const { builtin, fixtures, tlswrap, serverOptions, pattern, plainTcpPair, readBytes, orTimeout } = require('./common');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A connected pair of plain TCP sockets; `upgrade` makes the TLS sockets
// over them.
async function tcpPair() {
  const tcp = await plainTcpPair();
  tcp.upgrade = () => {
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const tlsServer = tcp.track(new tlswrap.TLSSocket(tcp.server, { isServer: true, secureContext }));
    const tlsClient = tcp.track(tlswrap.connect({ socket: tcp.client, servername: 'localhost', ca: fixtures.ca }));
    return { tlsClient, tlsServer };
  };
  return tcp;
}

// Both ways over the upgraded pair, bounded in time: a stalled handshake
// fails the test here rather than through mocha's timeout.
async function exchange({ tlsClient, tlsServer }, size = 64 * 1024) {
  const toServer = pattern(size, 1);
  const toClient = pattern(size, 2);
  const failed = new Promise((resolve, reject) => {
    tlsClient.once('error', reject);
    tlsServer.once('error', reject);
    setTimeout(() => reject(new Error('no exchange within 5 s')), 5000).unref();
  });
  const done = Promise.all([readBytes(tlsServer, size), readBytes(tlsClient, size)]);
  tlsClient.write(toServer);
  tlsServer.write(toClient);
  const [atServer, atClient] = await Promise.race([done, failed]);
  assert.ok(atServer.equals(toServer), 'what the server got differs');
  assert.ok(atClient.equals(toClient), 'what the client got differs');
}

// Runs `run(tcp)` over a fresh pair (see tcpPair), closed whatever happens.
async function withTcpPair(run) {
  const tcp = await tcpPair();
  try {
    return await run(tcp);
  } finally {
    await tcp.close();
  }
}

// The same, upgraded and past a first small exchange: `run(tcp, pair)`.
function withUpgradedPair(run) {
  return withTcpPair(async (tcp) => {
    const pair = tcp.upgrade();
    await exchange(pair, 1024);
    return run(tcp, pair);
  });
}

describe('raw socket: what the net.Socket under a TLS socket sees', function () {
  it("its 'data' listeners get nothing once it is upgraded, on either side", async function () {
    await withTcpPair(async (tcp) => {
      const seen = { client: 0, server: 0 };
      tcp.client.on('data', (d) => { seen.client += d.length; });
      tcp.server.on('data', (d) => { seen.server += d.length; });
      const pair = tcp.upgrade();
      await exchange(pair);
      assert.deepStrictEqual(seen, { client: 0, server: 0 });
    });
  });

  for (const encoding of ['utf8', 'latin1', 'hex']) {
    it(`setEncoding('${encoding}') before the upgrade: the ciphertext is not decoded, the handshake completes`,
      async function () {
        await withTcpPair(async (tcp) => {
          tcp.client.setEncoding(encoding);
          tcp.server.setEncoding(encoding);
          await exchange(tcp.upgrade());
        });
      });
  }

  it("a 'readable' listener on it (paused mode) does not hold the ciphertext back", async function () {
    await withTcpPair(async (tcp) => {
      const read = { client: 0, server: 0 };
      tcp.client.on('readable', () => { read.client += tcp.client.read()?.length ?? 0; });
      tcp.server.on('readable', () => { read.server += tcp.server.read()?.length ?? 0; });
      await exchange(tcp.upgrade());
      assert.deepStrictEqual(read, { client: 0, server: 0 });
    });
  });

  it('pausing it after the upgrade does not stop the TLS socket reading', async function () {
    await withUpgradedPair(async (tcp, pair) => {
      tcp.client.pause();
      tcp.server.pause();
      await exchange(pair, 1024 * 1024);
    });
  });

  // A write the kernel took is done, as node:tls's: destroy() right behind
  // it cancels nothing (node:http 22+ emits no 'finish' for a response whose
  // write failed).
  for (const side of ['client', 'server']) {
    it(`write() then destroy() on the ${side}, once connected: the callback reports success, the peer gets the bytes`,
      async function () {
        await withUpgradedPair(async (tcp, pair) => {
          const [writer, reader] = side === 'client' ? [pair.tlsClient, pair.tlsServer] : [pair.tlsServer, pair.tlsClient];
          const payload = pattern(4096, 3);
          const received = readBytes(reader, payload.length);
          const results = [];
          writer.write(payload, (err) => results.push(err ? err.code : 'ok'));
          writer.destroy();
          const got = await orTimeout(received, 5000, Buffer.alloc(0));
          assert.ok(got.equals(payload), `the peer got ${got.length} bytes`);
          await sleep(20);
          assert.deepStrictEqual(results, ['ok']);
        });
      });
  }

  // node:tls reads and shuts down such a socket's handle itself: the
  // net.Socket's own stream never ends nor finishes, whichever end closes
  // and how. (The generic transport once emitted 'finish' when it sent its
  // FIN, and 'end' when the peer's came without close_notify.)
  for (const [side, how] of [['client', 'end'], ['server', 'end'], ['client', 'destroy'], ['server', 'destroy']]) {
    it(`the ${side} TLS socket's ${how}(): no 'end' or 'finish' on either net.Socket, each closes`, async function () {
      await withUpgradedPair(async (tcp, pair) => {
        const events = [];
        const closes = [];
        for (const [name, raw] of [['client net', tcp.client], ['server net', tcp.server]]) {
          for (const event of ['end', 'finish', 'error']) raw.on(event, () => events.push(`${name} ${event}`));
          closes.push(new Promise((resolve) => raw.once('close', resolve)));
        }
        for (const tls of [pair.tlsClient, pair.tlsServer]) {
          closes.push(new Promise((resolve) => tls.once('close', resolve)));
          tls.resume();
        }
        const [local] = side === 'client' ? [pair.tlsClient] : [pair.tlsServer];
        local[how]();
        const outcome = await orTimeout(Promise.all(closes).then(() => 'closed'), 5000, 'open');
        assert.strictEqual(outcome, 'closed');
        assert.deepStrictEqual(events, []);
      });
    });
  }

  // node:tls hands the net.Socket's error to its TLS socket as its
  // _emitTLSError does: '_tlsError' always, 'error' only once control is
  // released (connect() at once). A socket made by hand never gets 'error'
  // for it (tlswrap once emitted it there too). Either way the TLS socket
  // closes with hadError false, and before the net.Socket (the generic
  // transport once closed it after).
  for (const [side, withError] of [['client', true], ['server', true], ['client', false], ['server', false]]) {
    const errors = !withError ? 'no error' : side === 'client' ? "'_tlsError' and 'error'" : "'_tlsError' alone";
    it(`destroy(${withError ? 'err' : ''}) on the net.Socket under the ${side} ` +
      `(${side === 'client' ? 'connect()' : 'made by hand'}): ${errors}, then 'close' without hadError, ` +
      "then the net.Socket's", async function () {
      await withUpgradedPair(async (tcp, pair) => {
        const [tls, raw] = side === 'client' ? [pair.tlsClient, tcp.client] : [pair.tlsServer, tcp.server];
        const events = [];
        for (const name of ['error', '_tlsError']) tls.on(name, (err) => events.push(`${name} ${err.message}`));
        tls.once('close', (hadError) => events.push(`close ${hadError}`));
        const closed = new Promise((resolve) => raw.once('close', (hadError) => {
          events.push(`net close ${hadError}`);
          setImmediate(resolve);
        }));
        raw.destroy(withError ? new Error('gone') : undefined);
        await orTimeout(closed, 5000);
        const expected = !withError ? [] : side === 'client' ? ['_tlsError gone', 'error gone'] : ['_tlsError gone'];
        assert.deepStrictEqual(events, [...expected, 'close false', `net close ${withError}`]);
      });
    });
  }

  // The same from a 'data' listener, which runs inside the net.Socket's
  // handle read: still the program's destroy(err), not a failed read.
  it("destroy(err) on the net.Socket from the TLS socket's 'data' listener: its error, 'close' without hadError",
    async function () {
      await withUpgradedPair(async (tcp, pair) => {
        const events = [];
        for (const name of ['error', '_tlsError']) pair.tlsClient.on(name, (err) => events.push(`${name} ${err.message}`));
        const closed = new Promise((resolve) => pair.tlsClient.once('close', (hadError) => resolve(`close ${hadError}`)));
        pair.tlsClient.once('data', () => tcp.client.destroy(new Error('gone')));
        pair.tlsServer.write('x');
        events.push(await orTimeout(closed, 5000, 'still open'));
        assert.deepStrictEqual(events, ['_tlsError gone', 'error gone', 'close false']);
      });
    });

  // A failed read is the TLS socket's own error, released or not: node:tls
  // reads the handle itself. (The generic transport once passed it on as
  // the net.Socket's, '_tlsError' alone for a socket made by hand.)
  it("the peer resets: a server TLS socket made by hand gets 'error' ECONNRESET, then 'close' with hadError",
    async function () {
      await withUpgradedPair(async (tcp, pair) => {
        const events = [];
        for (const name of ['error', '_tlsError']) pair.tlsServer.on(name, (err) => events.push(`${name} ${err.code}`));
        const closed = new Promise((resolve) => pair.tlsServer.once('close', (hadError) => resolve(`close ${hadError}`)));
        tcp.client.resetAndDestroy();
        events.push(await orTimeout(closed, 5000, 'still open'));
        assert.deepStrictEqual(events, ['_tlsError ECONNRESET', 'error ECONNRESET', 'close true']);
      });
    });

  // node:tls reads the handle itself: the reset is the TLS socket's alone,
  // and the net.Socket, taken down with it, closes with no error of its own.
  // (The generic transport once let the net.Socket fail with it too.)
  it("the peer resets: the net.Socket under a server TLS socket gets no 'error', and 'close' without hadError",
    async function () {
      await withUpgradedPair(async (tcp, pair) => {
        const events = [];
        pair.tlsServer.on('error', (err) => events.push(`tls error ${err.code}`));
        tcp.server.on('error', (err) => events.push(`raw error ${err.code}`));
        tcp.server.on('close', (hadError) => events.push(`raw close ${hadError}`));
        const closed = new Promise((resolve) => pair.tlsServer.once('close', (hadError) => resolve(`tls close ${hadError}`)));
        tcp.client.resetAndDestroy();
        events.push(await orTimeout(closed, 5000, 'still open'));
        assert.deepStrictEqual(events, ['tls error ECONNRESET', 'raw close false', 'tls close true']);
        assert.strictEqual(tcp.server.destroyed, true);
      });
    });

  // A program error (a retry that wraps the same socket again), which must
  // not take the process down nor leave a socket open. With node:tls one of
  // them fails, which one by timing: the second (it reads the handle now)
  // with ECONNRESET at the peer's FIN, or the first at once with "read
  // EALREADY" (its handle taken); the net.Socket goes down with it, and the
  // other closes without an error. tlswrap fails the first, on either
  // transport. Its generic transport once called its read hook from itself
  // there (RangeError, uncaught), then left the first open for good; its
  // native one failed both with EBADF.
  it('two TLS sockets over one net.Socket, then the peer ends: one error, both close',
    async function () {
      const tcp = await plainTcpPair();
      try {
        const first = tcp.track(tlswrap.connect({ socket: tcp.client, servername: 'localhost', ca: fixtures.ca }));
        const second = tcp.track(tlswrap.connect({ socket: tcp.client, servername: 'localhost', ca: fixtures.ca }));
        const errors = [];
        first.on('error', (err) => errors.push(`first ${err.code} ${err.syscall}`));
        second.on('error', (err) => errors.push(`second ${err.code} ${err.syscall}`));
        const closed = Promise.all([first, second].map((s) => new Promise((resolve) => s.once('close', resolve))));
        tcp.server.end();
        const outcome = await orTimeout(closed.then(() => 'closed'), 5000, 'open');
        assert.strictEqual(outcome, 'closed');
        assert.strictEqual(errors.length, 1, errors.join(', '));
        if (!builtin) assert.deepStrictEqual(errors, ['first EALREADY read']);
      } finally {
        await tcp.close();
      }
    });
});
