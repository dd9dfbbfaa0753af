'use strict';

// tls.Server and the sockets it hands out: net.Server options that node:tls
// carries over to its TLS sockets.

const assert = require('node:assert');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { tlswrap, serverOptions, clientOptions, listen, release } = require('./common');

// A server with `extra` options and one client of it that has written
// 'hello'; resolves once the server has its socket.
async function helloPair(extra) {
  const server = tlswrap.createServer(serverOptions(extra));
  const accepted = once(server, 'secureConnection');
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port));
  await once(client, 'secureConnect');
  client.write('hello');
  const [sock] = await accepted;
  return { server, sockets: [client, sock], sock };
}

describe('server: pauseOnConnect', function () {
  // node:tls makes each TLS socket paused (its pauseOnCreate): the handshake
  // runs, but plaintext waits for resume(), even with a 'data' listener.
  it("the socket is paused: no 'data' before resume(), all of it after", async function () {
    const { server, sockets, sock } = await helloPair({ pauseOnConnect: true });
    try {
      assert.strictEqual(sock.isPaused(), true);
      assert.strictEqual(sock.readableFlowing, false);
      const chunks = [];
      sock.on('data', (d) => chunks.push(d));
      await sleep(200);
      assert.strictEqual(chunks.length, 0, "'data' before resume()");
      sock.resume();
      while (Buffer.concat(chunks).length < 5) await once(sock, 'data');
      assert.strictEqual(Buffer.concat(chunks).toString(), 'hello');
    } finally {
      await release(sockets, null, server);
    }
  });

  it('without it the socket flows as soon as it has a data listener', async function () {
    const { server, sockets, sock } = await helloPair({});
    try {
      assert.strictEqual(sock.isPaused(), false);
      const [data] = await once(sock, 'data');
      assert.strictEqual(data.toString(), 'hello');
    } finally {
      await release(sockets, null, server);
    }
  });
});

describe("server: the TCP socket under a connection ('connection' event)", function () {
  it('has the connection\'s addresses once the TLS socket is up, and counts until it closes', async function () {
    const server = tlswrap.createServer(serverOptions());
    const raw = once(server, 'connection');
    const accepted = once(server, 'secureConnection');
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    await once(client, 'secureConnect');
    const [[tcp], [sock]] = await Promise.all([raw, accepted]);
    try {
      assert.strictEqual(tcp.remoteAddress, '127.0.0.1');
      assert.strictEqual(tcp.remotePort, client.localPort);
      assert.strictEqual(tcp.remoteFamily, 'IPv4');
      assert.strictEqual(tcp.localPort, port);
      assert.deepStrictEqual(tcp.address(), sock.address());
      const count = () => new Promise((resolve, reject) => {
        server.getConnections((err, n) => (err ? reject(err) : resolve(n)));
      });
      assert.strictEqual(await count(), 1);
      const closed = once(sock, 'close');
      sock.on('end', () => sock.end());
      client.end();
      await closed;
      await sleep(20);
      assert.strictEqual(await count(), 0);
    } finally {
      await release([client, sock], null, server);
    }
  });
});
