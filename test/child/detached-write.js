'use strict';

// A write whose ArrayBuffer is detached (structuredClone with transfer) while
// the write still waits: before the handshake is done, or while the peer is
// not reading. Run as `node detached-write.js SCENARIO` by
// test/socket.test.js, in a child process because a use-after-free may crash
// it. Prints one JSON line: what the peer received, compared with the bytes
// the buffer held when write() was called.
//
// After the transfer, V8 hands the same memory to the new ArrayBuffer; the
// test fills it with 0xEE, so an engine that still reads through a pointer
// into the old buffer sends 0xEE bytes (deterministically, without needing
// a sanitizer to see the use-after-free).

const tls = require('node:tls');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions, listen, closeServer, pattern } = require('../common');

const SIZES = { handshake: 1024 * 1024, blocked: 32 * 1024 * 1024 };
const PEER_LIMIT_MS = 10000;

async function run(scenario) {
  const size = SIZES[scenario];
  const original = pattern(size, 7);
  const arrayBuffer = new ArrayBuffer(size);
  new Uint8Array(arrayBuffer).set(original);
  const buffer = Buffer.from(arrayBuffer); // not pooled: the whole ArrayBuffer

  // The peer is node:tls (the reference reader); it compares as it reads.
  const result = { received: 0, matching: 0, firstBad: null, peer: null, pendingAtDetach: null };
  const server = tls.createServer(serverOptions());
  let peerSocket;
  const peerDone = new Promise((resolve) => {
    server.on('secureConnection', (socket) => {
      peerSocket = socket;
      if (scenario === 'blocked') socket.pause();
      socket.on('data', (chunk) => {
        for (let i = 0; i < chunk.length; i++) {
          const at = result.received + i;
          if (result.firstBad === null && chunk[i] === original[at]) continue;
          if (result.firstBad === null) result.firstBad = { at, got: chunk[i], expected: original[at] };
        }
        result.received += chunk.length;
        if (result.firstBad === null) result.matching = result.received;
      });
      socket.on('error', (err) => resolve(`error ${err.code}`));
      socket.on('end', () => resolve('end'));
      socket.on('close', () => resolve('close'));
    });
  });
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port));
  client.on('error', () => {});

  if (scenario === 'blocked') {
    await once(client, 'secureConnect');
    while (!peerSocket) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  let called = false;
  client.write(buffer, () => { called = true; });
  client.end();
  // Blocked: let the kernel buffers and the transport queue fill up, so the
  // rest of the write is still waiting in the engine.
  if (scenario === 'blocked') await new Promise((resolve) => setTimeout(resolve, 300));
  result.pendingAtDetach = !called;

  const moved = structuredClone(arrayBuffer, { transfer: [arrayBuffer] });
  new Uint8Array(moved).fill(0xee);
  if (peerSocket) peerSocket.resume();

  let timer;
  result.peer = await Promise.race([
    peerDone,
    new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), PEER_LIMIT_MS); }),
  ]);
  clearTimeout(timer);
  result.movedLength = moved.byteLength; // keeps the memory alive to the end
  client.destroy();
  if (peerSocket) peerSocket.destroy();
  await closeServer(server);
  return result;
}

if (require.main === module) {
  const scenario = process.argv[2];
  if (!SIZES[scenario]) throw new Error(`no scenario ${scenario}`);
  run(scenario).then((result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
}
