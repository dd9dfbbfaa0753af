'use strict';

// Writes on a tlswrap TLSSocket, as node:tls users rely on them: what a
// write callback promises, write()'s return value and 'drain', writes cut
// off by destroy(), a queued write whose memory is detached, and end() to a
// peer that resets on our close_notify, or that is gone before it.

const assert = require('node:assert');
const net = require('node:net');
const { once } = require('node:events');
const { builtin, tlswrap, serverOptions, clientOptions, listen, closeServer } = require('./common');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// 'close' without once(): once() would reject on an expected 'error'.
const closed = (s) => new Promise((resolve) => s.once('close', resolve));

describe('socket: a queued write whose ArrayBuffer is detached', function () {
  // The write's bytes are whatever the buffer held when write() was called:
  // detaching the ArrayBuffer afterwards (structuredClone/postMessage with
  // transfer, ArrayBuffer.prototype.transfer) must neither crash the process
  // nor send other bytes. The child fills the memory with 0xEE after the
  // transfer, so reading it through a stale pointer shows as wrong bytes.
  // node:tls passes: it sends nothing of a write still waiting for the
  // connection, and encrypts a blocked write whole when it is made.
  const { runChild, describeExit } = require('./run-child');

  for (const [scenario, when] of [
    ['handshake', 'before the handshake is done'],
    ['blocked', 'while the peer does not read'],
    ['blocked-writev', 'while the peer does not read, 8 corked chunks'],
    ['blocked-many', 'while the peer does not read, 200 corked chunks'],
    ['in-call', 'by the transport while write() is still encrypting'],
  ]) {
    it(`detached ${when}: no crash, the peer gets a prefix of the original bytes, never others`, async function () {
      this.timeout(30000);
      const run = await runChild('detached-write.js', [scenario]);
      assert.ok(run.code === 0 && run.result, describeExit(run));
      const r = run.result;
      assert.strictEqual(r.pendingAtDetach, true, 'the write completed before the detach: the test proved nothing');
      if (scenario === 'in-call') assert.strictEqual(r.detachedInWrite, true, 'the transport never ran inside write()');
      // What was encrypted before the detach arrives (node:tls sends nothing
      // of a write made before the handshake is done).
      if (scenario !== 'handshake') assert.ok(r.received > 0, 'the peer received nothing');
      assert.strictEqual(r.firstBad, null,
                         `the peer received bytes the buffer never held: at offset ${r.firstBad && r.firstBad.at} ` +
                         `got 0x${r.firstBad && r.firstBad.got.toString(16)} (${r.received} bytes received)`);
      assert.strictEqual(r.matching, r.received);
      assert.notStrictEqual(r.peer, 'timeout', 'the peer never saw the connection end');
    });
  }
});

describe('socket: a waiting write under a polluted Array.prototype', function () {
  const { runChild, describeExit } = require('./run-child');

  it('keeps its chunks without running an Array.prototype accessor from inside the engine', async function () {
    // Hooks the native handle's writev(): tlswrap's own.
    if (builtin) this.skip();
    const run = await runChild('prototype-accessor-write.js');
    assert.ok(run.code === 0 && run.result, describeExit(run));
    assert.strictEqual(run.result.accessorInWritev, 0, 'JavaScript ran inside writev()');
    assert.strictEqual(run.result.equal, true, `the peer got other bytes (${run.result.received})`);
  });
});

