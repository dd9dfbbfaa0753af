'use strict';

// tlswrap's reason to exist: records that are already buffered are decrypted
// together and reach JavaScript as one chunk (up to 64 KiB), not one 'data'
// event per record. These tests pin that guarantee, which node:tls does not
// give (one event per record there): they skip under TLSWRAP_TEST_BUILTIN.

const assert = require('node:assert');
const net = require('node:net');
const tls = require('node:tls');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const {
  builtin, tlswrap, serverOptions, clientOptions, listen, closeServer, pattern, SocketDuplex,
} = require('./common');

const CAP = 64 * 1024;

// A byte pattern that a shifted, dropped or repeated chunk cannot match.

// A builtin node:tls server (the peer) and a tlswrap client connected to it.
// The client does not read (no 'data' listener, stream paused) until the
// test says so. Resolves with both ends of the connection.
async function connectPair(t, fragment) {
  const server = tls.createServer(serverOptions());
  t.server = server;
  const serverSide = once(server, 'secureConnection');
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port));
  t.client = client;
  client.pause();
  await once(client, 'secureConnect');
  const [peer] = await serverSide;
  t.peer = peer;
  assert.strictEqual(peer.setMaxSendFragment(fragment), true);
  return { client, peer };
}

// Resolves with the 'data' chunks once `total` bytes have arrived.
function collect(client, total) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let got = 0;
    client.on('error', reject);
    client.on('data', (chunk) => {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= total) resolve(chunks);
    });
    client.resume();
  });
}

describe('coalescing of buffered records', function () {
  const t = {};

  before(function () {
    if (builtin) this.skip();
  });

  afterEach(async function () {
    if (t.client) t.client.destroy();
    if (t.peer) t.peer.destroy();
    if (t.server) await closeServer(t.server);
    for (const k of Object.keys(t)) delete t[k];
  });

  it('delivers 60 buffered 1 KiB records in at most 2 data events', async function () {
    const { client, peer } = await connectPair(t, 1024);
    const data = pattern(60 * 1024);
    // One write of 60 KiB: the peer encrypts it as 60 records of 1 KiB.
    await new Promise((resolve, reject) => peer.write(data, (err) => (err ? reject(err) : resolve())));
    // The write callback means the ciphertext is in the kernel; give loopback
    // a moment so it is all on the client's socket before the client reads.
    // The check is then about how records are handed to JS, not TCP timing.
    await sleep(100);
    const chunks = await collect(client, data.length);
    assert.ok(Buffer.concat(chunks).equals(data), 'bytes differ from what was sent');
    assert.ok(chunks.length <= 2,
      `60 buffered records arrived in ${chunks.length} data events (expected at most 2)`);
  });

  it('caps each coalesced chunk at 64 KiB and keeps 256 KiB in order', async function () {
    const record = 4096;
    const { client, peer } = await connectPair(t, record);
    const data = pattern(256 * 1024);
    // 64 records of 4 KiB. The client is paused, so they pile up in the
    // kernel (as far as socket buffers allow) before it reads anything.
    peer.write(data);
    await sleep(150);
    const chunks = await collect(client, data.length);
    const sizes = chunks.map((c) => c.length);
    const largest = Math.max(...sizes);
    assert.ok(largest <= CAP, `a data chunk of ${largest} bytes exceeds the 64 KiB cap`);
    // Coalescing must really have happened, so that it is the cap (not the
    // record size) that bounds the chunks: builtin tls never exceeds 4 KiB here.
    assert.ok(largest > 4 * record,
      `largest data chunk is ${largest} bytes: buffered records were not coalesced (sizes ${sizes.join(',')})`);
    assert.strictEqual(sizes.reduce((a, b) => a + b, 0), data.length);
    assert.ok(Buffer.concat(chunks).equals(data), 'bytes differ from what was sent (order or content)');
  });
});

// A SocketDuplex that, once hold() is called, keeps everything
// it reads and hands it over in one chunk when the peer ends: the engine is
// given far more ciphertext at once than a TCP read would ever give it.
class HoldingDuplex extends SocketDuplex {
  constructor(raw) {
    super(raw);
    this.held = null;
    this.largestPush = 0;
  }

  hold() {
    this.held = [];
  }

  _fromSocket(chunk) {
    if (this.held) this.held.push(chunk);
    else this.push(chunk);
  }

  _socketEnded() {
    if (this.held) {
      const all = Buffer.concat(this.held);
      this.held = null;
      this.largestPush = all.length;
      this.push(all);
    }
    this.push(null);
  }
}

