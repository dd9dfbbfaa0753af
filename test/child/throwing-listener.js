'use strict';

// A listener that throws, in a process with an 'uncaughtException' handler
// (so the process carries on), or without one ('... no handler': the process
// dies of it). Run as `node throwing-listener.js SCENARIO` by
// test/destroy.test.js and test/eof.test.js: the handler is process-wide,
// which mocha's own must not share. Prints one JSON line, then must exit by
// itself: a handle still open after that (a connection the engine forgot to
// close) makes it exit with code 3 instead.

const fs = require('node:fs');
const net = require('node:net');
const tls = require('node:tls');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions, listen, closeServer, SocketDuplex } = require('../common');

const WAIT_MS = 3000;
const LINGER_MS = 3000;

const uncaught = [];
// What happened, listener calls and uncaught exceptions, in order.
const timeline = [];
function onUncaught(err) {
  uncaught.push(err.message);
  timeline.push(`uncaught ${err.message}`);
}
process.on('uncaughtException', onUncaught);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
function within(promise, ms) {
  let timer;
  return Promise.race([
    promise,
    new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), ms); }),
  ]).finally(() => clearTimeout(timer));
}

// Open TCP sockets of this process (Linux; null elsewhere).
function socketFds() {
  try {
    return fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:');
      } catch {
        return false;
      }
    }).length;
  } catch {
    return null;
  }
}

const scenarios = {
  // A tlswrap server's 'data' listener destroys its socket, then throws.
  // The peer (node:tls) is writing 1 MiB meanwhile.
  async 'destroy then throw'() {
    const fdsBefore = socketFds();
    const events = [];
    const server = tlswrap.createServer(serverOptions(), (socket) => {
      socket.on('error', (err) => events.push(`error ${err.code}`));
      socket.on('close', () => events.push('close'));
      socket.once('data', () => {
        socket.destroy();
        throw new Error('thrown by a data listener');
      });
    });
    const port = await listen(server);
    const peer = tls.connect(clientOptions(port));
    const peerClosed = new Promise((resolve) => {
      peer.on('error', (err) => resolve(`error ${err.code}`));
      peer.on('close', () => resolve('close'));
    });
    await once(peer, 'secureConnect');
    peer.write(Buffer.alloc(1024 * 1024, 'p'));
    const peerSaw = await within(peerClosed, WAIT_MS);
    peer.destroy();
    await closeServer(server);
    await sleep(100);
    return { events, peerSaw, uncaught, socketFdsLeft: fdsBefore === null ? 0 : socketFds() - fdsBefore };
  },

  // A node:tls server writes, then ends: the data and its close_notify (and
  // the FIN) reach the tlswrap client in one burst. The client's 'data'
  // listener throws once.
  async 'throw once then end'() {
    const events = [];
    let thrown = false;
    const result = await burstToClient((client) => {
      client.on('data', (chunk) => {
        events.push(`data ${chunk.length}`);
        if (thrown) return;
        thrown = true;
        throw new Error('thrown by a data listener');
      });
      client.on('end', () => events.push('end'));
      client.on('error', (err) => events.push(`error ${err.code}`));
      client.on('close', () => events.push('close'));
    });
    return { events, closed: result, uncaught };
  },

  // As above, with the order of the listener calls and the uncaught
  // exception in one list.
  async 'throw in data, then end'() {
    const result = await burstToClient((client) => {
      client.on('data', (chunk) => {
        timeline.push(`data ${chunk.length}`);
        throw new Error('thrown by a data listener');
      });
      client.on('end', () => timeline.push('end'));
      client.on('error', (err) => timeline.push(`error ${err.code}`));
      client.on('close', () => timeline.push('close'));
    });
    return { timeline, closed: result };
  },

  // The 'data' listener throws, and so does the 'end' listener, with no
  // handler: the process dies of the first exception, never the second.
  async 'throw in data and end, no handler'() {
    process.removeListener('uncaughtException', onUncaught);
    const result = await burstToClient((client) => {
      client.on('data', () => {
        throw new Error('thrown by a data listener');
      });
      client.on('end', () => {
        throw new Error('thrown by an end listener');
      });
    });
    return { closed: result };
  },

  // The client's ciphertext comes through a JS stream, which pushes 100 KiB
  // of it at once; the 'data' listener throws at its first two calls.
  async 'js stream, data throws twice'() {
    const server = tls.createServer(serverOptions());
    const serverSide = once(server, 'secureConnection');
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    await once(raw, 'connect');
    const duplex = new HoldingDuplex(raw);
    const client = tlswrap.connect(clientOptions(port, { socket: duplex }));
    client.on('error', () => {});
    await once(client, 'secureConnect');
    const [peer] = await serverSide;
    await sleep(100); // TLS 1.3 tickets pass before the hold
    duplex.held = [];
    let calls = 0;
    let received = 0;
    client.on('data', (chunk) => {
      calls++;
      received += chunk.length;
      timeline.push('data');
      if (calls <= 2) throw new Error(`thrown by data listener call ${calls}`);
    });
    const SENT = 100 * 1024;
    await new Promise((resolve) => peer.write(Buffer.alloc(SENT, 'x'), resolve));
    for (let i = 0; i < 200 && duplex.heldBytes < SENT; i++) await sleep(10);
    try {
      duplex.release();
      timeline.push('push returned');
    } catch (err) {
      timeline.push(`push threw ${err.message}`);
    }
    await sleep(200);
    client.destroy();
    peer.destroy();
    raw.destroy();
    await closeServer(server);
    return { timeline, received };
  },
};