describe('socket: write callbacks', function () {
  // A write's callback means its bytes are in the kernel, as with node:tls:
  // destroy() right after the last callback that came may discard what was
  // never confirmed, never what was. The writer (tlswrap server) fills the
  // socket while the peer (node:tls client) does not read, until callbacks
  // stop for WRITE_STALL_MS; then it destroys, the peer resumes and counts.
  const WRITE_STALL_MS = 300;
  // Small chunks, several per _writev: with 16 KiB ones the JS transport
  // happens to confirm only what the kernel took.
  const CHUNK = 4096;

  it('destroy() after the last write callback loses none of the confirmed bytes', async function () {
    this.timeout(30000);
    const tls = require('node:tls');
    const server = tlswrap.createServer(serverOptions());
    const serverSide = once(server, 'secureConnection');
    const port = await listen(server);
    const peer = tls.connect(clientOptions(port));
    try {
      await once(peer, 'secureConnect');
      const [sock] = await serverSide;
      sock.on('error', () => {});
      peer.pause();

      const chunk = Buffer.alloc(CHUNK, 'w');
      let written = 0;
      let confirmed = 0;
      let lastCallback = Date.now();
      const write = () => {
        written += CHUNK;
        sock.write(chunk, (err) => {
          if (err) return;
          confirmed += CHUNK;
          lastCallback = Date.now();
        });
      };
      // Keep 256 KiB unconfirmed until the callbacks stop coming. A stall
      // with everything confirmed is the event loop held up (a slow
      // sanitizer run), not push-back: keep going then, up to a deadline.
      const deadline = Date.now() + 20000;
      while ((Date.now() - lastCallback < WRITE_STALL_MS || confirmed === written) && Date.now() < deadline) {
        while (written - confirmed < 64 * CHUNK) write();
        await sleep(20);
      }
      const confirmedAtDestroy = confirmed;
      assert.ok(confirmedAtDestroy < written, 'every write was confirmed: the peer never pushed back');
      sock.destroy();

      let received = 0;
      peer.on('data', (d) => { received += d.length; });
      const done = new Promise((resolve) => {
        peer.on('error', resolve);
        peer.on('close', resolve);
      });
      peer.resume();
      await Promise.race([done, sleep(10000)]);
      assert.ok(received >= confirmedAtDestroy,
                `${confirmedAtDestroy - received} bytes confirmed by write callbacks never reached the peer ` +
                `(confirmed ${confirmedAtDestroy}, received ${received})`);
    } finally {
      peer.destroy();
      await closeServer(server);
    }
  });
});

describe('socket: a write that destroy() sends on its way out', function () {
  // A write made from a handler waits in the engine; destroy() right after
  // it still sends it. Once its
  // bytes are in the kernel its callback reports success, as node:tls's
  // (which wrote them inside write()) does, not ECANCELED for bytes the
  // peer gets. On the JS transport too: a TCP socket that took them whole
  // has them in the kernel, though its callback comes on the next tick.
  for (const when of ["from the 'end' handler"]) {
    it(`write() then destroy() ${when}: the peer gets the bytes, the callback no error`, async function () {
      const results = [];
      let received = '';
      const peerDone = [];
      const accepted = [];
      const server = tlswrap.createServer(serverOptions({ allowHalfOpen: true }), (sock) => {
        accepted.push(sock);
        sock.on('error', () => {});
        sock.setEncoding('latin1');
        sock.on('data', (d) => { received += d; });
        peerDone.push(new Promise((resolve) => {
          sock.on('end', resolve);
          sock.on('close', resolve);
        }));
      });
      const port = await listen(server);
      const serverSide = once(server, 'secureConnection');
      const client = tlswrap.connect(clientOptions(port, { allowHalfOpen: true }));
      client.on('error', () => {});
      try {
        const [, [sock]] = await Promise.all([once(client, 'secureConnect'), serverSide]);
        client.once('end', () => {
          client.write('response', (err) => results.push(err || 'ok'));
          client.destroy();
        });
        sock.end();
        await Promise.race([peerDone[0], sleep(5000)]);
        assert.ok(received.endsWith('response'), `the peer got ${JSON.stringify(received)}`);
        await sleep(50);
        assert.deepStrictEqual(results, ['ok']);
      } finally {
        client.destroy();
        for (const sock of accepted) sock.destroy();
        await closeServer(server);
      }
    });
  }
});

