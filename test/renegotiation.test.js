'use strict';

// TLS 1.2 renegotiation with socket.renegotiate(options, callback): data
// written before, during and after it arrives complete and in order, and the
// callback is called once, with no error, when the new handshake is done.
// Each side of the connection is tlswrap in turn, the other end node:tls.

const assert = require('node:assert');
const tls = require('node:tls');
const { once } = require('node:events');
const {
  tlswrap, serverOptions, clientOptions, listen, startRecordProxy, RecordType, assertSameText, release,
} = require('./common');

const TLS12 = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' };

// Reads a socket to its end; resolves with the bytes as a string.
function readAll(socket) {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => { text += chunk; });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

// Enough bytes that the data around the handshake spans several records.
const big = (ch) => ch.repeat(40000);

describe('renegotiation (TLS 1.2)', function () {
  let server;
  let sockets;
  let proxy;
  let wire;

  beforeEach(function () {
    sockets = [];
    proxy = null;
  });

  afterEach(async function () {
    await release(sockets, proxy, server);
    server = null;
  });

  // Puts a record proxy in front of `port` that counts handshake records
  // seen after the first application-data record: proof on the wire that a
  // second handshake really took place.
  async function viaProxy(port) {
    // Also, per direction, how many application-data bytes went before its
    // first handshake record after the first data: the renegotiation must
    // queue behind what was written before renegotiate() was called.
    wire = { appData: false, lateHandshakes: 0, appBytes: {}, appBytesBeforeHandshake: {} };
    proxy = await startRecordProxy(port, (direction, record) => {
      if (record[0] === RecordType.applicationData) {
        wire.appData = true;
        wire.appBytes[direction] = (wire.appBytes[direction] || 0) + record.length - 5;
      } else if (record[0] === RecordType.handshake && wire.appData) {
        wire.lateHandshakes++;
        if (!(direction in wire.appBytesBeforeHandshake)) {
          wire.appBytesBeforeHandshake[direction] = wire.appBytes[direction] || 0;
        }
      }
    });
    return proxy.port;
  }

  // Starts a server of `impl`; resolves with its port and a promise of the
  // first server-side socket.
  async function start(impl, extra) {
    server = impl.createServer(serverOptions({ ...TLS12, ...extra }));
    const secured = new Promise((resolve) => {
      server.on('secureConnection', (socket) => {
        sockets.push(socket);
        resolve(socket);
      });
    });
    return { port: await listen(server), secured };
  }

  function connect(impl, port, extra) {
    const socket = impl.connect(clientOptions(port, { ...TLS12, ...extra }));
    sockets.push(socket);
    return socket;
  }

  // `initiator` renegotiates: writes before, during and after; the other
  // side reads everything in order. Also returns the callback's calls.
  async function renegotiateAndSend(initiator) {
    const calls = [];
    initiator.write(big('a'));
    initiator.write('|before|');
    const returned = initiator.renegotiate({}, (err) => {
      calls.push(err);
      initiator.write('|after|');
      initiator.end(big('c'));
    });
    assert.strictEqual(returned, true);
    initiator.write('|during|');
    initiator.write(big('b'));
    return calls;
  }

  const expected = `${big('a')}|before||during|${big('b')}|after|${big('c')}`;

  // On the wire, the initiator's handshake record came after the ciphertext
  // of everything it wrote before renegotiate().
  function assertQueuedBehindWrites(direction) {
    const before = wire.appBytesBeforeHandshake[direction];
    const written = big('a').length + '|before|'.length;
    assert.ok(before >= written, `the renegotiation's first record went out after ${before} bytes of ` +
      `application data, before the ${written} bytes written ahead of renegotiate()`);
  }

  for (const side of ['server', 'client']) {
    const serverImpl = side === 'server' ? tlswrap : tls;
    const clientImpl = side === 'client' ? tlswrap : tls;

    it(`server-initiated, tlswrap ${side}: data in order, callback once`, async function () {
      const { port, secured } = await start(serverImpl);
      const client = connect(clientImpl, await viaProxy(port));
      const received = readAll(client);
      client.on('end', () => client.end());
      const peer = await secured;
      peer.resume();
      const calls = await renegotiateAndSend(peer);
      assertSameText(await received, expected, 'received');
      assert.deepStrictEqual(calls, [null]);
      assert.ok(wire.lateHandshakes > 0, 'no handshake records after the first data: no renegotiation');
      assertQueuedBehindWrites('toClient');
    });

    // node:tls checks disableRenegotiation() on a server socket only: a
    // client that called it follows the server's renegotiation, no error.
    it(`server-initiated after the client's disableRenegotiation(), tlswrap ${side}: no error, data in order`,
      async function () {
        const { port, secured } = await start(serverImpl);
        const client = connect(clientImpl, await viaProxy(port));
        client.disableRenegotiation();
        const errors = [];
        client.on('error', (err) => errors.push(err));
        const received = readAll(client);
        client.on('end', () => client.end());
        const peer = await secured;
        peer.resume();
        const calls = await renegotiateAndSend(peer);
        assertSameText(await received, expected, 'received');
        assert.deepStrictEqual(calls, [null]);
        assert.deepStrictEqual(errors, []);
        assert.ok(wire.lateHandshakes > 0, 'no handshake records after the first data: no renegotiation');
      });

    // From a 'data' handler the writes wait in tlswrap's engine until the
    // handler returns: the renegotiation must still go out behind them.
    it(`server-initiated from a 'data' handler, tlswrap ${side}: on the wire behind the earlier writes`,
      async function () {
        const { port, secured } = await start(serverImpl);
        const client = connect(clientImpl, await viaProxy(port));
        const received = readAll(client);
        client.on('end', () => client.end());
        const peer = await secured;
        const calls = await new Promise((resolve) => {
          peer.once('data', () => resolve(renegotiateAndSend(peer)));
          client.write('go');
        });
        assertSameText(await received, expected, 'received');
        assert.deepStrictEqual(calls, [null]);
        assertQueuedBehindWrites('toClient');
      });

    it(`client-initiated, tlswrap ${side}: data in order, callback once`, async function () {
      const { port, secured } = await start(serverImpl);
      // node:tls clients of Node 24 call back from renegotiate() without
      // sending a ClientHello, so there a tlswrap client drives the server
      // (and against node:tls alone there is nothing to test).
      const nodeMajor = Number(process.versions.node.split('.')[0]);
      if (require('./common').builtin && nodeMajor >= 24) this.skip();
      const renegotiator = side === 'server' && nodeMajor >= 24 ? tlswrap : clientImpl;
      const client = connect(renegotiator, await viaProxy(port));
      client.resume();
      await once(client, 'secureConnect');
      const peer = await secured;
      const received = readAll(peer);
      const calls = await renegotiateAndSend(client);
      assertSameText(await received, expected, 'received');
      assert.deepStrictEqual(calls, [null]);
      assert.ok(wire.lateHandshakes > 0, 'no handshake records after the first data: no renegotiation');
      assertQueuedBehindWrites('toServer');
    });

    it(`renegotiate() twice in a row, tlswrap ${side}: both called back, data still flows`, async function () {
      const { port, secured } = await start(serverImpl);
      const client = connect(clientImpl, port);
      await once(client, 'secureConnect');
      const peer = await secured;
      const [initiator, other] = side === 'server' ? [peer, client] : [client, peer];
      other.on('end', () => other.end());
      const received = readAll(other);
      initiator.resume();
      const called = (socket) => new Promise((resolve) => {
        assert.strictEqual(socket.renegotiate({}, resolve), true);
      });
      // The second asks while the first is under way.
      const both = Promise.all([called(initiator), called(initiator)]);
      initiator.write(big('a'));
      assert.deepStrictEqual(await both, [null, null]);
      initiator.end('|after|');
      assertSameText(await received, `${big('a')}|after|`, 'received');
    });

    it(`renegotiation in TLS 1.3 is refused through the callback, tlswrap ${side}`, async function () {
      const tls13 = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' };
      server = serverImpl.createServer(serverOptions(tls13));
      const secured = new Promise((resolve) => server.on('secureConnection', resolve));
      const port = await listen(server);
      const client = clientImpl.connect(clientOptions(port, tls13));
      sockets.push(client);
      await once(client, 'secureConnect');
      const peer = await secured;
      sockets.push(peer);
      const me = side === 'server' ? peer : client;
      const other = side === 'server' ? client : peer;
      let returned;
      let inside = true;
      let calledInside;
      const err = await new Promise((resolve) => {
        returned = me.renegotiate({}, (e) => {
          calledInside = inside;
          resolve(e);
        });
        inside = false;
      });
      assert.strictEqual(returned, false);
      // node calls back on a later tick, not from inside renegotiate().
      assert.strictEqual(calledInside, false);
      assert.ok(err instanceof Error);
      assert.match(err.code, /^ERR_SSL_/);
      // The connection is still usable.
      me.write('still here');
      const [chunk] = await once(other, 'data');
      assert.strictEqual(chunk.toString(), 'still here');
    });
  }

  // A client that never stops sending leaves part of a record in OpenSSL's
  // read buffer at almost every read: the server's renegotiation still
  // starts at a record boundary, as node:tls's does, not after the upload.
  for (const clientImpl of [tls, tlswrap]) {
    it(`tlswrap server renegotiates during a ${clientImpl === tls ? 'node:tls' : 'tlswrap'} client's upload`,
      async function () {
        const { port, secured } = await start(tlswrap);
        const client = connect(clientImpl, port);
        await once(client, 'secureConnect');
        const peer = await secured;
        const total = 8 * 1024 * 1024;
        const upload = Buffer.alloc(total, 'u');
        let received = 0;
        let receivedAtCallback = -1;
        const done = new Promise((resolve, reject) => {
          peer.on('data', (chunk) => {
            const before = received;
            received += chunk.length;
            if (before < 1024 * 1024 && received >= 1024 * 1024) {
              peer.renegotiate({}, (err) => {
                if (err) reject(err);
                receivedAtCallback = received;
              });
            }
          });
          peer.on('end', resolve);
          peer.on('error', reject);
        });
        let offset = 0;
        (function send() {
          while (offset < total) {
            const piece = upload.subarray(offset, offset + 65536);
            offset += piece.length;
            if (!client.write(piece)) return client.once('drain', send);
          }
          client.end();
        })();
        await done;
        assert.strictEqual(received, total);
        assert.ok(receivedAtCallback !== -1, 'the renegotiation did not complete before the upload ended');
        assert.ok(receivedAtCallback < total, 'the renegotiation waited for the upload to end');
      });
  }

  it('tlswrap server: more client renegotiations than CLIENT_RENEG_LIMIT is an attack', async function () {
    const { port, secured } = await start(tlswrap);
    const client = connect(tls, port);
    client.on('error', () => {});
    await once(client, 'secureConnect');
    const peer = await secured;
    peer.resume();
    const errors = [];
    peer.on('error', (err) => errors.push(err));
    const renegotiate = () => new Promise((resolve) => client.renegotiate({}, resolve));
    // tls.CLIENT_RENEG_LIMIT (3) renegotiations within the window are fine.
    for (let i = 0; i < tls.CLIENT_RENEG_LIMIT; i++) {
      assert.strictEqual(await renegotiate(), null);
      assert.deepStrictEqual(errors, []);
    }
    const attacked = once(peer, 'error');
    renegotiate();
    const [err] = await attacked;
    assert.strictEqual(err.code, 'ERR_TLS_SESSION_ATTACK');
  });
});

