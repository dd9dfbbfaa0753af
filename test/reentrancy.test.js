'use strict';

// Writes from inside a 'data' handler re-enter the engine while it is
// delivering plaintext. They must be safe and keep their order.

const assert = require('node:assert');
const { once } = require('node:events');
const {
  tlswrap, builtin, serverOptions, clientOptions, listen, closeServer, assertSameText, pattern, release,
} = require('./common');


for (const version of ['TLSv1.3', 'TLSv1.2']) {
  describe(`writes from inside 'data' handlers, ${version}`, function () {
    let server;
    const sockets = [];
    const only = { minVersion: version, maxVersion: version };

    // A tlswrap echo server that writes each chunk back from its 'data'
    // handler, and ends when the client ends.
    async function startEcho() {
      server = tlswrap.createServer(serverOptions(only), (socket) => {
        sockets.push(socket);
        socket.on('data', (chunk) => socket.write(chunk));
        socket.on('end', () => socket.end());
      });
      return listen(server);
    }

    afterEach(async function () {
      await release(sockets, null, server);
      server = null;
    });

    it('replies written from data handlers call back once each, in order; sent at once, they need no event', async function () {
      const ROUNDS = 200;
      const calls = [];
      let writeDoneEvents = 0;
      server = tlswrap.createServer(serverOptions(only), (socket) => {
        sockets.push(socket);
        if (!builtin) {
          // Counts the engine's write completions that reach JS as events.
          const { writeDone } = require('../lib/binding.js').events;
          const onEvent = socket._onEngineEvent;
          socket._onEngineEvent = function (type, arg) {
            if (type === writeDone) writeDoneEvents++;
            return onEvent.call(this, type, arg);
          };
        }
        let n = 0;
        socket.on('data', () => {
          const i = n++;
          const sync = [];
          socket.write(`r${i};`, () => {
            calls.push(i);
            sync.push(i);
          });
          // A callback never runs inside write() itself.
          assert.deepStrictEqual(sync, []);
        });
      });
      const port = await listen(server);
      const client = tlswrap.connect(clientOptions(port, only));
      sockets.push(client);
      client.setEncoding('latin1');
      let got = '';
      let sent = 0;
      const done = new Promise((resolve) => {
        client.on('data', (text) => {
          got += text;
          if (got.endsWith(`r${sent - 1};`)) {
            if (sent === ROUNDS) resolve();
            else client.write(`q${sent++};`);
          }
        });
      });
      await once(client, 'secureConnect');
      client.write(`q${sent++};`);
      await done;
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepStrictEqual(calls, Array.from({ length: ROUNDS }, (_, i) => i));
      // Over TCP the reply is in the kernel before the handler returns: its
      // callback comes without a writeDone event, on either transport.
      if (!builtin) {
        assert.ok(writeDoneEvents < ROUNDS / 10, `${writeDoneEvents} writeDone events for ${ROUNDS} replies`);
      }
    });

    it('echoes a 1 MiB pattern sent in many writes, intact and in order', async function () {
      const data = pattern(1024 * 1024);
      const port = await startEcho();
      const client = tlswrap.connect(clientOptions(port, only));
      sockets.push(client);
      const chunks = [];
      client.on('data', (chunk) => chunks.push(chunk));
      const ended = once(client, 'end');
      await once(client, 'secureConnect');
      // Uneven sizes, so that writes and records do not line up.
      const sizes = [1, 100, 1000, 4093, 16384, 16385, 777];
      let offset = 0;
      for (let i = 0; offset < data.length; i++) {
        const size = Math.min(sizes[i % sizes.length], data.length - offset);
        client.write(data.subarray(offset, offset + size));
        offset += size;
      }
      client.end();
      await ended;
      const echoed = Buffer.concat(chunks);
      assert.strictEqual(echoed.length, data.length);
      assert.ok(echoed.equals(data), 'echo differs from what was sent');
    });

    it('ping-pong: 1000 rounds, each write made from the client\'s data handler', async function () {
      const ROUNDS = 1000;
      const SIZE = 64; // fixed size messages, so the client can frame them
      const message = (n) => Buffer.from(`ping ${String(n).padStart(8, '0')} `.padEnd(SIZE, '.'));
      const port = await startEcho();
      const client = tlswrap.connect(clientOptions(port, only));
      sockets.push(client);
      let round = 0;
      let pending = Buffer.alloc(0);
      const mismatches = [];
      const done = new Promise((resolve, reject) => {
        client.on('error', reject);
        client.on('end', () => resolve());
        client.on('data', (chunk) => {
          pending = Buffer.concat([pending, chunk]);
          while (pending.length >= SIZE) {
            const reply = pending.subarray(0, SIZE);
            pending = pending.subarray(SIZE);
            if (!reply.equals(message(round))) mismatches.push(round);
            round++;
            // The next ping goes out from inside this 'data' handler.
            if (round < ROUNDS) client.write(message(round));
            else client.end();
          }
        });
      });
      await once(client, 'secureConnect');
      client.write(message(0));
      await done;
      assert.strictEqual(round, ROUNDS);
      assert.deepStrictEqual(mismatches, []);
      assert.strictEqual(pending.length, 0);
    });

    it('a server that writes several times and ends from one data handler keeps order', async function () {
      const replies = [];
      server = tlswrap.createServer(serverOptions(only), (socket) => {
        sockets.push(socket);
        socket.once('data', () => {
          // Many small writes, one large one, and end, all re-entering.
          for (let i = 0; i < 100; i++) socket.write(`<${i}>`);
          socket.write(Buffer.alloc(100000, 'z'));
          socket.end('<end>');
        });
      });
      const port = await listen(server);
      const client = tlswrap.connect(clientOptions(port, only));
      sockets.push(client);
      client.setEncoding('latin1');
      client.on('data', (chunk) => replies.push(chunk));
      const ended = once(client, 'end');
      client.write('go');
      await ended;
      let expected = '';
      for (let i = 0; i < 100; i++) expected += `<${i}>`;
      expected += 'z'.repeat(100000) + '<end>';
      assertSameText(replies.join(''), expected, 'replies');
    });

    // node:http answers a malformed request this way (a 400 or 431 written,
    // then destroy(err), from the socket's 'data' handler).
    for (const side of ['server', 'client']) {
      it(`a write then destroy() from one 'data' handler (${side}): the peer gets the write`, async function () {
        // The side under test writes and destroys when the other one speaks.
        const lastWords = (socket) => {
          socket.on('error', () => {});
          socket.once('data', () => {
            socket.write('last words');
            socket.destroy(new Error('bad request'));
          });
        };
        let got = '';
        const collect = (socket) => {
          socket.setEncoding('latin1');
          socket.on('data', (d) => { got += d; });
          socket.on('error', () => {});
          socket.write('go');
          return once(socket, 'close');
        };
        let serverClosed;
        server = tlswrap.createServer(serverOptions(only), (socket) => {
          sockets.push(socket);
          if (side === 'server') lastWords(socket);
          else serverClosed = collect(socket);
        });
        const port = await listen(server);
        const client = tlswrap.connect(clientOptions(port, only));
        sockets.push(client);
        await once(client, 'secureConnect');
        if (side === 'server') {
          await collect(client);
        } else {
          lastWords(client);
          while (!serverClosed) await new Promise((resolve) => setImmediate(resolve));
          await serverClosed;
        }
        assert.strictEqual(got, 'last words');
      });
    }
  });
}