describe('socket: a write whose ciphertext the kernel refuses', function () {
  // The peer resets while a big write is blocked: the socket fails with
  // "write ECONNRESET" (or EPIPE), and so does the write, as with node:tls
  // (its write request gets the kernel's error), not with ECANCELED.
  it("the write's callback gets the socket's write error", async function () {
    const tls = require('node:tls');
    let result = null;
    let socketError = null;
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.on('error', (err) => { socketError = err; });
      sock.write(Buffer.alloc(6 << 20), (err) => { result = err || 'ok'; });
    });
    const port = await listen(server);
    const serverSide = once(server, 'secureConnection');
    // The peer sends as much and resets on its first 'data' (it leaves
    // unread bytes behind): our blocked write fails in the kernel.
    const peer = tls.connect(clientOptions(port));
    peer.on('error', () => {});
    peer.write(Buffer.alloc(6 << 20));
    peer.once('data', () => peer.destroy());
    try {
      const [sock] = await serverSide;
      await Promise.race([closed(sock), sleep(10000)]);
      assert.ok(socketError !== null, 'the socket did not fail');
      if (socketError.syscall !== 'write') this.skip(); // the reset was seen by a read first
      assert.ok(result instanceof Error, `the write's callback got ${result}`);
      assert.strictEqual(result.code, socketError.code, `write: ${result}, socket: ${socketError}`);
      assert.strictEqual(result.syscall, 'write');
    } finally {
      peer.destroy();
      await closeServer(server);
    }
  });
  // The peer's TCP socket closes, and in the same turn several writes
  // follow: the first is taken and makes the peer's kernel reset, the next
  // is refused inside write() (EPIPE). As with node:tls, every callback runs
  // in write order, the refused ones with that error (the writes queued
  // behind it too, not ERR_STREAM_DESTROYED), then the socket's 'error',
  // then 'close'; write() itself reports nothing.
  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`${version}: a write refused inside write() fails after the earlier writes' callbacks, before 'error'`, async function () {
      const tls = require('node:tls');
      const peer = tls.createServer(serverOptions({ maxVersion: version }));
      const raws = [];
      peer.on('connection', (raw) => raws.push(raw));
      peer.on('secureConnection', (sock) => sock.on('error', () => {}));
      const port = await listen(peer);
      const peerSecure = once(peer, 'secureConnection');
      const client = tlswrap.connect(clientOptions(port));
      const log = [];
      client.on('error', (err) => log.push(`error ${err.syscall} ${err.code}`));
      try {
        await Promise.all([once(client, 'secureConnect'), peerSecure]);
        // Out of the engine's delivery of 'secureConnect' (a write made
        // under it waits for the cycle, and is not refused inside write()).
        await new Promise((resolve) => setImmediate(resolve));
        const returned = [];
        const done = closed(client);
        for (const raw of raws) raw.destroy();
        for (let i = 0; i < 6; i++) {
          returned.push(client.write(`chunk ${i}`, (err) => log.push(`cb${i} ${err ? `${err.syscall} ${err.code}` : 'ok'}`)));
        }
        await Promise.race([done, sleep(5000)]);
        log.push('close');
        // The reset was not back before the last write (a loaded machine):
        // nothing was refused inside write().
        if (log.slice(0, 6).every((e) => e.endsWith(' ok'))) this.skip();
        const failed = log.findIndex((e) => e.endsWith('EPIPE'));
        const expected = [];
        for (let i = 0; i < 6; i++) expected.push(`cb${i} ${i < failed ? 'ok' : 'write EPIPE'}`);
        expected.push('error write EPIPE', 'close');
        assert.deepStrictEqual(log, expected);
        assert.deepStrictEqual(returned, [true, true, true, true, true, true]);
      } finally {
        client.destroy();
        await closeServer(peer);
      }
    });
  }
});