// A pskCallback runs JS in the middle of a renegotiation's handshake, with
// OpenSSL on the stack: memory the engine is encrypting from or decrypting
// into can be detached there. In a child process (a use-after-free may
// crash it).
// renegotiate() from a server callback during the first handshake: OpenSSL
// has chosen the version by then. TLS 1.3 has no renegotiation: refused at
// once, as node:tls refuses it (false, and the callback gets OpenSSL's
// error); TLS 1.2: the handshake under way serves.
describe('renegotiate() during the first handshake', function () {
  for (const [where, maxVersion, expected] of [
    ['SNICallback', 'TLSv1.3', ['false', 'ERR_SSL_WRONG_SSL_VERSION']],
    ['ALPNCallback', 'TLSv1.3', ['false', 'ERR_SSL_WRONG_SSL_VERSION']],
    ['SNICallback', 'TLSv1.2', ['true', 'null']],
  ]) {
    it(`from a ${maxVersion} server's ${where}: ${expected[0]}, the callback gets ${expected[1]}; the connection works`, async function () {
      const seen = [];
      let answered;
      const called = new Promise((resolve) => { answered = resolve; });
      const ask = (socket) => seen.push(String(socket.renegotiate({}, (err) => answered(err ? err.code : 'null'))));
      const extra = { maxVersion };
      if (where === 'SNICallback') extra.SNICallback = function (name, cb) { ask(this); cb(null, null); };
      else extra.ALPNCallback = function ({ protocols }) { ask(this); return protocols[0]; };
      const server = tlswrap.createServer(serverOptions(extra), (sock) => sock.end('served'));
      const port = await listen(server);
      const client = tlswrap.connect(clientOptions(port, { ALPNProtocols: ['a'] }));
      try {
        assert.strictEqual(await readAll(client), 'served');
        seen.push(await called);
        assert.deepStrictEqual(seen, expected);
      } finally {
        await release([client], null, server);
      }
    });
  }
});