// Holds for node:tls too (it gives one record per 'data' event).
describe('coalescing: a generic transport that hands over a lot at once', function () {
  let server;
  const sockets = [];

  afterEach(async function () {
    for (const s of sockets.splice(0)) s.destroy();
    if (server) await closeServer(server);
    server = null;
  });

  it('1 MiB of records in one Duplex chunk (new TLSSocket(duplex)): data chunks stay <= 64 KiB, in order',
    async function () {
      const data = pattern(1024 * 1024);
      const context = tlswrap.createSecureContext(serverOptions());
      const result = new Promise((resolve, reject) => {
        server = net.createServer((raw) => {
          const duplex = new HoldingDuplex(raw);
          const socket = new tlswrap.TLSSocket(duplex, { isServer: true, secureContext: context });
          sockets.push(socket);
          const chunks = [];
          socket.on('error', reject);
          socket.on('secure', () => {
            // From here on, the client's records pile up in the Duplex.
            duplex.hold();
            socket.write('go');
          });
          socket.on('data', (chunk) => chunks.push(chunk));
          socket.on('end', () => resolve({ chunks, duplex }));
        });
      });
      const port = await listen(server);
      const client = tls.connect(clientOptions(port));
      sockets.push(client);
      client.on('error', () => {});
      client.once('data', () => client.end(data));
      const { chunks, duplex } = await result;
      assert.ok(duplex.largestPush > data.length, `the Duplex handed over only ${duplex.largestPush} bytes at once`);
      const largest = Math.max(...chunks.map((c) => c.length));
      assert.ok(largest <= CAP, `a data chunk of ${largest} bytes exceeds the 64 KiB cap`);
      assert.ok(Buffer.concat(chunks).equals(data), 'bytes differ from what was sent (order or content)');
    });
});

// A chunk's `.buffer` may hold more than the chunk (coalesced reads are sized
// to the ciphertext; small chunks share a block, as small Buffers share
// node's pool). What no plaintext has been written to must read as zeros,
// never as memory the process used before (other connections' plaintext,
// keys). tlswrap's own guarantee: node:tls 20 and 22 give each chunk a
// buffer of its size, node:tls 24 and 26 a view of a 64 KiB buffer whose
// rest they do not clear.
describe("coalescing: the memory behind a chunk's buffer", function () {
  before(function () {
    if (builtin) this.skip();
  });

  const gc = (() => {
    require('node:v8').setFlagsFromString('--expose-gc');
    return require('node:vm').runInNewContext('gc');
  })();

  // Memory full of 0xAA, freed: the allocations that follow reuse it. Small
  // blocks kept between the freed ones stop malloc from merging them back
  // into fresh memory. Returns those blocks, to hold until the end.
  function dirtyHeap() {
    const kept = [];
    for (const size of [16 * 1024, 20 * 1024, 48 * 1024, 64 * 1024]) {
      for (let i = 0; i < 32; i++) {
        Buffer.allocUnsafeSlow(size).fill(0xaa);
        kept.push(Buffer.allocUnsafeSlow(64));
      }
    }
    gc();
    return kept;
  }

  it("bytes of a chunk's buffer past every chunk delivered in it are zero", async function () {
    const server = tls.createServer(serverOptions(), async (sock) => {
      // Small records one by one, then a burst the client reads at once.
      for (let i = 0; i < 40; i++) {
        sock.write(pattern(300 + i));
        await sleep(2);
      }
      sock.end(pattern(200 * 1024));
    });
    const port = await listen(server);
    try {
      const kept = dirtyHeap();
      const client = tlswrap.connect(clientOptions(port));
      const ends = new Map(); // ArrayBuffer -> the end of the last chunk in it
      let received = 0;
      client.on('data', (chunk) => {
        received += chunk.length;
        const end = chunk.byteOffset + chunk.length;
        ends.set(chunk.buffer, Math.max(end, ends.get(chunk.buffer) || 0));
        // Pauses let the burst pile up into coalesced reads.
        client.pause();
        setTimeout(() => client.resume(), 5);
      });
      await once(client, 'end');
      assert.strictEqual(received, 40 * 300 + (39 * 40) / 2 + 200 * 1024);
      for (const [buffer, end] of ends) {
        const tail = new Uint8Array(buffer, end);
        const dirty = tail.findIndex((b) => b !== 0);
        assert.strictEqual(dirty, -1, `byte ${end + dirty} of a ${buffer.byteLength}-byte buffer is ${tail[dirty]}`);
      }
      assert.strictEqual(kept.length, 128);
    } finally {
      await closeServer(server);
    }
  });
});
