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