describe('socket: write() return value and writes cut off by destroy()', function () {
  it("write() far above the high-water mark right after secureConnect returns false, 'drain' follows", async function () {
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.on('error', () => {});
      sock.resume();
    });
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    try {
      const result = await new Promise((resolve) => {
        client.on('secureConnect', () => {
          const big = Buffer.alloc(client.writableHighWaterMark * 64);
          const ret = client.write(big);
          client.once('drain', () => resolve({ ret, drained: true }));
        });
      });
      assert.deepStrictEqual(result, { ret: false, drained: true });
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  // The peer does not read, so an 8 MiB write cannot complete: destroy()
  // fails it with node:tls's error (Node >= 22: its write request's
  // ECANCELED; Node 20 completes it), and the write queued behind it fails too.
  for (const when of ['during the handshake', 'once the peer stops reading']) {
    it(`destroy() ${when}: every pending write gets its callback, with an error`, async function () {
      const accepted = [];
      const server = tlswrap.createServer(serverOptions(), (sock) => {
        sock.on('error', () => {});
        sock.pause();
        accepted.push(sock);
      });
      // The TCP sockets too: a server socket whose handshake ends after the
      // client's destroy() (a slow run: ASan, valgrind) is paused and never
      // sees the client go, and close() would wait for it for ever.
      const connections = [];
      server.on('connection', (raw) => connections.push(raw));
      const port = await listen(server);
      const serverSecure = once(server, 'secureConnection');
      const client = tlswrap.connect(clientOptions(port));
      client.on('error', () => {});
      try {
        // Both ends: a server socket that is paused before it is accepted
        // never sees the client go, and close() would wait for it forever
        // (seen under valgrind, where the server's side comes late).
        if (when !== 'during the handshake') await Promise.all([once(client, 'secureConnect'), serverSecure]);
        const results = [null, null];
        const done = [0, 1].map((i) => new Promise((resolve) => {
          client.write(Buffer.alloc(i === 0 ? 8 << 20 : 10), (err) => {
            results[i] = err || 'ok';
            resolve();
          });
        }));
        await sleep(100);
        assert.deepStrictEqual(results, [null, null], 'a write completed although the peer reads nothing');
        client.destroy();
        await Promise.race([Promise.all(done), sleep(2000)]);
        assert.ok(results[0] !== null, 'the write in flight at destroy() never got its callback');
        assert.ok(results[1] !== null, 'the write queued behind it never got its callback');
        assert.ok(['ECANCELED', 'ERR_STREAM_DESTROYED'].includes(results[1].code), `second write: ${results[1]}`);
        const node20 = builtin && Number(process.versions.node.split('.')[0]) < 22;
        if (!node20) {
          assert.strictEqual(results[0].code, 'ECANCELED', `first write: ${results[0]}`);
          assert.strictEqual(results[0].syscall, 'write');
          assert.strictEqual(results[0].message, 'write ECANCELED');
        }
      } finally {
        client.destroy();
        for (const sock of accepted) sock.destroy();
        for (const raw of connections) raw.destroy();
        await closeServer(server);
      }
    });
  }

  // As node:tls's (libuv cancels the write request later): the callback of
  // the write destroy(err) cuts off runs after destroy() has returned and
  // after 'error'. A TLS socket carried over this one (TLS in TLS) learns
  // the error itself, not only that its ciphertext write was canceled.
  it("destroy(err) with a write in flight: the write's callback after destroy() returns, after 'error'", async function () {
    if (builtin && Number(process.versions.node.split('.')[0]) < 22) this.skip(); // node 20 completes the write
    // A paused server socket never sees the client go: close() destroys it.
    const connections = [];
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.on('error', () => {});
      sock.pause();
    });
    server.on('connection', (raw) => connections.push(raw));
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    try {
      await once(client, 'secureConnect');
      const events = [];
      client.write(Buffer.alloc(8 << 20), (err) => events.push(`callback ${err && err.code}`));
      await sleep(50);
      client.on('error', (err) => events.push(`error ${err.code}`));
      const gone = closed(client);
      client.destroy(Object.assign(new Error('mine'), { code: 'EMINE' }));
      events.push('destroy() returned');
      await gone;
      assert.deepStrictEqual(events, ['destroy() returned', 'error EMINE', 'callback ECANCELED']);
    } finally {
      client.destroy();
      for (const raw of connections) raw.destroy();
      await closeServer(server);
    }
  });
});

