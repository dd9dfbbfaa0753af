'use strict';

// The `onread: { buffer, callback }` client option (net.connect's, passed on
// by tls.connect): decrypted bytes go into the user's buffer and the callback
// gets (nread, buffer) instead of 'data' events.

const assert = require('node:assert');
const tls = require('node:tls');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { tlswrap, serverOptions, clientOptions, listen, closeServer, pattern } = require('./common');

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
});
