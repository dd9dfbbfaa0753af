'use strict';

// A listener that throws, in a process with an 'uncaughtException' handler
// (so the process carries on). Run as `node throwing-listener.js SCENARIO` by
// test/destroy.test.js and test/eof.test.js: the handler is process-wide,
// which mocha's own must not share. Prints one JSON line, then must exit by
// itself: a handle still open after that (a connection the engine forgot to
// close) makes it exit with code 3 instead.

const fs = require('node:fs');
const net = require('node:net');
const tls = require('node:tls');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions, listen, closeServer } = require('../common');

const WAIT_MS = 3000;
const LINGER_MS = 3000;

const uncaught = [];
process.on('uncaughtException', (err) => uncaught.push(err.message));

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
  // the FIN) reach the tlswrap client in one burst, held back by a proxy
  // until the server has ended. The client's 'data' listener throws once.
  async 'throw once then end'() {
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
    const events = [];
    let thrown = false;
    client.on('data', (chunk) => {
      events.push(`data ${chunk.length}`);
      if (thrown) return;
      thrown = true;
      throw new Error('thrown by a data listener');
    });
    client.on('end', () => events.push('end'));
    client.on('error', (err) => events.push(`error ${err.code}`));
    const closed = new Promise((resolve) => client.on('close', () => {
      events.push('close');
      resolve('close');
    }));
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
    return { events, closed: result, uncaught };
  },
};

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
