'use strict';

// tls.Server and the sockets it hands out: net.Server options that node:tls
// carries over to its TLS sockets.

const assert = require('node:assert');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { builtin, tlswrap, serverOptions, clientOptions, listen, release } = require('./common');

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

// A handshake that waits for the program (an SNICallback, an 'OCSPRequest'
// or 'resumeSession' listener that has not called back) still sees the
// client go: as with node:tls, 'tlsClientError' ECONNRESET at once, and the
// connection is freed, however long the callback takes (here: forever, and
// no handshakeTimeout).
describe('server: a client that leaves while the handshake waits for a callback', function () {
  const { fixtures } = require('./common');
  for (const pause of ['SNICallback', 'OCSPRequest', 'resumeSession']) {
    it(`${pause} that never answers: tlsClientError ECONNRESET once the client leaves, nothing left open`, async function () {
      let asked;
      const paused = new Promise((resolve) => { asked = resolve; });
      const extra = { handshakeTimeout: 0 };
      if (pause === 'SNICallback') extra.SNICallback = () => asked();
      // TLS 1.2 without tickets: the second connection's session id goes to 'resumeSession'.
      if (pause === 'resumeSession') Object.assign(extra, { maxVersion: 'TLSv1.2', secureOptions: require('node:crypto').constants.SSL_OP_NO_TICKET });
      const server = tlswrap.createServer(serverOptions(extra));
      const errors = [];
      server.on('tlsClientError', (err) => errors.push(err.code));
      let session = null;
      if (pause === 'OCSPRequest') server.on('OCSPRequest', () => asked());
      if (pause === 'resumeSession') {
        const sessions = new Map();
        server.on('newSession', (id, data, cb) => { sessions.set(id.toString('hex'), data); cb(); });
        server.on('resumeSession', (id, cb) => {
          if (session === null) cb(null, sessions.get(id.toString('hex')) || null);
          else asked();
        });
      }
      const port = await listen(server);
      try {
        if (pause === 'resumeSession') {
          const first = tlswrap.connect(clientOptions(port));
          [session] = await once(first, 'session');
          first.destroy();
        }
        const client = tlswrap.connect(clientOptions(port, { session: session || undefined, requestOCSP: pause === 'OCSPRequest' }));
        client.on('error', () => {});
        await paused;
        client.destroy();
        const deadline = Date.now() + 5000;
        while (errors.length === 0 && Date.now() < deadline) await sleep(20);
        assert.deepStrictEqual(errors, ['ECONNRESET']);
        const open = await new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
        assert.strictEqual(open, 0);
      } finally {
        await release([], null, server);
      }
    });
  }

  // TLS 1.3: what the server sends after a session was made waits for
  // 'newSession' (tlswrap holds it; node:tls, too, holds the data). Once
  // the client has gone, the server's end() must not wait behind it.
  it("a 'newSession' listener that never answers: the server socket still closes once the client leaves", async function () {
    // node:tls 20 and 22 close it; 24 on keep it open for good.
    if (builtin && Number(process.versions.node.split('.')[0]) >= 24) this.skip();
    const server = tlswrap.createServer(serverOptions({ handshakeTimeout: 0 }));
    server.on('newSession', () => {});
    const closed = new Promise((resolve) => {
      server.on('secureConnection', (sock) => {
        sock.on('error', () => {});
        sock.on('close', resolve);
        sock.end('never seen');
      });
    });
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      client.on('error', () => {});
      await once(client, 'secureConnect');
      await sleep(50);
      client.destroy();
      const timedOut = Symbol('timed out');
      const result = await Promise.race([closed.then(() => 'closed'), sleep(5000, timedOut)]);
      assert.strictEqual(result, 'closed');
      const open = await new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
      assert.strictEqual(open, 0);
    } finally {
      await release([], null, server);
    }
  });
});