// The native handle's internal methods that replace its transport refuse
// to run from JS that the engine called (a Duplex's write, under the
// engine's flush): the transport doing the write would be freed under it.
describe('the native handle keeps its transport while using it', function () {
  before(function () {
    if (builtin) this.skip();
  });

  it("useNativeTransport() and setCallbacks() from inside the Duplex's write: refused, the connection goes on",
    async function () {
      const net = require('node:net');
      const { SocketDuplex, fixtures } = require('./common');
      const server = tlswrap.createServer(serverOptions(), (sock) => sock.pipe(sock));
      const port = await listen(server);
      const raw = net.connect(port, '127.0.0.1');
      try {
        await once(raw, 'connect');
        const duplex = new SocketDuplex(raw);
        const client = tlswrap.connect({ socket: duplex, servername: 'localhost', ca: fixtures.ca });
        await once(client, 'secureConnect');
        const seen = {};
        const write = duplex._write;
        duplex._write = function (chunk, encoding, cb) {
          if (seen.swap === undefined) {
            seen.swap = client._handle.useNativeTransport(raw._handle.fd);
            try {
              client._handle.setCallbacks(() => {}, () => {}, () => {});
              seen.callbacks = 'replaced';
            } catch (err) {
              seen.callbacks = err.message;
            }
          }
          return write.call(this, chunk, encoding, cb);
        };
        client.write('ping');
        const [reply] = await once(client, 'data');
        assert.strictEqual(reply.toString(), 'ping');
        assert.deepStrictEqual(seen, { swap: -require('node:os').constants.errno.EBUSY, callbacks: 'setCallbacks: already set' });
        client.destroy();
      } finally {
        raw.destroy();
        await closeServer(server);
      }
    });
});
