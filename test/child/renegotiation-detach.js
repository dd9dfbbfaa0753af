'use strict';

// JS that OpenSSL runs in the middle of a TLS 1.2 renegotiation (a
// pskCallback) takes away memory the engine is working with. Run as `node
// --expose-gc renegotiation-detach.js SCENARIO` by
// test/renegotiation.test.js, in a child process because a use-after-free
// may crash it. Prints one JSON line.
//
// write: the client is paused with the server's renegotiation reply already
//   handed to it, so a write() makes SSL_write run the rest of the handshake,
//   and the client's pskCallback, under it. The callback detaches the Buffer
//   being written and fills the memory (which V8 gives to the new
//   ArrayBuffer) with 0xEE: an engine that reads the old pointer after that
//   sends 0xEE bytes. The server reports what it received.
// read: the server renegotiates; the client's pskCallback, run while OpenSSL
//   decrypts into the client's onread buffer, detaches that buffer. The
//   client must end with an error, not write into the memory or crash.

const net = require('node:net');
const { Duplex } = require('node:stream');
const { tlswrap, builtin } = require('../common');

const KEY = Buffer.alloc(16, 7);
const PSK12 = { ciphers: 'PSK-AES128-CBC-SHA256', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' };
const SIZE = 200 * 1024;
const noNameCheck = () => undefined;

function detach(buffer) {
  const moved = structuredClone(buffer.buffer, { transfer: [buffer.buffer] });
  new Uint8Array(moved).fill(0xee);
  globalThis.gc();
  return moved;
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// A Duplex over TCP whose incoming bytes are held back while `hold` is set,
// until release() hands them over at once.
function heldDuplex(port) {
  const tcp = net.connect(port, '127.0.0.1');
  const state = { hold: false, held: [], arrived: null };
  const duplex = new Duplex({
    read() {},
    write(chunk, encoding, cb) { tcp.write(chunk, cb); },
    final(cb) { tcp.end(cb); },
    destroy(err, cb) { tcp.destroy(); cb(err); },
  });
  tcp.on('data', (chunk) => {
    if (!state.hold) {
      duplex.push(chunk);
      return;
    }
    state.held.push(chunk);
    if (state.arrived) state.arrived();
  });
  // The engine pauses its transport while the socket is paused; what is
  // released must reach the engine all the same.
  duplex.pause = function pause() { return this; };
  tcp.on('end', () => duplex.push(null));
  tcp.on('error', (err) => duplex.destroy(err));
  state.release = () => {
    state.hold = false;
    for (const chunk of state.held.splice(0)) duplex.push(chunk);
  };
  return { duplex, state };
}

async function writeScenario() {
  let received = 0;
  let wrong = 0;
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  const server = tlswrap.createServer({ ...PSK12, pskCallback: () => KEY }, (socket) => {
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      received += chunk.length;
      for (const byte of chunk) if (byte !== 0x41) wrong++;
      if (received >= SIZE) done();
    });
  });
  const port = await listen(server);
  const { duplex, state } = heldDuplex(port);
  let victim = null;
  let inWrite = false;
  let detachedInWrite = false;
  let kept = null;
  // onread: pause() stops the engine's reads at once (a 'data' socket reads
  // on up to its high-water mark).
  const client = tlswrap.connect({
    socket: duplex, ...PSK12, checkServerIdentity: noNameCheck,
    onread: { buffer: Buffer.alloc(1024), callback() {} },
    pskCallback() {
      if (victim !== null) {
        detachedInWrite = inWrite;
        kept = detach(victim);
        victim = null;
      }
      return { psk: KEY, identity: 'id' };
    },
  });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('secureConnect', resolve));
  client.pause();
  state.hold = true;
  const arrived = new Promise((resolve) => { state.arrived = resolve; });
  client.renegotiate({}, () => {});
  await arrived;
  // The rest of the server's flight, if it came in more than one piece.
  await new Promise((resolve) => setTimeout(resolve, 50));
  state.release();
  await new Promise((resolve) => setImmediate(resolve));
  victim = Buffer.alloc(SIZE, 0x41);
  inWrite = true;
  client.write(victim);
  inWrite = false;
  client.resume();
  const timer = setTimeout(done, 5000);
  await finished;
  clearTimeout(timer);
  client.destroy();
  server.close();
  return { received, wrong, detachedInWrite, kept: kept !== null };
}

async function readScenario() {
  const server = tlswrap.createServer({ ...PSK12, pskCallback: () => KEY }, (socket) => {
    socket.on('error', () => {});
    socket.on('data', () => {});
  });
  const port = await listen(server);
  const buffer = Buffer.alloc(16 * 1024);
  let calls = 0;
  let detached = false;
  const client = tlswrap.connect({
    port, host: '127.0.0.1', ...PSK12, checkServerIdentity: noNameCheck,
    onread: { buffer, callback() {} },
    pskCallback() {
      // The first is the handshake's, the second the renegotiation's.
      if (++calls === 2) {
        detach(buffer);
        detached = true;
      }
      return { psk: KEY, identity: 'id' };
    },
  });
  const result = await new Promise((resolve) => {
    client.on('error', (err) => resolve({ error: err.code || err.message }));
    client.on('close', () => resolve({ error: null }));
    client.once('secureConnect', () => client.renegotiate({}, (err) => {
      resolve({ error: err ? err.code || err.message : null, renegotiated: !err });
    }));
    setTimeout(() => resolve({ error: 'timeout' }), 5000);
  });
  client.destroy();
  server.close();
  return { ...result, detached };
}

const scenario = process.argv[2];
const run = { write: writeScenario, read: readScenario }[scenario];
if (!run) throw new Error(`unknown scenario ${scenario}`);
run().then((result) => {
  console.log(JSON.stringify({ builtin, ...result }));
  process.exit(0);
}, (err) => {
  console.error(err);
  process.exit(1);
});
