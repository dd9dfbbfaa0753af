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
