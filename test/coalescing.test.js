'use strict';

// tlswrap's reason to exist: records that are already buffered are decrypted
// together and reach JavaScript as one chunk (up to 64 KiB), not one 'data'
// event per record. These tests pin that guarantee, so they are expected to
// FAIL against builtin node:tls (one event per record there).

const assert = require('node:assert');
const tls = require('node:tls');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { tlswrap, serverOptions, clientOptions, listen, closeServer, pattern } = require('./common');

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