// A Duplex over `raw` that, while `held` is an Array, keeps what it reads
// there, and pushes it all at once on release().
class HoldingDuplex extends SocketDuplex {
  constructor(raw) {
    super(raw);
    this.held = null;
    this.heldBytes = 0;
  }

  _fromSocket(chunk) {
    if (this.held === null) {
      this.push(chunk);
      return;
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
  }

  release() {
    const all = Buffer.concat(this.held);
    this.held = null;
    this.push(all);
  }
}

// Connects a tlswrap client, through a proxy, to a node:tls server that,
// once the handshake is over, writes 100 bytes and ends: the proxy holds
// them back until the server has ended, so the data, its close_notify and
// the FIN reach the client in one burst. `listenTo(client)` adds the
// listeners under test; resolves with 'close' or 'timeout'.
async function burstToClient(listenTo) {
  const server = tls.createServer(serverOptions());
  const serverSide = once(server, 'secureConnection');
  const serverPort = await listen(server);
  let hold = false;
  const held = [];
  const sockets = [];
  const proxy = net.createServer({ allowHalfOpen: true }, (down) => {
    const up = net.connect({ port: serverPort, host: '127.0.0.1', allowHalfOpen: true });
    sockets.push(down, up);
    down.on('error', () => {});
    up.on('error', () => {});
    down.pipe(up);
    up.on('data', (chunk) => (hold ? held.push(chunk) : down.write(chunk)));
    up.on('end', () => down.end(Buffer.concat(held)));
  });
  const proxyPort = await listen(proxy);

  const client = tlswrap.connect(clientOptions(proxyPort));
  listenTo(client);
  const closed = new Promise((resolve) => client.on('close', () => resolve('close')));
  await once(client, 'secureConnect');
  const [peer] = await serverSide;
  await sleep(100); // TLS 1.3 tickets pass before the hold
  hold = true;
  peer.end('x'.repeat(100));
  const result = await within(closed, WAIT_MS);
  client.destroy();
  for (const s of sockets) s.destroy();
  await closeServer(proxy);
  await closeServer(server);
  return result;
}

if (require.main === module) {
  const name = process.argv[2];
  if (!scenarios[name]) throw new Error(`no scenario ${name}`);
  scenarios[name]().then((result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    setTimeout(() => {
      process.stderr.write(`still running ${LINGER_MS} ms after the scenario ended (an open handle)\n`);
      process.exit(3);
    }, LINGER_MS).unref();
  });
}
