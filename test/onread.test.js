'use strict';

// The `onread: { buffer, callback }` client option (net.connect's, passed on
// by tls.connect): decrypted bytes go into the user's buffer and the callback
// gets (nread, buffer) instead of 'data' events.

const assert = require('node:assert');
const tls = require('node:tls');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { builtin, tlswrap, serverOptions, clientOptions, listen, closeServer, pattern } = require('./common');

const SIZE = 1024 * 1024;

const DATA = pattern(SIZE);

describe('onread option', function () {
  let server;
  let client;

  // A builtin server that sends the 1 MiB pattern in one write, then ends.
  async function startServer() {
    server = tls.createServer(serverOptions(), (socket) => {
      socket.on('error', () => {});
      socket.end(DATA);
    });
    return listen(server);
  }

  afterEach(async function () {
    if (client) client.destroy();
    client = null;
    if (server) await closeServer(server);
    server = null;
  });

  it("an onread net.Socket would not take is ignored: the socket emits 'data'", async function () {
    const server = tlswrap.createServer(serverOptions(), (s) => s.end('hello'));
    const port = await listen(server);
    try {
      const called = [];
      const callback = () => called.push('callback');
      for (const onread of [{}, 'x', { buffer: 1, callback }, { buffer: Buffer.alloc(8) },
        { buffer: new DataView(new ArrayBuffer(8)), callback }]) {
        const client = tlswrap.connect(clientOptions(port, { onread }));
        let got = '';
        client.on('data', (d) => { got += d; });
        await once(client, 'end');
        client.destroy();
        assert.strictEqual(got, 'hello', JSON.stringify(onread));
      }
      assert.deepStrictEqual(called, []);
    } finally {
      await closeServer(server);
    }
  });

  it('fills a fixed 1 KiB buffer with a 1 MiB burst, complete and in order', async function () {
    const port = await startServer();
    const buffer = Buffer.alloc(1024);
    const received = Buffer.alloc(SIZE);
    let offset = 0;
    let calls = 0;
    let dataEvents = 0;
    client = tlswrap.connect(clientOptions(port, {
      onread: {
        buffer,
        callback(nread, buf) {
          calls++;
          assert.strictEqual(buf, buffer, 'callback must get the buffer the user gave');
          assert.ok(nread > 0 && nread <= buffer.length, `nread ${nread} out of range`);
          assert.ok(offset + nread <= SIZE, 'more bytes than were sent');
          buf.copy(received, offset, 0, nread);
          offset += nread;
        },
      },
    }));
    client.on('data', () => dataEvents++);
    await once(client, 'end');
    assert.strictEqual(offset, SIZE);
    assert.ok(received.equals(DATA), 'bytes differ from what was sent');
    assert.ok(calls >= SIZE / buffer.length, `${calls} callbacks for ${SIZE} bytes in a 1 KiB buffer`);
    // node:tls hands the bytes to the callback only, never to 'data'.
    assert.strictEqual(dataEvents, 0);
  });

  it('pause() before the handshake is done: the handshake completes, the data waits for resume()', async function () {
    const port = await startServer();
    const received = [];
    client = tlswrap.connect(clientOptions(port, {
      onread: { buffer: Buffer.alloc(16 * 1024), callback: (nread, buf) => { received.push(Buffer.from(buf.subarray(0, nread))); } },
    }));
    client.pause();
    const secure = once(client, 'secureConnect');
    const timeout = new Promise((resolve) => setTimeout(resolve, 5000, 'timeout')).then((v) => { throw new Error(v); });
    await Promise.race([secure, timeout]);
    client.resume();
    await once(client, 'end');
    assert.ok(Buffer.concat(received).equals(DATA), 'bytes differ from what was sent');
  });

  it('takes each buffer from a buffer() function', async function () {
    const port = await startServer();
    const given = new Set();
    const received = [];
    let total = 0;
    client = tlswrap.connect(clientOptions(port, {
      onread: {
        buffer() {
          const b = Buffer.alloc(2048);
          given.add(b);
          return b;
        },
        callback(nread, buf) {
          assert.ok(given.has(buf), 'callback got a buffer that buffer() did not return');
          assert.ok(nread > 0 && nread <= buf.length, `nread ${nread} out of range`);
          received.push(Buffer.from(buf.subarray(0, nread)));
          total += nread;
        },
      },
    }));
    await once(client, 'end');
    assert.strictEqual(total, SIZE);
    assert.ok(Buffer.concat(received).equals(DATA), 'bytes differ from what was sent');
  });

  it('buffer() is called once by connect() and once after each callback, as node:tls does', async function () {
    const port = await startServer();
    const log = [];
    let last = null;
    client = tlswrap.connect(clientOptions(port, {
      onread: {
        buffer() {
          log.push('buffer');
          last = Buffer.alloc(4096);
          return last;
        },
        callback(nread, buf) {
          assert.strictEqual(buf, last, 'the callback must get the buffer buffer() returned last');
          log.push('callback');
        },
      },
    }));
    assert.deepStrictEqual(log, ['buffer'], 'connect() must ask for the first buffer');
    await once(client, 'secureConnect');
    assert.deepStrictEqual(log, ['buffer'], 'the handshake must not ask for more buffers');
    await once(client, 'end');
    const callbacks = log.filter((e) => e === 'callback').length;
    assert.ok(callbacks >= SIZE / 4096);
    const expected = ['buffer'];
    for (let i = 0; i < callbacks; i++) expected.push('callback', 'buffer');
    assert.deepStrictEqual(log, expected);
  });

  it('returning false from the callback pauses until resume()', async function () {
    const port = await startServer();
    const buffer = Buffer.alloc(1024);
    const received = Buffer.alloc(SIZE);
    let offset = 0;
    let calls = 0;
    let pausedOnce = false;
    let resolvePaused;
    const paused = new Promise((resolve) => { resolvePaused = resolve; });
    client = tlswrap.connect(clientOptions(port, {
      onread: {
        buffer,
        callback(nread, buf) {
          calls++;
          buf.copy(received, offset, 0, nread);
          offset += nread;
          if (!pausedOnce && offset >= 8 * 1024) {
            pausedOnce = true;
            resolvePaused();
            return false;
          }
          return undefined;
        },
      },
    }));
    const ended = once(client, 'end');
    await paused;
    // node:tls stops reading from the network at once but may still hand
    // over what it had already taken in; after that, nothing moves.
    await sleep(100);
    const stalledAt = calls;
    await sleep(150);
    assert.strictEqual(calls, stalledAt, 'callback still called while paused');
    assert.ok(offset < SIZE, 'everything arrived although the socket was paused');
    client.resume();
    await ended;
    assert.strictEqual(offset, SIZE);
    assert.ok(received.equals(DATA), 'bytes differ from what was sent');
  });

  // Collects what an onread callback is given, as (nread, copy of the bytes).
  function onreadInto(buffer, calls) {
    return {
      buffer,
      callback(nread, buf) {
        calls.push(Buffer.from(buf.subarray(0, nread)));
      },
    };
  }

  it('records smaller than the buffer (1 KiB records, 64 KiB buffer): exact bytes, in order', async function () {
    const data = pattern(256 * 1024, 5);
    server = tls.createServer(serverOptions(), (socket) => {
      socket.on('error', () => {});
      socket.setMaxSendFragment(1024);
      socket.end(data);
    });
    const port = await listen(server);
    const calls = [];
    const buffer = Buffer.alloc(64 * 1024);
    // The server sends the 256 records in one write: loopback reads take
    // many of them at once.
    client = tlswrap.connect(clientOptions(port, { onread: onreadInto(buffer, calls) }));
    await once(client, 'end');
    const got = Buffer.concat(calls);
    assert.strictEqual(got.length, data.length);
    assert.ok(got.equals(data), 'bytes differ from what was sent (order or content)');
    assert.ok(calls.every((c) => c.length > 0 && c.length <= buffer.length), 'a callback with nread out of range');
    // tlswrap only (node:tls calls back once per record): buffered records
    // are decrypted together into the user's buffer.
    if (!builtin) {
      const largest = Math.max(...calls.map((c) => c.length));
      assert.ok(largest > 4 * 1024, `records were not coalesced into the buffer (largest callback ${largest} bytes)`);
    }
  });

  // A node:tls server that, once the client says 'go', sends A, a TLS 1.2
  // HelloRequest and B: read in one go, the burst is split by the
  // renegotiation. `onServerData` sees what the client sends after 'go'.
  async function startSplitServer(A, B, onServerData = () => {}) {
    const TLS12 = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' };
    server = tls.createServer(serverOptions(TLS12), (socket) => {
      socket.on('error', () => {});
      let go = false;
      socket.on('data', (d) => {
        if (go) {
          onServerData(d);
          return;
        }
        go = true;
        socket.write(A);
        socket.renegotiate({}, () => {});
        socket.write(B);
      });
    });
    return listen(server);
  }

  async function splitBurst(onread, A, B, onServerData) {
    const port = await startSplitServer(A, B, onServerData);
    client = tlswrap.connect(clientOptions(port, { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', onread }));
    await once(client, 'secureConnect');
    // Not reading while A, the HelloRequest and B arrive.
    client.pause();
    client.write('go');
    await sleep(150);
    client.resume();
  }

  it('a burst split by a renegotiation: each callback owns the buffer() it was given', async function () {
    const A = pattern(3000, 1);
    const B = pattern(3000, 2);
    const kept = [];
    await splitBurst({
      buffer: () => Buffer.alloc(64 * 1024),
      callback(nread, buf) {
        kept.push({ buf, nread, bytes: Buffer.from(buf.subarray(0, nread)) });
      },
    }, A, B);
    await until(() => kept.reduce((n, k) => n + k.nread, 0) >= A.length + B.length);
    assert.ok(Buffer.concat(kept.map((k) => k.bytes)).equals(Buffer.concat([A, B])), 'bytes differ from what was sent');
    assert.strictEqual(new Set(kept.map((k) => k.buf)).size, kept.length, 'a buffer was given to two callbacks');
    for (const [i, k] of kept.entries()) {
      assert.ok(k.buf.subarray(0, k.nread).equals(k.bytes), `callback ${i}'s buffer changed after it returned`);
    }
  });

  it('a burst split by a renegotiation, one fixed buffer: an echo from the callback sends what it got', async function () {
    const A = pattern(3000, 3);
    const B = pattern(3000, 4);
    const buffer = Buffer.alloc(64 * 1024);
    const received = [];
    const echoed = [];
    await splitBurst({
      buffer,
      callback(nread, buf) {
        received.push(Buffer.from(buf.subarray(0, nread)));
        client.write(buf.subarray(0, nread));
      },
    }, A, B, (d) => echoed.push(d));
    const expected = Buffer.concat([A, B]);
    await until(() => Buffer.concat(echoed).length >= expected.length);
    assert.ok(Buffer.concat(received).equals(expected), 'the callbacks got other bytes than were sent');
    assert.ok(Buffer.concat(echoed).equals(expected), 'the echo sent other bytes than the callbacks got');
  });

  it('a burst split by a renegotiation, one fixed buffer: a callback reusing the buffer loses nothing', async function () {
    const A = pattern(3000, 5);
    const B = pattern(3000, 6);
    const buffer = Buffer.alloc(64 * 1024);
    const received = [];
    await splitBurst({
      buffer,
      callback(nread, buf) {
        received.push(Buffer.from(buf.subarray(0, nread)));
        // The buffer is the program's until the next read.
        buf.fill(0x2a);
      },
    }, A, B);
    const expected = Buffer.concat([A, B]);
    await until(() => Buffer.concat(received).length >= expected.length);
    assert.ok(Buffer.concat(received).equals(expected), 'the callbacks got other bytes than were sent');
  });

  it('a TLS 1.3 ticket between two writes of one burst: each callback sees its bytes at the buffer start', async function () {
    // serverSocket._handle.newSessionTicket() is tlswrap's test hook; node:tls
    // has no way to send a ticket on demand.
    if (builtin) this.skip();
    const A = pattern(20000, 1);
    const B = pattern(20000, 2);
    const TLS13 = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' };
    server = tlswrap.createServer(serverOptions(TLS13), (socket) => {
      socket.on('error', () => {});
      // The automatic tickets follow the first data; 'go' comes after them.
      socket.write('x');
      socket.once('data', () => {
        socket.write(A);
        socket._handle.newSessionTicket();
        socket.end(B);
      });
    });
    const port = await listen(server);
    const calls = [];
    const events = [];
    const buffer = Buffer.alloc(64 * 1024);
    client = tlswrap.connect(clientOptions(port, {
      ...TLS13,
      onread: {
        buffer,
        callback(nread, buf) {
          calls.push(Buffer.from(buf.subarray(0, nread)));
          events.push('data');
        },
      },
    }));
    client.on('session', () => events.push('session'));
    await once(client, 'secureConnect');
    await until(() => calls.length > 0);
    assert.strictEqual(Buffer.concat(calls).toString('latin1'), 'x');
    calls.length = 0;
    events.length = 0;
    // Not reading while A, the ticket and B arrive: one read takes them all.
    client.pause();
    client.write('go');
    await sleep(150);
    client.resume();
    await once(client, 'end');
    const got = Buffer.concat(calls);
    const expected = Buffer.concat([A, B]);
    assert.strictEqual(got.length, expected.length);
    assert.ok(got.equals(expected), 'bytes differ from what was written (order or content)');
    // The session event splits the burst: A's bytes before it, B's after.
    const at = events.indexOf('session');
    assert.notStrictEqual(at, -1, 'no session event for the ticket');
    const before = Buffer.concat(calls.slice(0, at));
    assert.ok(before.equals(A), `${before.length} bytes before the session event, not A's ${A.length}`);
  });
});

function until(get) {
  return new Promise((resolve) => {
    const check = () => (get() ? resolve() : setTimeout(check, 2));
    check();
  });
}