describe('socket: a peer that resets on our close_notify', function () {
  // end() sends close_notify; the peer (behind a proxy that resets the
  // connection the moment the alert arrives) is gone before our FIN. As
  // node:tls, the shutdown's EPIPE is not an error of the socket: at most
  // the read side reports the reset (ECONNRESET, syscall read), then 'close'.
  it("end(): 'finish', no write/shutdown error, 'close'", async function () {
    const server = require('node:tls').createServer(serverOptions(), (s) => {
      s.on('error', () => {});
      s.resume();
    });
    const port = await listen(server);
    const legs = [];
    const proxy = net.createServer((c) => {
      const up = net.connect(port, '127.0.0.1');
      legs.push(c, up);
      up.on('error', () => {});
      c.on('error', () => {});
      up.pipe(c);
      let pending = Buffer.alloc(0);
      c.on('data', (d) => {
        pending = Buffer.concat([pending, d]);
        while (pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
          const size = 5 + pending.readUInt16BE(3);
          const record = pending.subarray(0, size);
          pending = pending.subarray(size);
          if (record[0] === 21) { // the close_notify alert (TLS 1.2: in the clear)
            c.resetAndDestroy();
            up.destroy();
            return;
          }
          up.write(record);
        }
      });
    });
    const proxyPort = await listen(proxy);
    const client = tlswrap.connect(clientOptions(proxyPort, { maxVersion: 'TLSv1.2' }));
    try {
      const events = [];
      client.on('error', (e) => events.push(`error ${e.code} ${e.syscall}`));
      client.on('finish', () => events.push('finish'));
      await once(client, 'secureConnect');
      client.resume();
      client.end();
      await closed(client);
      const errors = events.filter((e) => e.startsWith('error'));
      assert.ok(events.includes('finish'), events.join(', '));
      assert.ok(errors.every((e) => e === 'error ECONNRESET read'), events.join(', '));
    } finally {
      client.destroy();
      for (const s of legs) s.destroy();
      await closeServer(proxy);
      await closeServer(server);
    }
  });
});

describe('socket: a peer gone before our close_notify', function () {
  // The server writes, then destroy()s its socket: FIN, no close_notify. The
  // client writes once from its 'end' listener (the kernel takes it; the
  // server's kernel answers with a reset), then ends: its close_notify meets
  // the reset, EPIPE. As node:tls, a write error after end() is not an
  // error of the socket: the write that was taken succeeds, then 'finish'
  // and 'close', no 'error'. At once: allowHalfOpen false ends the socket
  // right after 'end'; later: the reset has surely come back by then.
  for (const when of ['at once', 'later']) {
    it(`end() ${when} after writing to a peer that closed: no EPIPE, 'finish' then 'close'`, async function () {
      const server = tlswrap.createServer(serverOptions(), (s) => {
        s.on('error', () => {});
        s.write('hi', () => setTimeout(() => s.destroy(), 50));
      });
      const port = await listen(server);
      const client = tlswrap.connect(clientOptions(port, { allowHalfOpen: when === 'later' }));
      try {
        const events = [];
        client.on('data', () => events.push('data'));
        client.on('end', () => {
          events.push('end');
          client.write('late', (err) => {
            events.push(err ? `write ${err.code}` : 'write ok');
            if (when === 'later') setTimeout(() => client.end(), 100);
          });
        });
        client.on('finish', () => events.push('finish'));
        client.on('error', (e) => events.push(`error ${e.code} ${e.syscall}`));
        await closed(client);
        assert.deepStrictEqual(events, ['data', 'end', 'write ok', 'finish']);
      } finally {
        client.destroy();
        await closeServer(server);
      }
    });
  }
});
