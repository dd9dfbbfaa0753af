'use strict';

// STARTTLS: a connected net.Socket handed over to TLS (a plaintext exchange
// first, then new TLSSocket() or connect({ socket })). On the native
// transport the engine takes its fd over; these tests also run with
// TLSWRAP_TRANSPORT=js (npm test runs both), where the socket stays a
// Duplex and the same behaviour must hold.

const assert = require('node:assert');
const net = require('node:net');
const { Duplex } = require('node:stream');
const { once } = require('node:events');
const {
  builtin, fixtures, tlswrap, serverOptions, listen, closeServer, pattern, plainTcpPair, orTimeout,
  assertOneClientHello,
} = require('./common');

const expectNative = !builtin && process.env.TLSWRAP_TRANSPORT !== 'js';

describe('STARTTLS over TCP: handing a net.Socket over to TLS', function () {
  // node:tls would put such bytes on the wire, into the middle of the TLS
  // stream; once the engine holds the fd, tlswrap fails the write instead.
  it('a write to the net.Socket underneath fails with EBADF and ends the connection, no crash', async function () {
    if (!expectNative) this.skip();
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.on('error', () => {});
      sock.resume();
    });
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    const client = tlswrap.connect({ socket: raw, ca: fixtures.ca, servername: 'localhost' });
    try {
      await once(client, 'secureConnect');
      const rawError = once(raw, 'error');
      // As any error of the socket underneath (node:tls forwards them), the
      // TLS socket fails with it, before the raw socket's 'close' ends it.
      const clientErrors = [];
      client.on('error', (e) => clientErrors.push(e.code));
      const closed = new Promise((resolve) => client.on('close', resolve));
      raw.write('not TLS');
      const [err] = await rawError;
      assert.strictEqual(err.code, 'EBADF');
      assert.strictEqual(err.syscall, 'write');
      await closed;
      assert.deepStrictEqual(clientErrors, ['EBADF']);
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  // The upgraded servers here answer a client's first data with
  // `secret:<data>` and end: checks that round trip over `client`, once it
  // is connected (`alreadyConnected`: past 'secureConnect' already).
  async function secretReply(client, alreadyConnected = false) {
    if (!alreadyConnected) await once(client, 'secureConnect');
    const chunks = [];
    client.on('data', (d) => chunks.push(d));
    client.write('hello');
    await once(client, 'end');
    assert.strictEqual(Buffer.concat(chunks).toString(), 'secret:hello');
  }

  // Resolves with exactly `n` bytes from `raw`; whatever came behind them
  // (the peer's first TLS bytes) is put back for the TLS socket to read.
  function readExactly(raw, n) {
    return new Promise((resolve, reject) => {
      const chunks = [];
      let got = 0;
      const fail = () => reject(new Error(`the connection ended after ${got} of ${n} plaintext bytes`));
      const onData = (d) => {
        chunks.push(d);
        got += d.length;
        if (got < n) return;
        raw.off('data', onData);
        raw.off('end', fail);
        raw.off('close', fail);
        raw.pause();
        const all = Buffer.concat(chunks);
        if (all.length > n) raw.unshift(all.subarray(n));
        resolve(all.subarray(0, n));
      };
      raw.on('data', onData);
      raw.once('end', fail);
      raw.once('close', fail);
    });
  }

  // The writer's bytes are still queued in node's net.Socket when its TLS
  // socket is made: the handover must wait for them, not drop them.
  for (const writer of ['server', 'client']) {
    it(`the ${writer} writes 8 MiB of plaintext and upgrades at once: all of it arrives, then TLS both ways`, async function () {
      this.timeout(30000);
      const plaintext = pattern(8 * 1024 * 1024, 1);
      const toClient = pattern(1024 * 1024, 2);
      const toServer = pattern(1024 * 1024, 3);
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: clientRaw, server: serverRaw } = tcp;
        const upgrade = (side) => tcp.track(side === 'server' ?
          new tlswrap.TLSSocket(serverRaw, { isServer: true, secureContext }) :
          tlswrap.connect({ socket: clientRaw, servername: 'localhost', ca: fixtures.ca }));
        const reader = writer === 'server' ? 'client' : 'server';
        const readerRaw = reader === 'server' ? serverRaw : clientRaw;
        const writerRaw = writer === 'server' ? serverRaw : clientRaw;

        const plainIn = readExactly(readerRaw, plaintext.length);
        assert.strictEqual(writerRaw.write(plaintext), false, 'the plaintext is still queued in node');
        const tls = { [writer]: upgrade(writer) };
        assert.ok((await plainIn).equals(plaintext), 'the plaintext differs');
        tls[reader] = upgrade(reader);

        await Promise.all([once(tls.client, 'secureConnect'), once(tls.server, 'secure')]);
        if (!builtin) for (const side of ['client', 'server']) assert.strictEqual(tls[side]._native, expectNative, side);
        const clientIn = readExactly(tls.client, toClient.length);
        const serverIn = readExactly(tls.server, toServer.length);
        tls.server.write(toClient);
        tls.client.write(toServer);
        assert.ok((await clientIn).equals(toClient), 'server-to-client TLS data differs');
        assert.ok((await serverIn).equals(toServer), 'client-to-server TLS data differs');
      } finally {
        await tcp.close();
      }
    });
  }

  // node:tls sets them on the connection's fd; here they go to the engine's
  // handle, which holds it now.
  it('setNoDelay() and setKeepAlive() on the net.Socket after the takeover reach the connection', async function () {
    if (!expectNative) this.skip();
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext })).resume();
      const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
      await once(client, 'secureConnect');
      assert.strictEqual(client._native, true);
      const calls = [];
      const handle = client._handle;
      const { setNoDelay, setKeepAlive } = handle;
      // (The native methods are read-only properties of the prototype.)
      Object.defineProperty(handle, 'setNoDelay', {
        value(...args) { calls.push(['setNoDelay', ...args]); return setNoDelay.apply(this, args); },
      });
      Object.defineProperty(handle, 'setKeepAlive', {
        value(...args) { calls.push(['setKeepAlive', ...args]); return setKeepAlive.apply(this, args); },
      });
      raw.setNoDelay(true);
      raw.setKeepAlive(true, 7000);
      assert.deepStrictEqual(calls, [['setNoDelay', true], ['setKeepAlive', true, 7]]);
    } finally {
      await tcp.close();
    }
  });

  // The program destroys the net.Socket under its TLS socket: as with
  // node:tls, the TLS socket closes with no error (none to an 'error'
  // listener it may not have), mid-handshake or with a write just made.
  for (const when of ['right after connect()', 'with a write just made']) {
    it(`the net.Socket underneath destroyed ${when}: the TLS socket closes without an error`, async function () {
      if (!builtin && !expectNative) this.skip(); // a Duplex's close fails what it held (ECANCELED)
      // node:tls 24 and 26 fail the socket with EBADF there (their write
      // reaches the closed handle); tlswrap keeps 20 and 22's quiet close.
      if (builtin && when !== 'right after connect()' && Number(process.versions.node.split('.')[0]) >= 24) this.skip();
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext })).resume();
        const client = tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca });
        const errors = [];
        client.on('error', (err) => errors.push(err.code));
        if (when === 'right after connect()') {
          raw.destroy();
        } else {
          await once(client, 'secureConnect');
          client.write('x', () => {});
          raw.destroy();
        }
        const [hadError] = await once(client, 'close');
        assert.deepStrictEqual(errors, []);
        assert.strictEqual(hadError, false);
      } finally {
        await tcp.close();
      }
    });
  }

  // As any stream, the net.Socket under a TLS socket emits 'error' before
  // 'close' when the program destroys it with one; a tls.Server it was
  // handed to reports that error, as node:tls's does.
  it("the net.Socket underneath destroyed with an error: its 'error' before its 'close', the server's tlsClientError",
    async function () {
      const server = tlswrap.createServer(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { server: plain } = tcp;
        const events = [];
        server.on('tlsClientError', (err) => events.push(`tlsClientError ${err.code}`));
        plain.on('error', (err) => events.push(`error ${err.code}`));
        // (once() would reject on the 'error'.)
        const closed = new Promise((resolve) => plain.on('close', resolve));
        plain.on('close', (hadError) => events.push(`close ${hadError}`));
        server.emit('connection', plain);
        plain.destroy(Object.assign(new Error('boom'), { code: 'EBOOM' }));
        await closed;
        await new Promise((resolve) => setImmediate(resolve));
        // (node:tls reports the server's first; tlswrap has ended the
        // connection when destroy() returns, before the socket's own.)
        assert.deepStrictEqual(events.filter((e) => e !== 'tlsClientError EBOOM'), ['error EBOOM', 'close true']);
        assert.ok(events.includes('tlsClientError EBOOM'), events.join());
      } finally {
        await tcp.close();
      }
    });

  // The client's own bytes are still queued in node when it upgrades, and
  // the peer leaves without reading them. node:tls reads the connection
  // meanwhile and sees the FIN: the client fails as any whose peer left
  // mid-handshake, instead of waiting for a drain that never comes.
  it("the peer ends without reading node's queued bytes: ECONNRESET and 'close', not a hang", async function () {
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      plain.pause();
      assert.strictEqual(raw.write(Buffer.alloc(8 * 1024 * 1024)), false, 'the bytes are still queued in node');
      const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
      const events = [];
      client.on('error', (err) => events.push(`error ${err.code}`));
      const closed = new Promise((resolve) => client.on('close', resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
      plain.end();
      const outcome = await orTimeout(closed.then((hadError) => `close ${hadError}`), 5000, 'timed out');
      events.push(outcome);
      assert.deepStrictEqual(events, ['error ECONNRESET', 'close true']);
    } finally {
      await tcp.close();
    }
  });

  // The same, but the peer (not TLS at all) sends bytes before its FIN.
  // node:tls has started its handshake (a client's ClientHello queued
  // behind node's bytes) and hands them to OpenSSL: the socket fails with
  // OpenSSL's error, however much the peer sent, where tlswrap's engine
  // waited unstarted and stopped reading at 64 KiB (a hang), or, under
  // that, saw only the FIN.
  for (const role of ['client', 'server']) {
    for (const size of [1024, 256 * 1024]) {
      it(`${role}: the peer sends ${size / 1024} KiB that are not TLS and ends without reading node's queued ` +
        "bytes: ERR_SSL_WRONG_VERSION_NUMBER and 'close'", async function () {
        const tcp = await plainTcpPair();
        try {
          const [raw, peer] = role === 'client' ? [tcp.client, tcp.server] : [tcp.server, tcp.client];
          peer.pause();
          assert.strictEqual(raw.write(Buffer.alloc(8 * 1024 * 1024)), false, 'the bytes are still queued in node');
          const secureContext = tlswrap.createSecureContext(serverOptions());
          const socket = tcp.track(role === 'client' ?
            tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }) :
            new tlswrap.TLSSocket(raw, { isServer: true, secureContext }));
          const events = [];
          socket.on('error', (err) => events.push(`error ${err.code}`));
          socket.on('secure', () => events.push('secure'));
          const closed = new Promise((resolve) => socket.on('close', resolve));
          await new Promise((resolve) => setTimeout(resolve, 50));
          peer.end(Buffer.alloc(size, 'x'));
          const outcome = await orTimeout(closed.then((hadError) => `close ${hadError}`), 5000, 'timed out');
          events.push(outcome);
          assert.deepStrictEqual(events, ['error ERR_SSL_WRONG_VERSION_NUMBER', 'close true']);
          assert.strictEqual(raw.destroyed, true);
          if (!builtin) assert.strictEqual(socket._handle, null, 'the engine is not released');
        } finally {
          await tcp.close();
        }
      });
    }
  }

  // The TLS socket's own end() while node still writes its bytes: the
  // engine has started by then (its first flight held), and its close must
  // wait for them too, or its FIN cuts them off. tlswrap then does what
  // node:tls does for an end() made once node's bytes are out (the test
  // below): the ClientHello, the FIN, and ECONNRESET when the peer leaves.
  // node:tls 20 and 24 fail the socket at once with EPIPE instead, the peer
  // getting node's bytes alone: their TLS output waits for an empty write
  // queued behind node's bytes, and the shutdown end() queues on the TCP
  // handle makes that write fail. An artifact of when end() comes, not kept.
  it("end() on the TLS socket while node's queued bytes go out: the peer gets all of them, then the FIN",
    async function () {
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        plain.pause();
        const plaintext = pattern(8 * 1024 * 1024, 6);
        assert.strictEqual(raw.write(plaintext), false, 'the bytes are still queued in node');
        const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
        const errors = [];
        client.on('error', (err) => errors.push(err.code));
        const closed = new Promise((resolve) => client.on('close', resolve));
        await new Promise((resolve) => setTimeout(resolve, 50));
        client.end();
        await new Promise((resolve) => setTimeout(resolve, 50));
        const chunks = [];
        plain.on('data', (chunk) => chunks.push(chunk));
        const peerEnded = once(plain, 'end').then(() => plain.end());
        plain.resume();
        const outcome = await orTimeout(
          Promise.all([peerEnded, closed]).then(([, hadError]) => `peer end, close ${hadError}`),
          5000, 'timed out');
        assert.strictEqual(outcome, 'peer end, close true');
        const received = Buffer.concat(chunks);
        assert.ok(received.length >= plaintext.length, `the peer got ${received.length} bytes`);
        assert.ok(received.subarray(0, plaintext.length).equals(plaintext), "node's bytes differ");
        if (builtin) {
          assert.deepStrictEqual(errors, ['EPIPE']);
        } else {
          assertOneClientHello(received.subarray(plaintext.length));
          assert.deepStrictEqual(errors, ['ECONNRESET']);
        }
      } finally {
        await tcp.close();
      }
    });

  it("end() on the TLS socket once node's bytes are out: the peer gets them, the ClientHello, the FIN; ECONNRESET",
    async function () {
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        const plaintext = Buffer.from('220 ready for TLS\r\n');
        const wrote = new Promise((resolve) => raw.write(plaintext, resolve));
        const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
        const events = [];
        client.on('error', (err) => events.push(`error ${err.code}`));
        client.on('finish', () => events.push('finish'));
        const closed = new Promise((resolve) => client.on('close', resolve));
        await wrote;
        await new Promise((resolve) => setTimeout(resolve, 50));
        client.end();
        const chunks = [];
        plain.on('data', (chunk) => chunks.push(chunk));
        await orTimeout(once(plain, 'end'), 5000, null);
        plain.end();
        events.push(await orTimeout(closed.then((hadError) => `close ${hadError}`), 5000, 'timed out'));
        assert.deepStrictEqual(events, ['finish', 'error ECONNRESET', 'close true']);
        const received = Buffer.concat(chunks);
        assert.ok(received.subarray(0, plaintext.length).equals(plaintext), "node's bytes differ");
        assertOneClientHello(received.subarray(plaintext.length));
      } finally {
        await tcp.close();
      }
    });

  // resetAndDestroy() on the net.Socket under a TLS socket: as with
  // node:tls, both close without an error. The peer sees the RST node
  // documents (node:tls 20 and 24 send a FIN there, once the peer's bytes
  // are all read: their TCP handle is closing already when its reset()
  // comes). The TLS socket's own resetAndDestroy() refuses, as node:tls's
  // does: its handle is not a TCP one.
  it('resetAndDestroy() on the net.Socket underneath: the peer sees ECONNRESET; on the TLS socket it throws',
    async function () {
      const server = tlswrap.createServer(serverOptions());
      const accepted = once(server, 'secureConnection');
      const port = await listen(server);
      const raw = net.connect(port, '127.0.0.1');
      const client = tlswrap.connect({ socket: raw, ca: fixtures.ca, servername: 'localhost' });
      try {
        await once(client, 'secureConnect');
        const [peer] = await accepted;
        const peerEvents = [];
        peer.on('error', (err) => peerEvents.push(`error ${err.code}`));
        const peerClosed = new Promise((resolve) => peer.on('close', resolve));
        assert.throws(() => client.resetAndDestroy(), { code: 'ERR_INVALID_HANDLE_TYPE' });
        const events = [];
        client.on('error', (err) => events.push(`tls error ${err.code}`));
        raw.on('error', (err) => events.push(`raw error ${err.code}`));
        const closed = Promise.all([
          new Promise((resolve) => client.on('close', (hadError) => resolve(`tls close ${hadError}`))),
          new Promise((resolve) => raw.on('close', (hadError) => resolve(`raw close ${hadError}`))),
        ]);
        assert.strictEqual(raw.resetAndDestroy(), raw);
        assert.strictEqual(raw.destroyed, true);
        events.push(...await closed);
        await peerClosed;
        assert.deepStrictEqual(events, ['tls close false', 'raw close false']);
        if (!builtin) assert.deepStrictEqual(peerEvents, ['error ECONNRESET']);
      } finally {
        client.destroy();
        await closeServer(server);
      }
    });

  // A line-protocol server keeps its plaintext parser on the raw socket,
  // which ignores input once it has upgraded; the client's ClientHello came
  // in the same read as its STARTTLS line. As node:tls, the buffered bytes
  // are read from the raw socket on the next tick, after new TLSSocket()
  // has returned: the parser sees them as upgraded.
  it("bytes buffered before the upgrade reach the raw socket's listeners only after new TLSSocket() returns",
    async function () {
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        let upgraded = null;
        const parserSaw = [];
        plain.on('data', (d) => {
          if (upgraded !== null) {
            parserSaw.push('after upgrade');
            return;
          }
          const at = d.indexOf('STARTTLS\r\n');
          if (at === -1) {
            parserSaw.push('a command');
            plain.write('500 unknown command\r\n');
            return;
          }
          plain.pause();
          const rest = d.subarray(at + 10);
          if (rest.length > 0) plain.unshift(rest);
          upgraded = tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext }));
          upgraded.on('data', (x) => upgraded.end(`secret:${x}`));
        });
        // The ClientHello right behind the line; the server reads both at
        // once.
        plain.pause();
        raw.write('STARTTLS\r\n');
        const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
        await new Promise((resolve) => setTimeout(resolve, 100));
        plain.resume();
        await secretReply(client);
        assert.ok(!parserSaw.includes('a command'), `the parser saw: ${parserSaw}`);
      } finally {
        await tcp.close();
      }
    });

  // Once the TLS socket exists, what the peer sends is TLS: while the
  // takeover waits for node's queued reply, none of it reaches the raw
  // socket's listeners (as node:tls, whose TLS layer reads the handle).
  it("bytes that arrive while node's reply is queued go to TLS, not to the raw socket's listeners", async function () {
    this.timeout(30000);
    const reply = pattern(16 * 1024 * 1024, 5);
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      let upgraded = null;
      let afterUpgrade = 0;
      let unshifted = 0;
      plain.on('data', (d) => {
        if (upgraded !== null) {
          afterUpgrade += d.length;
          return;
        }
        // What came behind the line is TLS already (it is read from the raw
        // socket once more, as node:tls reads what it finds buffered).
        plain.pause();
        unshifted = d.length - 10;
        if (unshifted > 0) plain.unshift(d.subarray(10));
        plain.write(reply);
        upgraded = tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext }));
        upgraded.on('data', (x) => upgraded.end(`secret:${x}`));
      });
      raw.write('STARTTLS\r\n');
      // The client reads the reply only after its ClientHello is at the
      // server, which gets it after the line.
      raw.pause();
      await new Promise((resolve) => setTimeout(resolve, 100));
      let skip = reply.length;
      const tail = new Duplex({
        read() {},
        write(chunk, encoding, cb) { raw.write(chunk, cb); },
        final(cb) { raw.end(); cb(); },
      });
      const client = tcp.track(tlswrap.connect({ socket: tail, servername: 'localhost', ca: fixtures.ca }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(plain.writableLength > 0, 'the reply was already written: nothing tested');
      raw.on('data', (d) => {
        if (skip > 0) {
          const n = Math.min(skip, d.length);
          skip -= n;
          d = d.subarray(n);
        }
        if (d.length > 0) tail.push(d);
      });
      raw.on('end', () => tail.push(null));
      raw.resume();
      await secretReply(client);
      assert.strictEqual(afterUpgrade, unshifted, `the raw socket's listener got ${afterUpgrade} bytes after the upgrade`);
    } finally {
      await tcp.close();
    }
  });

  // The client sends its ClientHello right behind its STARTTLS line, so
  // node has read TLS bytes before the server upgrades: the engine gets them.
  for (const how of ['left unread in the buffer', 'read and unshifted']) {
    it(`TLS bytes node read with the plaintext, ${how}, reach the engine`, async function () {
      const line = 'STARTTLS\r\n';
      const secureContext = tlswrap.createSecureContext(serverOptions());
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        raw.write(line);
        const client = tcp.track(tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca }));
        let first;
        if (how === 'left unread in the buffer') {
          plain.pause();
          while (plain.readableLength <= line.length) await new Promise((resolve) => setTimeout(resolve, 5));
          first = plain.read(line.length);
        } else {
          const chunks = [];
          let got = 0;
          await new Promise((resolve) => {
            const onData = (d) => {
              chunks.push(d);
              got += d.length;
              if (got <= line.length) return;
              plain.off('data', onData);
              plain.pause();
              resolve();
            };
            plain.on('data', onData);
          });
          const all = Buffer.concat(chunks);
          first = all.subarray(0, line.length);
          plain.unshift(all.subarray(line.length));
        }
        assert.strictEqual(first.toString(), line);
        const t = tcp.track(new tlswrap.TLSSocket(plain, { isServer: true, secureContext }));
        t.on('data', (d) => t.end(`secret:${d}`));
        await secretReply(client);
      } finally {
        await tcp.close();
      }
    });
  }

  // Here the client does not wait for the plaintext: its ClientHello
  // arrives while the server's takeover still waits for node's writes.
  it('TLS bytes that arrive while node still writes the plaintext reach the engine', async function () {
    this.timeout(30000);
    // More than loopback's socket buffers hold while nobody reads.
    const plaintext = pattern(16 * 1024 * 1024, 4);
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: serverRaw } = tcp;
      serverRaw.write(plaintext);
      const t = tcp.track(new tlswrap.TLSSocket(serverRaw, { isServer: true, secureContext }));
      t.on('data', (d) => t.end(`secret:${d}`));

      // The client's TLS runs over a Duplex that hands it what follows the
      // plaintext; it reads nothing until its ClientHello is at the server.
      let skip = plaintext.length;
      const head = [];
      let helloSent;
      const sent = new Promise((resolve) => { helloSent = resolve; });
      const tail = new Duplex({
        read() { if (reading) raw.resume(); },
        write(chunk, encoding, cb) {
          raw.write(chunk, (err) => {
            helloSent();
            cb(err);
          });
        },
        final(cb) { raw.end(); cb(); },
      });
      let reading = false;
      const client = tcp.track(tlswrap.connect({ socket: tail, servername: 'localhost', ca: fixtures.ca }));
      // The ClientHello is in the server's kernel buffer (loopback) once its
      // write is done. (The server's net.Socket no longer reads by then.)
      await sent;
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(serverRaw.writableLength > 0, 'the plaintext was already written: nothing tested');
      reading = true;
      raw.on('data', (d) => {
        if (skip > 0) {
          const n = Math.min(skip, d.length);
          head.push(d.subarray(0, n));
          skip -= n;
          d = d.subarray(n);
        }
        if (d.length > 0 && !tail.push(d)) raw.pause();
      });
      raw.on('end', () => tail.push(null));

      await once(client, 'secureConnect');
      assert.ok(Buffer.concat(head).equals(plaintext), 'the plaintext differs');
      await secretReply(client, true);
    } finally {
      await tcp.close();
    }
  });
});
