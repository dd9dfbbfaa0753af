'use strict';

// A write whose ArrayBuffer is detached (structuredClone with transfer) while
// the write still waits: before the handshake is done, or while the peer is
// not reading (one chunk, a few corked chunks, many corked chunks), or from
// JavaScript that runs while write() itself is still encrypting (the
// transport's write, over a JS Duplex). Run as `node detached-write.js
// SCENARIO` by test/socket-writes.test.js, in a child process because a
// use-after-free may crash it. Prints one JSON line: what the peer received,
// compared with the bytes the buffer held when write() was called.
//
// After the transfer, V8 hands the same memory to the new ArrayBuffer; the
// test fills it with 0xEE, so an engine that still reads through a pointer
// into the old buffer sends 0xEE bytes (deterministically, without needing
// a sanitizer to see the use-after-free).

const net = require('node:net');
const tls = require('node:tls');
const { Duplex } = require('node:stream');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions, listen, closeServer, pattern } = require('../common');

const MiB = 1024 * 1024;
// size: bytes written; chunks: how many write() calls under one cork().
const SCENARIOS = {
  'handshake': { size: MiB, chunks: 1 },
  'blocked': { size: 32 * MiB, chunks: 1 },
  'blocked-writev': { size: 32 * MiB, chunks: 8 },
  'blocked-many': { size: 32 * MiB, chunks: 200 },
  'in-call': { size: 4 * MiB, chunks: 1 },
};
const PEER_LIMIT_MS = 10000;

// A JS Duplex over a TCP connection (so the client's ciphertext goes through
// JavaScript), with room for a whole write: the engine goes on encrypting
// slice after slice within one write() call. beforeWrite runs at each
// ciphertext write.
function duplexTo(port, beforeWrite) {
  const tcp = net.connect(port, '127.0.0.1');
  const duplex = new Duplex({
    writableHighWaterMark: 256 * MiB,
    write(chunk, encoding, callback) {
      beforeWrite();
      tcp.write(chunk, callback);
    },
    final(callback) {
      tcp.end(callback);
    },
    read() {},
    destroy(err, callback) {
      tcp.destroy();
      callback(err);
    },
  });
  tcp.on('data', (data) => duplex.push(data));
  tcp.on('end', () => duplex.push(null));
  tcp.on('error', (err) => duplex.destroy(err));
  return duplex;
}

async function run(scenario) {
  const { size, chunks } = SCENARIOS[scenario];
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
      if (scenario !== 'handshake') socket.pause();
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
  let writing = false;
  let detachedInWrite = null;
  let moved = null;
  const detach = () => {
    moved = structuredClone(arrayBuffer, { transfer: [arrayBuffer] });
    new Uint8Array(moved).fill(0xee);
  };
  let options = clientOptions(port);
  if (scenario === 'in-call') {
    options = {
      ...options,
      socket: duplexTo(port, () => {
        if (!writing || moved !== null) return;
        detachedInWrite = true;
        detach();
      }),
    };
  }
  const client = tlswrap.connect(options);
  client.on('error', () => {});

  if (scenario !== 'handshake') {
    await once(client, 'secureConnect');
    while (!peerSocket) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  let called = false;
  writing = true;
  if (chunks === 1) {
    client.write(buffer, () => { called = true; });
  } else {
    client.cork();
    const step = Math.ceil(size / chunks);
    for (let at = 0; at < size; at += step) {
      const last = at + step >= size;
      client.write(buffer.subarray(at, Math.min(size, at + step)), last ? () => { called = true; } : undefined);
    }
    client.uncork();
  }
  writing = false;
  client.end();
  if (scenario === 'in-call') {
    result.detachedInWrite = detachedInWrite;
    result.pendingAtDetach = !called;
  } else {
    // Blocked: let the kernel buffers and the transport queue fill up, so
    // the rest of the write is still waiting in the engine.
    if (scenario !== 'handshake') await new Promise((resolve) => setTimeout(resolve, 300));
    result.pendingAtDetach = !called;
    detach();
  }
  if (peerSocket) peerSocket.resume();

  let timer;
  result.peer = await Promise.race([
    peerDone,
    new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), PEER_LIMIT_MS); }),
  ]);
  clearTimeout(timer);
  result.movedLength = moved === null ? null : moved.byteLength; // keeps the memory alive to the end
  client.destroy();
  if (peerSocket) peerSocket.destroy();
  await closeServer(server);
  return result;
}

if (require.main === module) {
  const scenario = process.argv[2];
  if (!SCENARIOS[scenario]) throw new Error(`no scenario ${scenario}`);
  run(scenario).then((result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
}