// A client that asks before its first handshake is through (from its
// 'connect' listener) against a TLS 1.2 server: that handshake serves, and
// the connection carries data as usual (OpenSSL left in init would hold
// every write back for good).
describe("renegotiate() from a client's 'connect' listener", function () {
  it('the first handshake serves: the callback gets null, data flows both ways', async function () {
    // node:tls calls SSL_renegotiate() mid-handshake here, and its writes
    // then wait for ever: this pins tlswrap's way.
    if (require('./common').builtin) this.skip();
    const server = tls.createServer(serverOptions(TLS12), (sock) => sock.on('data', (d) => sock.write(`echo:${d}`)));
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    const seen = [];
    client.on('connect', () => {
      seen.push(String(client.renegotiate({}, (err) => seen.push(`callback ${err ? err.code : null}`))));
    });
    try {
      await once(client, 'secureConnect');
      client.write('ping');
      const [reply] = await once(client, 'data');
      assert.strictEqual(reply.toString(), 'echo:ping');
      assert.deepStrictEqual(seen, ['true', 'callback null']);
    } finally {
      await release([client], null, server);
    }
  });
});

// The server ends its side (close_notify) before it has seen the client's
// renegotiation ClientHello, so it never answers it. The client's write
// queued behind that handshake can never go out: it must fail, not wait for
// ever with the socket open (node:tls's SSL_write fails, 'write EPROTO').
describe('a renegotiation the server closed on', function () {
  it("the client's write behind it fails and the socket closes", async function () {
    const server = tls.createServer(serverOptions(TLS12), (sock) => {
      sock.on('error', () => {});
      sock.once('data', () => sock.end('x'));
    });
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port, TLS12));
    client.on('error', () => {});
    client.resume();
    client.write('a');
    try {
      await once(client, 'secureConnect');
      client.renegotiate({}, () => {});
      const result = new Promise((resolve) => client.write('behind the handshake', resolve));
      const outcome = await Promise.race([result, new Promise((resolve) => setTimeout(resolve, 3000, 'hung'))]);
      assert.ok(outcome instanceof Error, `the write's callback: ${outcome}`);
      if (!client.destroyed) await once(client, 'close');
    } finally {
      await release([client], null, server);
    }
  });
});

// A server that renegotiates as soon as it is secure, and ends: its
// HelloRequest and close_notify come right behind its Finished, in the same
// read. node:tls (Node 20, 22) runs 'secureConnect' before OpenSSL reads the
// HelloRequest, so what the client writes there goes out at once; behind
// the renegotiation (which the server never finishes) it would fail.
describe("a client's write in 'secureConnect' with a HelloRequest behind the server's Finished", function () {
  for (const [name, serverImpl] of [['node:tls', tls], ['tlswrap', tlswrap]]) {
    it(`${name} server: the write reaches the server, its callback gets no error`, async function () {
      // node:tls clients of Node 24 and 26 hold that write behind the
      // renegotiation for good (no callback, no 'close'): tlswrap keeps
      // Node 20's and 22's answer.
      const nodeMajor = Number(process.versions.node.split('.')[0]);
      if (require('./common').builtin && nodeMajor >= 24) this.skip();
      let received = '';
      const serverClosed = [];
      const server = serverImpl.createServer(serverOptions(TLS12), (sock) => {
        sock.on('error', () => {});
        sock.setEncoding('latin1');
        sock.on('data', (d) => { received += d; });
        serverClosed.push(once(sock, 'close'));
        sock.renegotiate({}, () => {});
        sock.end();
      });
      const port = await listen(server);
      const client = tlswrap.connect(clientOptions(port, TLS12));
      const errors = [];
      client.on('error', (err) => errors.push(err.code));
      client.resume();
      const written = new Promise((resolve) => {
        client.on('secureConnect', () => client.write('from secureConnect', (err) => resolve(err ? err.code : 'ok')));
      });
      try {
        const outcome = await Promise.race([written, new Promise((resolve) => setTimeout(resolve, 5000, 'hung'))]);
        await Promise.race([once(client, 'close'), new Promise((resolve) => setTimeout(resolve, 5000))]);
        await Promise.race([Promise.all(serverClosed), new Promise((resolve) => setTimeout(resolve, 5000))]);
        assert.deepStrictEqual({ outcome, received, errors }, { outcome: 'ok', received: 'from secureConnect', errors: [] });
      } finally {
        await release([client], null, server);
      }
    });
  }
});

describe('memory detached by a pskCallback during a renegotiation (TLS 1.2, child process)', function () {
  const { runChild, describeExit } = require('./run-child');
  const { builtin } = require('./common');

  it('a Buffer being written: the peer gets the bytes it held when write() was called', async function () {
    const run = await runChild('renegotiation-detach.js', ['write'], { nodeArgs: ['--expose-gc'] });
    assert.ok(run.code === 0 && run.result, describeExit(run));
    const r = run.result;
    // tlswrap runs the handshake inside that write() (node:tls holds the
    // write back until the handshake is over, so there is nothing to detach).
    if (!builtin) assert.ok(r.detachedInWrite, 'the pskCallback did not run inside write(): the test proves nothing');
    assert.strictEqual(r.received, 200 * 1024);
    assert.strictEqual(r.wrong, 0, `${r.wrong} bytes differ from what was written (read after the Buffer was detached)`);
  });

  it('the onread buffer being decrypted into: the socket errors with ERR_INVALID_STATE, no crash', async function () {
    // tlswrap's: it decrypts into the onread buffer while the handshake runs
    // (node:tls does not, and renegotiates).
    if (builtin) this.skip();
    const run = await runChild('renegotiation-detach.js', ['read'], { nodeArgs: ['--expose-gc'] });
    assert.ok(run.code === 0 && run.result, describeExit(run));
    assert.ok(run.result.detached, 'the pskCallback never detached the buffer: the test proves nothing');
    assert.strictEqual(run.result.error, 'ERR_INVALID_STATE');
  });
});
