'use strict';

// The net.Socket surface of a tlswrap TLSSocket: addresses, options setters,
// timeouts, ref/unref, byte counters, flow control, pipe, end/destroy, the
// server's handshakeTimeout, wrapping an existing net.Socket (STARTTLS) or any
// Duplex, highWaterMark, and http/https riding on tlswrap sockets.

const assert = require('node:assert');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const path = require('node:path');
const { Duplex, PassThrough, Readable, Writable, getDefaultHighWaterMark } = require('node:stream');
const { execFile, spawn } = require('node:child_process');
const { EventEmitter, once } = require('node:events');
const {
  builtin, fixtures, tlswrap, serverOptions, clientOptions, listen, closeServer, makePair, SocketDuplex, readBytes,
} = require('./common');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function closePair({ server, client, sock }) {
  client.destroy();
  sock.destroy();
  await closeServer(server);
}

// 'close' without once(): once() would reject on an expected 'error'.
const closed = (s) => new Promise((resolve) => s.once('close', resolve));

describe('socket: a connected pair', function () {
  let p;
  beforeEach(async function () {
    p = await makePair();
  });
  afterEach(async function () {
    await closePair(p);
  });

  it('is a net.Socket and a stream.Duplex, like node:tls sockets', function () {
    assert.ok(p.client instanceof net.Socket);
    assert.ok(p.client instanceof Duplex);
    assert.ok(p.sock instanceof tlswrap.TLSSocket);
    assert.ok(p.sock instanceof net.Socket);
  });

  it('remoteAddress/remotePort/remoteFamily, localAddress/localPort, address() on both sides', function () {
    const { client, sock, port } = p;
    assert.strictEqual(client.remoteAddress, '127.0.0.1');
    assert.strictEqual(client.remotePort, port);
    assert.strictEqual(client.remoteFamily, 'IPv4');
    assert.strictEqual(client.localAddress, '127.0.0.1');
    assert.strictEqual(typeof client.localPort, 'number');
    assert.deepStrictEqual(client.address(), { address: '127.0.0.1', family: 'IPv4', port: client.localPort });
    // The server side sees the same connection from the other end.
    assert.strictEqual(sock.remoteAddress, '127.0.0.1');
    assert.strictEqual(sock.remotePort, client.localPort);
    assert.strictEqual(sock.remoteFamily, 'IPv4');
    assert.strictEqual(sock.localPort, port);
    assert.deepStrictEqual(sock.address(), { address: '127.0.0.1', family: 'IPv4', port });
  });

  it('remote addresses asked for while open are still answered after close', async function () {
    const { client, sock } = p;
    // (net.Socket keeps its peer's address, not its own: localPort is
    // undefined after close with node:tls.)
    const before = [client.remoteAddress, client.remotePort, client.remoteFamily, sock.remotePort];
    for (const s of [client, sock]) s.on('error', () => {});
    const closed = [once(client, 'close'), once(sock, 'close')];
    sock.on('end', () => sock.end());
    client.end();
    await Promise.all(closed);
    assert.deepStrictEqual([client.remoteAddress, client.remotePort, client.remoteFamily, sock.remotePort], before);
  });

  it('readyState/connecting/pending once connected', function () {
    assert.strictEqual(p.client.readyState, 'open');
    assert.strictEqual(p.client.connecting, false);
    assert.strictEqual(p.client.pending, false);
  });

  it('setNoDelay, setKeepAlive, setTimeout, ref, unref return this', function () {
    const { client, sock } = p;
    for (const s of [client, sock]) {
      assert.strictEqual(s.setNoDelay(true), s);
      assert.strictEqual(s.setNoDelay(false), s);
      assert.strictEqual(s.setKeepAlive(true, 1000), s);
      assert.strictEqual(s.setKeepAlive(false), s);
      assert.strictEqual(s.setTimeout(0), s);
      assert.strictEqual(s.unref(), s);
      assert.strictEqual(s.ref(), s);
    }
  });

  // JS cannot read a socket option back, so a Python child copies the
  // connection's fd out of this process (pidfd_getfd, Linux >= 5.6) and reads
  // them there. The fd is found through /proc: the inode of the connection's
  // line in /proc/net/tcp, then the fd of this process that links to it.
  it('setNoDelay/setKeepAlive really set TCP_NODELAY, SO_KEEPALIVE, TCP_KEEPIDLE (Linux, read back)', async function () {
    if (process.platform !== 'linux') this.skip();
    const { execFile } = require('node:child_process');
    const fs = require('node:fs');
    const hexPort = (n) => n.toString(16).toUpperCase().padStart(4, '0');
    const fdOf = (s) => {
      const local = `:${hexPort(s.localPort)}`;
      const remote = `:${hexPort(s.remotePort)}`;
      const line = fs.readFileSync('/proc/net/tcp', 'utf8').split('\n')
        .map((l) => l.trim().split(/\s+/))
        .find((f) => f[1] && f[1].endsWith(local) && f[2].endsWith(remote));
      assert.ok(line, `no /proc/net/tcp line for local port ${s.localPort}`);
      const target = `socket:[${line[9]}]`;
      const fd = fs.readdirSync('/proc/self/fd').find((n) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${n}`) === target;
        } catch {
          return false;
        }
      });
      assert.ok(fd !== undefined, `no fd of this process is ${target}`);
      return fd;
    };
    const read = (fd) => new Promise((resolve, reject) => {
      execFile('python3', [path.join(__dirname, 'child', 'sockopts.py'), String(process.pid), fd],
        { timeout: 10000 }, (err, stdout) => {
          const out = stdout ? JSON.parse(stdout.trim() || 'null') : null;
          if (out && out.unsupported) resolve(out);
          else if (err) reject(err);
          else resolve(out);
        });
    });
    const { client, sock } = p;
    for (const s of [client, sock]) {
      const fd = fdOf(s);
      s.setNoDelay(true);
      s.setKeepAlive(true, 7000);
      const on = await read(fd);
      if (on.unsupported) this.skip(); // no python3, or pidfd_getfd refused (not allowed to ptrace)
      assert.strictEqual(on.nodelay, 1, 'TCP_NODELAY after setNoDelay(true)');
      assert.strictEqual(on.keepalive, 1, 'SO_KEEPALIVE after setKeepAlive(true, 7000)');
      assert.strictEqual(on.keepidle, 7, 'TCP_KEEPIDLE after setKeepAlive(true, 7000)');
      s.setNoDelay(false);
      s.setKeepAlive(false);
      const off = await read(fd);
      assert.strictEqual(off.nodelay, 0, 'TCP_NODELAY after setNoDelay(false)');
      assert.strictEqual(off.keepalive, 0, 'SO_KEEPALIVE after setKeepAlive(false)');
    }
  });

  it("setTimeout(ms, cb) fires 'timeout' once idle, does not destroy, setTimeout(0) disarms", async function () {
    const { client } = p;
    let viaCallback = 0;
    const start = Date.now();
    client.setTimeout(100, () => { viaCallback++; });
    assert.strictEqual(client.timeout, 100);
    await once(client, 'timeout');
    const elapsed = Date.now() - start;
    assert.ok(elapsed >= 90 && elapsed < 2000, `timeout after ${elapsed} ms`);
    assert.strictEqual(viaCallback, 1);
    assert.strictEqual(client.destroyed, false);
    client.setTimeout(0);
    let again = 0;
    client.on('timeout', () => { again++; });
    await sleep(250);
    assert.strictEqual(again, 0);
  });

  it('a timeout turned off and on again (as a keep-alive HTTP server does) fires only while on', async function () {
    const { client } = p;
    let fired = 0;
    const onTimeout = () => { fired++; };
    client.on('timeout', onTimeout);
    try {
      client.setTimeout(100);
      client.setTimeout(0);
      await sleep(300);
      assert.strictEqual(fired, 0, 'fired after setTimeout(0)');
      assert.strictEqual(client.timeout, 0);
      // The same duration again.
      client.setTimeout(100);
      await once(client, 'timeout');
      assert.strictEqual(fired, 1);
      // A longer one replaces it, and a shorter one that.
      client.setTimeout(60000);
      await sleep(300);
      assert.strictEqual(fired, 1, 'fired at the old duration');
      const start = Date.now();
      client.setTimeout(100);
      await once(client, 'timeout');
      assert.ok(Date.now() - start < 30000, 'the 60 s timeout was not replaced');
      assert.strictEqual(fired, 2);
      client.setTimeout(0);
    } finally {
      client.removeListener('timeout', onTimeout);
    }
  });

  it("`timeout` is net.Socket's plain property: what setTimeout() was last asked, even when refused", function () {
    const { client } = p;
    assert.strictEqual(client.timeout, undefined);
    client.setTimeout(100);
    assert.strictEqual(client.timeout, 100);
    client.setTimeout(0);
    assert.strictEqual(client.timeout, 0);
    assert.throws(() => client.setTimeout(-1), { code: 'ERR_OUT_OF_RANGE' });
    assert.strictEqual(client.timeout, -1);
    const own = Object.getOwnPropertyDescriptor(client, 'timeout');
    assert.deepStrictEqual(own, { value: -1, writable: true, enumerable: true, configurable: true });
    client.timeout = 5; // a program may write it, as on any net.Socket
    assert.strictEqual(client.timeout, 5);
    client.setTimeout(0);
  });

  it('a destroyed socket takes no timeout and checks none', async function () {
    const { client } = p;
    client.destroy();
    let fired = 0;
    client.on('timeout', () => { fired++; });
    assert.strictEqual(client.setTimeout(10), client);
    client.setTimeout('not a duration', 'not a function');
    assert.strictEqual(client.timeout, undefined);
    assert.strictEqual(Object.keys(client).includes('timeout'), false);
    await sleep(100);
    assert.strictEqual(fired, 0);
  });

  it('activity pushes the timeout back', async function () {
    const { client, sock } = p;
    sock.on('data', () => {});
    let fired = 0;
    // Each write comes well inside the 300 ms idle limit, even on a busy machine.
    client.setTimeout(300, () => { fired++; });
    for (let i = 0; i < 4; i++) {
      await sleep(75);
      client.write('tick');
    }
    assert.strictEqual(fired, 0);
    await once(client, 'timeout');
    client.setTimeout(0);
  });

  it('bytesRead/bytesWritten count plaintext bytes, both sides', async function () {
    const { client, sock } = p;
    // node counts application data only: nothing yet after the handshake.
    assert.strictEqual(client.bytesWritten, 0);
    assert.strictEqual(sock.bytesRead, 0);
    client.write(Buffer.alloc(1000, 1));
    await readBytes(sock, 1000);
    assert.strictEqual(client.bytesWritten, 1000);
    assert.strictEqual(sock.bytesRead, 1000);
    sock.write(Buffer.alloc(50000, 2));
    await readBytes(client, 50000);
    assert.strictEqual(client.bytesRead, 50000);
    assert.strictEqual(sock.bytesWritten, 50000);
    client.write('xyz');
    await readBytes(sock, 3);
    assert.strictEqual(client.bytesWritten, 1003);
    assert.strictEqual(sock.bytesRead, 1003);
  });

  it('pause() holds data back, resume() delivers it in order', async function () {
    const { client, sock } = p;
    const got = [];
    client.on('data', (d) => got.push(d));
    client.pause();
    assert.strictEqual(client.isPaused(), true);
    sock.write('one,');
    sock.write('two,');
    sock.write('three');
    await sleep(100);
    assert.strictEqual(got.length, 0);
    client.resume();
    assert.strictEqual(client.isPaused(), false);
    while (Buffer.concat(got).length < 13) await sleep(5);
    assert.strictEqual(Buffer.concat(got).toString(), 'one,two,three');
  });

  it('a paused reader applies backpressure: write() returns false, drain comes after resume', async function () {
    const { client, sock } = p;
    client.pause();
    const chunk = Buffer.alloc(64 * 1024, 3);
    let writes = 0;
    // Bounded: loopback and TLS buffers fill well before 64 MiB.
    while (sock.write(chunk)) {
      writes++;
      assert.ok(writes < 1024, 'write() never returned false');
    }
    const total = (writes + 1) * chunk.length;
    const drained = once(sock, 'drain');
    const all = readBytes(client, total);
    client.resume();
    await drained;
    assert.strictEqual((await all).length, total);
  });

  it('a reader that pauses in its data listener and resumes later gets every byte in order', async function () {
    const { client, sock } = p;
    assert.strictEqual(client.readableDidRead, false);
    const total = 4 * 1024 * 1024;
    const sent = Buffer.alloc(total);
    for (let i = 0; i < total; i += 4) sent.writeUInt32LE(i, i);
    const got = [];
    let n = 0;
    let readableTurn = 0; // 1 while a 'readable' reader drains, 2 after
    const done = new Promise((resolve, reject) => {
      client.on('data', (d) => {
        got.push(d);
        n += d.length;
        if (n >= total) return resolve();
        if (readableTurn === 1) return; // read() below emits these
        // Alternate: resume on the next turn, or after more has arrived
        // (buffered, the engine stopped by backpressure), or at once.
        const k = got.length % 3;
        if (k === 0) return;
        client.pause();
        if (k === 1) setImmediate(() => client.resume());
        else setTimeout(() => client.resume(), 2);
        // Once, mid-stream, a 'readable' reader takes over and hands back.
        if (readableTurn === 0 && n > total / 2) {
          readableTurn = 1;
          const onReadable = () => {
            while (client.read() !== null);
            client.off('readable', onReadable);
            readableTurn = 2;
            client.resume();
          };
          client.on('readable', onReadable);
        }
      });
      client.once('error', reject);
    });
    for (let i = 0; i < total; i += 7 * 1024) sock.write(sent.subarray(i, Math.min(total, i + 7 * 1024)));
    await done;
    assert.strictEqual(readableTurn, 2);
    assert.strictEqual(client.readableDidRead, true);
    assert.ok(Buffer.concat(got).equals(sent), 'bytes lost, repeated or out of order');
  });

});

describe('socket: pipe, end, destroy', function () {
  let p;
  beforeEach(async function () {
    p = await makePair();
  });
  afterEach(async function () {
    await closePair(p);
  });

  // As net.Socket's, from its handle's close callback: after the ticks,
  // microtasks and immediates queued before it.
  it("destroy(): 'close' comes after the ticks, microtasks and immediates queued before it", async function () {
    const { client } = p;
    const order = [];
    setImmediate(() => order.push('immediate'));
    process.nextTick(() => order.push('tick'));
    queueMicrotask(() => order.push('microtask'));
    const closed = new Promise((resolve) => client.on('close', () => {
      order.push('close');
      resolve();
    }));
    client.destroy();
    await closed;
    // (The tick and the microtask run in either order from an async test.)
    assert.deepStrictEqual(order.slice(2), ['immediate', 'close']);
    assert.deepStrictEqual(order.slice(0, 2).sort(), ['microtask', 'tick']);
  });

  // As node:tls's, on either transport: a TLS socket over a net.Socket it did
  // not make (a server's accepted one, one passed in) closes after it.
  it("destroy() over a server's or a caller's net.Socket: its 'close', then the TLS socket's", async function () {
    const server = tlswrap.createServer(serverOptions());
    const raws = [];
    server.on('connection', (raw) => raws.push(raw));
    const serverSide = once(server, 'secureConnection');
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    const client = tlswrap.connect({ ...clientOptions(port), socket: raw });
    await once(client, 'secureConnect');
    const [sock] = await serverSide;
    for (const [tls, tcp] of [[sock, raws[0]], [client, raw]]) {
      const order = [];
      tcp.on('close', () => order.push('net close'));
      const closed = new Promise((resolve) => tls.on('close', () => {
        order.push('tls close');
        resolve();
      }));
      tls.destroy();
      await closed;
      assert.deepStrictEqual(order, ['net close', 'tls close']);
    }
    await closeServer(server);
  });

  it('pipe a Readable into a tlswrap socket and a tlswrap socket into a Writable', async function () {
    const { client, sock } = p;
    const chunks = Array.from({ length: 50 }, (_, i) => Buffer.alloc(3000 + i, i));
    const expected = Buffer.concat(chunks);
    const received = [];
    const sink = new Writable({
      write(chunk, enc, cb) { received.push(chunk); cb(); },
    });
    sock.pipe(sink);
    Readable.from(chunks).pipe(client); // ends the client when done
    await once(sink, 'finish'); // the server saw 'end'
    assert.ok(Buffer.concat(received).equals(expected));
  });

  it('pipe the other way: server socket fed by a Readable, client piped out', async function () {
    const { client, sock } = p;
    const expected = Buffer.alloc(300000, 9);
    const received = [];
    const sink = new Writable({ write(chunk, enc, cb) { received.push(chunk); cb(); } });
    client.pipe(sink);
    Readable.from([expected.subarray(0, 100000), expected.subarray(100000)]).pipe(sock);
    await once(sink, 'finish');
    assert.ok(Buffer.concat(received).equals(expected));
  });

  it("end(data, cb): cb runs, the peer gets the data then 'end'", async function () {
    const { client, sock } = p;
    let ended = 0;
    const order = [];
    sock.on('data', (d) => order.push(`data:${d}`));
    sock.on('end', () => order.push('end'));
    const done = closed(client);
    client.end('last words', () => { ended++; });
    await once(sock, 'end');
    await done;
    assert.strictEqual(ended, 1);
    assert.deepStrictEqual(order, ['data:last words', 'end']);
  });

  it("end(cb) without data: cb runs and both sides close", async function () {
    const { client, sock } = p;
    sock.resume();
    let ended = 0;
    client.end(() => { ended++; });
    await Promise.all([closed(client), closed(sock)]);
    assert.strictEqual(ended, 1);
  });

  it("destroy(err) emits that 'error' then 'close' (hadError true); the peer closes", async function () {
    const { client, sock } = p;
    sock.on('error', () => {});
    sock.resume();
    const events = [];
    const boom = new Error('bye');
    client.on('error', (err) => events.push(err));
    client.on('close', (hadError) => events.push(`close:${hadError}`));
    client.destroy(boom);
    assert.strictEqual(client.destroyed, true);
    await Promise.all([closed(client), closed(sock)]);
    assert.deepStrictEqual(events, [boom, 'close:true']);
  });

  it("destroy() without error: 'close' with hadError false, no 'error'", async function () {
    const { client } = p;
    const events = [];
    client.on('error', (err) => events.push(err));
    client.on('close', (hadError) => events.push(`close:${hadError}`));
    client.destroy();
    await closed(client);
    assert.deepStrictEqual(events, ['close:false']);
    assert.strictEqual(client.readyState, 'closed');
  });

  it('write after end fails with ERR_STREAM_WRITE_AFTER_END', async function () {
    const { client, sock } = p;
    sock.resume();
    const emitted = [];
    client.on('error', (e) => emitted.push(e));
    const done = closed(client);
    client.end();
    const err = await new Promise((resolve) => client.write('late', resolve));
    assert.strictEqual(err.code, 'ERR_STREAM_WRITE_AFTER_END');
    // The same error is emitted as 'error' too.
    await done;
    assert.deepStrictEqual(emitted, [err]);
  });
});

describe('socket: options and lifetime', function () {
  it('keepAliveInitialDelay that is not a number: refused where node:tls refuses it, and only there', async function () {
    // Node 24's connect() validates it; Node 20's and 22's never read it.
    const server = tlswrap.createServer(serverOptions(), (sock) => sock.end());
    const port = await listen(server);
    const attempt = (impl, delay) => {
      try {
        return impl.connect(clientOptions(port, { keepAlive: true, keepAliveInitialDelay: delay }));
      } catch (err) {
        return err;
      }
    };
    try {
      for (const delay of ['5', null, {}, true]) {
        const reference = attempt(require('node:tls'), delay);
        if (!(reference instanceof Error)) reference.on('error', () => {}).destroy();
        const got = attempt(tlswrap, delay);
        if (reference instanceof Error) {
          assert.ok(got instanceof Error, `${delay}: connect() did not throw`);
          assert.strictEqual(got.code, reference.code);
          assert.strictEqual(got.message, reference.message);
        } else {
          assert.ok(!(got instanceof Error), `${delay}: ${got.message}`);
          got.resume();
          await once(got, 'secureConnect');
          got.destroy();
        }
      }
    } finally {
      await closeServer(server);
    }
  });

  it('highWaterMark on connect sets both readable and writable high water marks', async function () {
    const p = await makePair({}, { highWaterMark: 1024 });
    try {
      assert.strictEqual(p.client.readableHighWaterMark, 1024);
      assert.strictEqual(p.client.writableHighWaterMark, 1024);
      // Defaults elsewhere: the stream default (16 KiB on Node 20, 64 KiB from 22).
      assert.strictEqual(p.sock.readableHighWaterMark, getDefaultHighWaterMark(false));
    } finally {
      await closePair(p);
    }
  });

  it('before the connection is up: connecting, pending, readyState opening, no addresses', async function () {
    const server = tlswrap.createServer(serverOptions());
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      assert.strictEqual(client.connecting, true);
      assert.strictEqual(client.pending, true);
      assert.strictEqual(client.readyState, 'opening');
      assert.strictEqual(client.remoteAddress, undefined);
      assert.strictEqual(client.bytesWritten, 0);
      await once(client, 'secureConnect');
      client.destroy();
    } finally {
      await closeServer(server);
    }
  });

  it('IPv6 loopback: ::1 addresses and family IPv6', async function () {
    const server = tlswrap.createServer(serverOptions());
    try {
      server.listen(0, '::1');
      await once(server, 'listening');
    } catch (err) {
      if (['EADDRNOTAVAIL', 'EAFNOSUPPORT'].includes(err.code)) this.skip(); // no IPv6 here
      throw err;
    }
    try {
      const { port } = server.address();
      const serverSide = once(server, 'secureConnection');
      const client = tlswrap.connect({ host: '::1', port, ca: fixtures.ca });
      await once(client, 'secureConnect');
      const [sock] = await serverSide;
      assert.strictEqual(client.authorized, true); // ::1 is an IP SAN of the cert
      assert.strictEqual(client.remoteAddress, '::1');
      assert.strictEqual(client.remoteFamily, 'IPv6');
      assert.deepStrictEqual(client.address(), { address: '::1', family: 'IPv6', port: client.localPort });
      assert.strictEqual(sock.remoteFamily, 'IPv6');
      client.destroy();
      sock.destroy();
    } finally {
      await closeServer(server);
    }
  });

  it('unref() on a connected socket lets the process exit (child process)', async function () {
    const server = tlswrap.createServer(serverOptions());
    const serverSockets = [];
    server.on('secureConnection', (sock) => {
      serverSockets.push(sock);
      sock.on('error', () => {});
    });
    const port = await listen(server);
    try {
      const script = path.join(__dirname, 'child', 'b-unref.js');
      const stdout = await new Promise((resolve, reject) => {
        execFile(process.execPath, [script, String(port)], { timeout: 10000 }, (err, out, stderr) => {
          if (err) reject(new Error(`child did not exit cleanly: ${err.message}\n${stderr}`));
          else resolve(out);
        });
      });
      assert.deepStrictEqual(JSON.parse(stdout.trim()), { authorized: true, returnsThis: true });
    } finally {
      for (const s of serverSockets) s.destroy();
      await closeServer(server);
    }
  });

  // A child node process running test/child/`name` with `args`: its stdout
  // one JSON object per line (next() resolves with the next one) and its
  // exit; killed after 10 s, so a child the loop keeps alive fails the test.
  function child(name, args) {
    const proc = spawn(process.execPath, [path.join(__dirname, 'child', name), ...args]);
    const lines = [];
    const waiting = [];
    let out = '';
    let stderr = '';
    proc.stdout.on('data', (d) => {
      out += d;
      let i;
      while ((i = out.indexOf('\n')) !== -1) {
        const line = JSON.parse(out.slice(0, i));
        out = out.slice(i + 1);
        if (waiting.length) waiting.shift()(line);
        else lines.push(line);
      }
    });
    proc.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => proc.kill(), 10000);
    const exited = new Promise((resolve) => proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? 'exited' : `exit code ${code}, signal ${signal}\n${stderr}`);
    }));
    return {
      exited,
      hasExited: () => proc.exitCode !== null || proc.signalCode !== null,
      next: () => (lines.length ? Promise.resolve(lines.shift()) :
        Promise.race([new Promise((resolve) => waiting.push(resolve)),
          exited.then((how) => { throw new Error(`child ended before its next line: ${how}`); })])),
      kill: () => proc.kill(),
    };
  }

  // unref() (or ref() after it) before the TCP connection is up: the state
  // holds for the handle that carries the connection once it is.
  for (const mode of ['connecting', 'connecting-lookup', 'upgrade-unrefed']) {
    it(`unref() before connecting lets the process exit: ${mode} (child process)`, async function () {
      const server = tlswrap.createServer(serverOptions());
      const serverSockets = [];
      server.on('secureConnection', (sock) => {
        serverSockets.push(sock);
        sock.on('error', () => {});
      });
      const port = await listen(server);
      const c = child('b-unref-early.js', [String(port), mode]);
      try {
        assert.deepStrictEqual(await c.next(), { authorized: true });
        assert.strictEqual(await c.exited, 'exited');
      } finally {
        c.kill();
        for (const s of serverSockets) s.destroy();
        await closeServer(server);
      }
    });
  }

  for (const mode of ['ref-again', 'ref-again-lookup']) {
    it(`ref() after unref() before connecting keeps the process alive: ${mode} (child process)`, async function () {
      const server = tlswrap.createServer(serverOptions());
      let onSock;
      const serverSide = new Promise((resolve) => { onSock = resolve; });
      server.on('secureConnection', (sock) => {
        sock.on('error', () => {});
        onSock(sock);
      });
      const port = await listen(server);
      const c = child('b-unref-early.js', [String(port), mode]);
      const sock = await serverSide;
      try {
        assert.deepStrictEqual(await c.next(), { authorized: true });
        await sleep(300);
        assert.strictEqual(c.hasExited(), false, 'the child exited with its connection ref\'d');
        // Ending the connection is what lets it go.
        sock.destroy();
        assert.strictEqual(await c.exited, 'exited');
      } finally {
        c.kill();
        sock.destroy();
        await closeServer(server);
      }
    });
  }

  for (const mode of ['before-upgrade', 'connection-listener']) {
    it(`unref() on an accepted net.Socket holds for its TLS socket: ${mode} (child process)`, async function () {
      const c = child('b-unref-server.js', [mode]);
      let client;
      try {
        const { port } = await c.next();
        client = tlswrap.connect(clientOptions(port));
        client.on('error', () => {});
        await once(client, 'secureConnect');
        assert.deepStrictEqual(await c.next(), { secure: true });
        assert.strictEqual(await c.exited, 'exited');
      } finally {
        c.kill();
        if (client) client.destroy();
      }
    });
  }

  it('handshakeTimeout: a silent TCP client gets tlsClientError ERR_TLS_HANDSHAKE_TIMEOUT', async function () {
    const server = tlswrap.createServer(serverOptions({ handshakeTimeout: 200 }));
    const port = await listen(server);
    const start = Date.now();
    const raw = net.connect(port, '127.0.0.1');
    raw.on('error', () => {});
    try {
      const [err, sock] = await once(server, 'tlsClientError');
      const elapsed = Date.now() - start;
      assert.ok(elapsed >= 180 && elapsed < 3000, `after ${elapsed} ms`);
      assert.ok(err instanceof Error);
      assert.strictEqual(err.code, 'ERR_TLS_HANDSHAKE_TIMEOUT');
      assert.strictEqual(err.message, 'TLS handshake timeout');
      assert.ok(sock instanceof tlswrap.TLSSocket);
      // node leaves the socket to the listener; destroying it drops the TCP connection.
      sock.destroy();
      await closed(raw);
    } finally {
      raw.destroy();
      await closeServer(server);
    }
  });

  it('a client that completes the handshake in time is not cut by handshakeTimeout', async function () {
    // Room for a slow handshake (several hundred ms under valgrind), then
    // past the timeout: the timer must be gone once the handshake is done.
    const p = await makePair({ handshakeTimeout: 1000 });
    try {
      await sleep(1100);
      p.client.write('still here');
      const data = await readBytes(p.sock, 10);
      assert.strictEqual(data.toString(), 'still here');
    } finally {
      await closePair(p);
    }
  });
});

describe('socket: wrapping existing streams', function () {
  it('new TLSSocket(<connected socket>) as a client: its first write starts the handshake, with setServername()\'s name',
    async function () {
      const seen = [];
      const server = tlswrap.createServer(serverOptions(), (sock) => {
        seen.push(sock.servername);
        sock.on('error', () => {});
        sock.once('data', (d) => sock.end(`got ${d}`));
      });
      const port = await listen(server);
      const raw = net.connect(port, '127.0.0.1');
      try {
        await once(raw, 'connect');
        const client = new tlswrap.TLSSocket(raw, { rejectUnauthorized: false });
        client.setServername('localhost');
        const events = [];
        client.on('secure', () => events.push('secure'));
        client.write('ping');
        const got = await readBytes(client, 'got ping'.length);
        assert.strictEqual(got.toString(), 'got ping');
        assert.deepStrictEqual(events, ['secure']);
        assert.deepStrictEqual(seen, ['localhost']);
        client.destroy();
      } finally {
        raw.destroy();
        await closeServer(server);
      }
    });

  // A TCP server that records what a hand-made client says, and when.
  async function listenRecording() {
    const got = [];
    const peers = [];
    const server = net.createServer((s) => {
      peers.push(s);
      s.on('error', () => {});
      s.on('data', (d) => got.push(d));
    });
    const port = await listen(server);
    const close = async () => {
      for (const s of peers) s.destroy();
      await closeServer(server);
    };
    return { got, port, close };
  }

  async function handshakeWaitsForWrite(makeClient) {
    const rec = await listenRecording();
    const { client, raw } = makeClient(rec.port);
    client.on('error', () => {});
    try {
      await once(raw, 'connect');
      // Connected, nothing written: no ClientHello yet.
      await sleep(200);
      assert.strictEqual(rec.got.length, 0, 'the client spoke before its first write');
      client.write('hello');
      const deadline = Date.now() + 5000;
      while (rec.got.length === 0 && Date.now() < deadline) await sleep(10);
      assert.ok(rec.got.length > 0, 'no ClientHello after the first write');
      assert.strictEqual(rec.got[0][0], 22, 'the first byte is not a handshake record');
    } finally {
      client.destroy();
      raw.destroy();
      await rec.close();
    }
  }

  it('new TLSSocket(<connecting socket>) as a client: the handshake waits for its first write', async function () {
    await handshakeWaitsForWrite((port) => {
      const raw = net.connect(port, '127.0.0.1');
      return { raw, client: new tlswrap.TLSSocket(raw, { rejectUnauthorized: false }) };
    });
  });

  it('new TLSSocket() then connect(): the handshake waits for its first write', async function () {
    await handshakeWaitsForWrite((port) => {
      const client = new tlswrap.TLSSocket(null, { rejectUnauthorized: false });
      client.connect(port, '127.0.0.1');
      return { raw: client, client };
    });
  });

  // node:tls reports a peer gone mid-handshake as ECONNRESET on connect()'s
  // sockets (and a server's, as 'tlsClientError'); one made by hand ends.
  it('a client made by hand whose peer closes mid-handshake: it ends, with no error', async function () {
    const server = net.createServer((s) => s.once('data', () => s.end()));
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    try {
      await once(raw, 'connect');
      const client = new tlswrap.TLSSocket(raw, { rejectUnauthorized: false });
      const events = [];
      for (const name of ['secure', 'end', 'error', '_tlsError']) {
        client.on(name, (err) => events.push(err && err.code ? `${name} ${err.code}` : name));
      }
      client.on('data', () => {});
      client.write('x');
      await once(client, 'end');
      await sleep(50);
      assert.deepStrictEqual(events, ['end']);
      const viaConnect = tlswrap.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
      const [err] = await once(viaConnect, 'error');
      assert.strictEqual(err.code, 'ECONNRESET');
      client.destroy();
    } finally {
      raw.destroy();
      await closeServer(server);
    }
  });

  // node:tls gives every TLSSocket an 'error' listener that re-emits
  // '_tlsError'; connect() drops it at once, a server at 'secureConnection'.
  // A socket made by hand keeps it: unhandled, its errors do not throw.
  it("a TLSSocket made by hand: a failed handshake is '_tlsError', not an uncaught 'error'", async function () {
    const secureContext = tlswrap.createSecureContext(serverOptions());
    const seen = [];
    let done;
    const closed = new Promise((resolve) => { done = resolve; });
    const server = net.createServer((plain) => {
      const t = new tlswrap.TLSSocket(plain, { isServer: true, secureContext });
      t.on('_tlsError', (err) => seen.push(`_tlsError ${err.code}`));
      t.on('close', () => done());
    });
    const port = await listen(server);
    const peer = net.connect(port, '127.0.0.1', () => peer.write(Buffer.alloc(1024, 42)));
    peer.on('error', () => {});
    try {
      await closed;
      assert.deepStrictEqual(seen, ['_tlsError ERR_SSL_WRONG_VERSION_NUMBER']);
    } finally {
      peer.destroy();
      await closeServer(server);
    }
  });

  it("connect()'s sockets have no 'error' listener, a server's only the server's", async function () {
    const server = tlswrap.createServer(serverOptions());
    const accepted = once(server, 'secureConnection');
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    try {
      assert.strictEqual(client.listenerCount('error'), 0);
      assert.strictEqual(new tlswrap.TLSSocket(null).listenerCount('error'), 1);
      await once(client, 'secureConnect');
      const [sock] = await accepted;
      assert.strictEqual(sock.listenerCount('error'), 1); // the server's, for tlsClientError
      sock.destroy();
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  it('new TLSSocket(x) or connect({ socket: x }) with x not a stream (an EventEmitter): a TypeError at once', function () {
    const { EventEmitter } = require('node:events');
    assert.throws(() => new tlswrap.TLSSocket(new EventEmitter()), TypeError);
    assert.throws(() => new tlswrap.TLSSocket({ write() {} }), TypeError);
    assert.throws(() => tlswrap.connect({ socket: new EventEmitter() }), TypeError);
  });

  it('STARTTLS: a plain line first, then new TLSSocket(netSocket, {isServer}) and connect({socket})', async function () {
    const secureContext = tlswrap.createSecureContext(serverOptions());
    let lineSeen;
    let onServerTls;
    const serverTls = new Promise((resolve) => { onServerTls = resolve; });
    const server = net.createServer((plain) => {
      plain.on('error', () => {});
      // Only the command line is plain text; the client sends TLS after our reply.
      plain.once('data', (line) => {
        lineSeen = line.toString();
        plain.write('220 go ahead\r\n');
        const t = new tlswrap.TLSSocket(plain, { isServer: true, secureContext });
        t.on('error', () => {});
        t.on('data', (d) => t.end(`secret:${d}`));
        t.once('secure', () => onServerTls(t));
      });
    });
    const port = await listen(server);
    try {
      const raw = net.connect(port, '127.0.0.1');
      await once(raw, 'connect');
      raw.write('STARTTLS\r\n');
      const [reply] = await once(raw, 'data');
      assert.strictEqual(reply.toString(), '220 go ahead\r\n');
      assert.strictEqual(lineSeen, 'STARTTLS\r\n');

      const client = tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca });
      await once(client, 'secureConnect');
      const t = await serverTls;
      assert.ok(client instanceof tlswrap.TLSSocket);
      assert.ok(t instanceof tlswrap.TLSSocket);
      assert.strictEqual(client.authorized, true);
      assert.strictEqual(client.encrypted, true);
      assert.strictEqual(t.encrypted, true);
      assert.strictEqual(t.getProtocol(), client.getProtocol());
      // Addresses come from the wrapped TCP socket.
      assert.strictEqual(client.remotePort, port);
      assert.strictEqual(t.remotePort, raw.localPort);

      const chunks = [];
      client.on('data', (d) => chunks.push(d));
      const done = closed(client);
      client.write('hello');
      await once(client, 'end');
      assert.strictEqual(Buffer.concat(chunks).toString(), 'secret:hello');
      await done;
    } finally {
      await closeServer(server);
    }
  });

  // Two Duplexes joined by two PassThroughs: what one writes, the other reads.
  function duplexPair() {
    const side = (inbound, outbound) => {
      const d = new Duplex({
        read() { inbound.resume(); },
        write(chunk, enc, cb) { outbound.write(chunk, cb); },
        final(cb) { outbound.end(); cb(); },
      });
      inbound.on('data', (chunk) => { if (!d.push(chunk)) inbound.pause(); });
      inbound.on('end', () => d.push(null));
      return d;
    };
    const aToB = new PassThrough();
    const bToA = new PassThrough();
    return [side(bToA, aToB), side(aToB, bToA)];
  }

  it('new TLSSocket(duplex, {isServer}) and connect({socket: duplex}) over a plain Duplex pair', async function () {
    const [a, b] = duplexPair();
    const server = new tlswrap.TLSSocket(b, { isServer: true, secureContext: tlswrap.createSecureContext(serverOptions()) });
    const serverSecure = once(server, 'secure');
    const client = tlswrap.connect({ socket: a, servername: 'localhost', ca: fixtures.ca });
    try {
      await once(client, 'secureConnect');
      await serverSecure;
      assert.strictEqual(client.authorized, true);
      assert.strictEqual(server.servername, 'localhost');
      assert.strictEqual(server.getProtocol(), 'TLSv1.3');
      // No addresses: the transport is not a socket.
      assert.strictEqual(client.remoteAddress, undefined);

      // Both directions, one of them bulk.
      const bulk = Buffer.alloc(256 * 1024);
      for (let i = 0; i < bulk.length; i++) bulk[i] = i % 251;
      server.on('data', (d) => {
        if (d.toString() === 'ping') server.write(bulk);
      });
      client.write('ping');
      const got = await readBytes(client, bulk.length);
      assert.ok(got.equals(bulk));
    } finally {
      const done = [client, server].map((s) => (s.closed ? null : closed(s)));
      client.destroy();
      server.destroy();
      await Promise.all(done);
    }
  });

  // A Duplex-shaped object over a TCP socket, as programs hand-roll them:
  // `views` hands over its reads as DataView / ArrayBuffer; `syncFalse`
  // calls each write back at once yet answers false and never emits
  // 'drain'; `closeAt` emits 'close' during that write.
  class LooseDuplex extends EventEmitter {
    constructor(sock, { views = false, syncFalse = false, closeAt = 0 } = {}) {
      super();
      this.sock = sock;
      this.writes = 0;
      this.closeAt = closeAt;
      this.syncFalse = syncFalse;
      let n = 0;
      sock.on('data', (d) => {
        if (!views) return this.emit('data', d);
        const copy = new Uint8Array(d).buffer;
        this.emit('data', n++ % 2 ? new DataView(copy) : copy);
      });
      sock.on('end', () => this.emit('end'));
      sock.on('close', () => this.emit('close'));
      sock.on('error', (err) => this.emit('error', err));
    }

    write(chunk, enc, cb) {
      if (typeof enc === 'function') cb = enc;
      this.sock.write(chunk);
      if (++this.writes === this.closeAt) this.emit('close');
      if (this.syncFalse) {
        cb();
        return false;
      }
      process.nextTick(cb);
      return true;
    }

    end() { this.sock.end(); return this; }
    destroy() { this.sock.destroy(); return this; }
    pause() { this.sock.pause(); return this; }
    resume() { this.sock.resume(); return this; }
    cork() {}
    uncork() {}
    setNoDelay() {}
    setKeepAlive() {}
    setTimeout() {}
    ref() {}
    unref() {}
  }

  async function looseRoundTrip(looseOptions) {
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      let got = 0;
      sock.on('error', () => {});
      sock.on('data', (d) => {
        got += d.length;
        if (got === 300000) sock.end(`got ${got}`);
      });
    });
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    await once(raw, 'connect');
    const loose = new LooseDuplex(raw, looseOptions);
    const client = tlswrap.connect({ socket: loose, servername: 'localhost', ca: fixtures.ca });
    const seen = { reply: '', errors: [], writeErrors: [] };
    client.on('data', (d) => { seen.reply += d; });
    client.on('error', (err) => seen.errors.push(err.code));
    try {
      await once(client, 'secureConnect');
      for (let i = 0; i < 3; i++) client.write(Buffer.alloc(100000, i), (err) => err && seen.writeErrors.push(err.code));
      await closed(client);
      return seen;
    } finally {
      raw.destroy();
      await closeServer(server);
    }
  }

  it('a Duplex handing over DataViews and ArrayBuffers: read as their bytes', async function () {
    const seen = await looseRoundTrip({ views: true });
    assert.deepStrictEqual(seen, { reply: 'got 300000', errors: [], writeErrors: [] });
  });

  it("a Duplex whose write() calls back, answers false and never emits 'drain': no stall", async function () {
    const seen = await looseRoundTrip({ syncFalse: true });
    assert.deepStrictEqual(seen, { reply: 'got 300000', errors: [], writeErrors: [] });
  });

  it("a Duplex that closes with a write in flight: the write and the socket fail with ECANCELED", async function () {
    const seen = await looseRoundTrip({ closeAt: 3 });
    assert.deepStrictEqual(seen.errors, ['ECANCELED']);
    // The writes queued behind it fail as the stream is destroyed.
    assert.strictEqual(seen.writeErrors[0], 'ECANCELED', seen.writeErrors);
  });

  // A tlswrap client over a SocketDuplex on TCP to a tlswrap server that
  // reads everything: runs `fn({ duplex, client, errors })` once the client
  // is connected (`errors`: the client's 'error' events), then cleans up.
  async function overDuplex(fn, prepare = () => {}) {
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.on('error', () => {});
      sock.resume();
    });
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    try {
      await once(raw, 'connect');
      const duplex = new SocketDuplex(raw);
      prepare(duplex);
      const client = tlswrap.connect({ socket: duplex, servername: 'localhost', ca: fixtures.ca });
      const errors = [];
      client.on('error', (err) => errors.push(err));
      await once(client, 'secureConnect');
      await fn({ duplex, client, errors });
    } finally {
      raw.destroy();
      await closeServer(server);
    }
  }

  // A Duplex that goes away without a 'close' (emitClose off): a write
  // after that cannot leave. node:tls fails it, and the socket, with EPIPE.
  for (const how of ['ended', 'destroyed']) {
    it(`a Duplex ${how} without 'close': a later write and the socket fail with EPIPE`, async function () {
      const noClose = (duplex) => {
        duplex._writableState.emitClose = false;
        duplex._readableState.emitClose = false;
      };
      await overDuplex(async ({ duplex, client, errors }) => {
        if (how === 'ended') duplex.end();
        else duplex.destroy();
        const writeError = await new Promise((resolve) => client.write('lost', resolve));
        assert.strictEqual(writeError && writeError.code, 'EPIPE');
        if (!client.closed) await once(client, 'close');
        assert.ok(errors.some((e) => e.code === 'EPIPE'), `socket errors: ${errors.map((e) => e.code)}`);
      }, noClose);
    });
  }

  // A Duplex write that calls back with an error: the user's write waiting
  // on it fails as node:tls's JS stream reports it (the error's code when it
  // names a system error, else EPIPE); the socket fails with the Duplex's.
  for (const [code, expected] of [[undefined, 'EPIPE'], ['ECONNRESET', 'ECONNRESET'], ['ENOTANERRNO', 'EPIPE']]) {
    it(`a Duplex write failing with code ${code}: the write fails with ${expected}, the socket with the Duplex's error`, async function () {
      await overDuplex(async ({ duplex, client, errors }) => {
        const failure = new Error('the Duplex failed');
        if (code !== undefined) failure.code = code;
        duplex._write = (chunk, encoding, cb) => cb(failure);
        const writeError = await new Promise((resolve) => client.write('lost', resolve));
        assert.ok(writeError, 'the write succeeded');
        assert.strictEqual(writeError.code, expected);
        assert.strictEqual(writeError.syscall, 'write');
        assert.strictEqual(writeError.message, `write ${expected}`);
        if (!client.closed) await once(client, 'close');
        assert.strictEqual(errors[0], failure);
      });
    });
  }

  // A transport the caller passed in fails: its error is the TLS socket's,
  // emitted at once (before listeners the caller adds to the transport
  // afterwards), and the TLS socket then closes with the transport, with
  // no error of its own: 'close' false, and no second error (no "socket
  // disconnected before secure TLS connection" for the end of the stream).
  it("connect({ socket }) whose connection is refused: 'error' ECONNREFUSED first, then 'close' false", async function () {
    const probe = net.createServer();
    const port = await listen(probe);
    await closeServer(probe);
    const raw = net.connect(port, '127.0.0.1');
    const client = tlswrap.connect({ socket: raw, servername: 'localhost', ca: fixtures.ca });
    const events = [];
    client.on('error', (err) => events.push(`tls error ${err.code}`));
    client.on('secureConnect', () => events.push('secureConnect'));
    raw.on('error', (err) => events.push(`raw error ${err.code}`));
    const hadError = await new Promise((resolve) => client.on('close', resolve));
    assert.strictEqual(hadError, false);
    assert.deepStrictEqual(events, ['tls error ECONNREFUSED', 'raw error ECONNREFUSED']);
  });

  it("a Duplex transport destroyed with an error: that 'error' once, then 'close' false", async function () {
    const duplex = new Duplex({ read() {}, write(chunk, encoding, cb) { cb(); } });
    const client = tlswrap.connect({ socket: duplex, servername: 'localhost', ca: fixtures.ca });
    const errors = [];
    client.on('error', (err) => errors.push(err));
    const failure = new Error('the Duplex failed');
    setImmediate(() => duplex.destroy(failure));
    const hadError = await new Promise((resolve) => client.on('close', resolve));
    assert.strictEqual(hadError, false);
    assert.deepStrictEqual(errors, [failure]);
  });

  // The transport goes away with a write waiting behind the handshake (in
  // the TLS layer, not in the Duplex): the write fails ECANCELED (node:tls
  // 22 on; 20 calls it back without an error), and the socket closes
  // without an error, whether made by hand or by connect().
  for (const made of ['by hand', 'by connect()']) {
    it(`a Duplex destroyed under a socket made ${made}, a write behind the handshake: the write fails, 'close' false`, async function () {
      const duplex = new Duplex({ read() {}, write(chunk, encoding, cb) { cb(); } });
      const client = made === 'by hand' ? new tlswrap.TLSSocket(duplex, {}) :
        tlswrap.connect({ socket: duplex, servername: 'localhost', ca: fixtures.ca });
      const events = [];
      client.on('error', (err) => events.push(`error ${err.code}`));
      client.on('end', () => events.push('end'));
      const written = new Promise((resolve) => client.write('waits for the handshake', resolve));
      setImmediate(() => duplex.destroy());
      const hadError = await new Promise((resolve) => client.on('close', resolve));
      const writeError = await written;
      const oldNode = Number(process.versions.node.split('.')[0]) < 22;
      if (!(builtin && oldNode)) assert.strictEqual(writeError && writeError.code, 'ECANCELED');
      assert.strictEqual(hadError, false);
      assert.deepStrictEqual(events, []);
    });
  }

  // A Duplex that ends (the peer left after the ClientHello) and is
  // destroyed in the same tick: the EOF before the handshake still fails
  // the client with node:tls's reset, though 'close' beat 'end'.
  it("a Duplex that pushes EOF and closes at once, mid-handshake: ECONNRESET, 'close' true", async function () {
    const duplex = new Duplex({
      read() {},
      write(chunk, encoding, cb) {
        cb();
        setImmediate(() => {
          duplex.push(null);
          duplex.destroy();
        });
      },
    });
    const client = tlswrap.connect({ socket: duplex, servername: 'localhost', ca: fixtures.ca });
    const errors = [];
    client.on('error', (err) => errors.push(err.code));
    const hadError = await new Promise((resolve) => client.on('close', resolve));
    assert.deepStrictEqual(errors, ['ECONNRESET']);
    assert.strictEqual(hadError, true);
  });

  // A server and a client over a pair of Duplexes (the server node:tls's
  // where the suite runs against it, tlswrap's otherwise).
  function tlsOverDuplexes() {
    let a = null;
    let b = null;
    const slow = { on: false };
    a = new Duplex({ read() {}, write(chunk, encoding, cb) { b.push(chunk); if (slow.on) setTimeout(cb, 100); else cb(); } });
    b = new Duplex({ read() {}, write(chunk, encoding, cb) { a.push(chunk); cb(); } });
    const server = new tlswrap.TLSSocket(b, { isServer: true, key: fixtures.serverKey, cert: fixtures.serverCert });
    server.on('error', () => {});
    return { a, b, slow, server };
  }

  it("a write made in 'secureConnect' and the Duplex destroyed at once: the write and the socket fail ECANCELED", async function () {
    const { a, slow, server } = tlsOverDuplexes();
    const client = tlswrap.connect({ socket: a, servername: 'localhost', ca: fixtures.ca });
    const events = [];
    client.on('error', (err) => events.push(`error ${err.code}`));
    client.on('secureConnect', () => {
      slow.on = true;
      client.write('hello', (err) => events.push(`write ${err && err.code}`));
      a.destroy();
    });
    const hadError = await new Promise((resolve) => client.on('close', resolve));
    server.destroy();
    assert.strictEqual(hadError, true);
    assert.deepStrictEqual(events.sort(), ['error ECANCELED', 'write ECANCELED']);
  });

  it("every error of a caller's Duplex reaches the TLS socket, and a TLS error after them too", async function () {
    const { a, server } = tlsOverDuplexes();
    const client = tlswrap.connect({ socket: a, servername: 'localhost', ca: fixtures.ca });
    const errors = [];
    client.on('error', (err) => errors.push(err.code || err.message));
    a.emit('error', new Error('first'));
    a.emit('error', new Error('second'));
    await once(client, 'secureConnect');
    a.push(Buffer.from('this is not a TLS record at all..........'));
    const deadline = Date.now() + 5000;
    while (errors.length < 3 && Date.now() < deadline) await sleep(20);
    client.destroy();
    server.destroy();
    // The record error's code is OpenSSL's (3.0 and 3.5 name it differently).
    assert.deepStrictEqual(errors.slice(0, 2), ['first', 'second']);
    assert.match(String(errors[2]), /^ERR_SSL_/);
    assert.strictEqual(errors.length, 3);
  });

  it("a Duplex that emits 'error' and stays open: the TLS socket reports it and stays open too", async function () {
    const duplex = new Duplex({ read() {}, write(chunk, encoding, cb) { cb(); }, autoDestroy: false, emitClose: false });
    const client = tlswrap.connect({ socket: duplex, servername: 'localhost', ca: fixtures.ca });
    const failure = new Error('a passing failure');
    setImmediate(() => duplex.emit('error', failure));
    const [err] = await once(client, 'error');
    assert.strictEqual(err, failure);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.strictEqual(client.destroyed, false);
    client.destroy();
    const [hadError] = await once(client, 'close');
    assert.strictEqual(hadError, false);
  });

  it('http.createServer fed tlswrap sockets; https.request/http.request over createConnection', async function () {
    const httpServer = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        res.setHeader('x-encrypted', String(req.socket.encrypted));
        res.setHeader('x-servername', String(req.socket.servername));
        res.end(`${req.method} ${req.url} ${body}`);
      });
    });
    const tlsServer = tlswrap.createServer(serverOptions());
    tlsServer.on('secureConnection', (sock) => httpServer.emit('connection', sock));
    const port = await listen(tlsServer);
    const request = (mod, method, body) => new Promise((resolve, reject) => {
      const req = mod.request({
        host: '127.0.0.1', port, path: '/hello?x=1', method, headers: { connection: 'close' },
        createConnection: (opts) => tlswrap.connect({ host: opts.host, port: opts.port, servername: 'localhost', ca: fixtures.ca }),
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const socket = res.socket;
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { data += d; });
        res.on('end', () => resolve({ res, data, socket }));
      });
      req.end(body);
    });
    try {
      const get = await request(https, 'GET');
      assert.strictEqual(get.res.statusCode, 200);
      assert.strictEqual(get.data, 'GET /hello?x=1 ');
      assert.strictEqual(get.res.headers['x-encrypted'], 'true');
      assert.strictEqual(get.res.headers['x-servername'], 'localhost');
      assert.ok(get.socket instanceof tlswrap.TLSSocket);

      const post = await request(http, 'POST', 'a body');
      assert.strictEqual(post.res.statusCode, 200);
      assert.strictEqual(post.data, 'POST /hello?x=1 a body');
    } finally {
      httpServer.close();
      await closeServer(tlsServer);
    }
  });
});

describe('socket: construction and connecting, as node:tls', function () {
  for (const when of ['right after connect()', "in a 'connect' listener"]) {
    it(`end() ${when}: the handshake still runs, then the socket ends (as node:tls)`, async function () {
      const server = tlswrap.createServer(serverOptions(), (sock) => {
        sock.on('error', () => {});
        sock.resume();
        sock.on('end', () => sock.end());
      });
      const port = await listen(server);
      const events = [];
      const client = tlswrap.connect(clientOptions(port));
      for (const name of ['connect', 'finish', 'secureConnect', 'end', 'close']) {
        client.on(name, () => events.push(name));
      }
      client.on('error', (err) => events.push(`error ${err.code}`));
      if (when === 'right after connect()') client.end();
      else client.on('connect', () => client.end());
      client.resume();
      try {
        await once(client, 'close');
        assert.deepStrictEqual(events, ['connect', 'finish', 'secureConnect', 'end', 'close']);
      } finally {
        client.destroy();
        await closeServer(server);
      }
    });
  }

  it('made without a socket: connecting and readyState opening until destroyed', function () {
    const bare = new tlswrap.TLSSocket();
    assert.strictEqual(bare.connecting, true);
    assert.strictEqual(bare.readyState, 'opening');
    bare.destroy();
    assert.strictEqual(bare.connecting, false);
  });

  it('the signal option: an abort destroys the socket with an AbortError, before or after', async function () {
    for (const early of [true, false]) {
      const ac = new AbortController();
      if (early) ac.abort();
      const sock = new tlswrap.TLSSocket(undefined, { signal: ac.signal });
      const failed = once(sock, 'error');
      if (!early) ac.abort();
      const [err] = await failed;
      assert.strictEqual(err.name, 'AbortError');
    }
    assert.throws(() => new tlswrap.TLSSocket(undefined, { signal: {} }), { code: 'ERR_INVALID_ARG_TYPE' });
  });

  it("connect() reports each address it tries ('connectionAttempt', 'connectionAttemptFailed')", async function () {
    // 127.0.0.2 refuses (nothing listens there), 127.0.0.1 answers: the same
    // happy-eyeballs walk net.connect does, seen on the TLS socket.
    const server = tlswrap.createServer(serverOptions(), (sock) => sock.end());
    const port = await listen(server);
    const events = [];
    const client = tlswrap.connect({
      host: 'localhost', port, ca: fixtures.ca, autoSelectFamily: true,
      lookup: (host, opts, cb) => cb(null, [{ address: '127.0.0.2', family: 4 }, { address: '127.0.0.1', family: 4 }]),
    });
    for (const name of ['connectionAttempt', 'connectionAttemptFailed']) {
      client.on(name, (address) => events.push(`${name} ${address}`));
    }
    try {
      await once(client, 'secureConnect');
      assert.deepStrictEqual(events.filter((e) => e.startsWith('connectionAttemptFailed')),
        ['connectionAttemptFailed 127.0.0.2']);
      assert.ok(events.includes('connectionAttempt 127.0.0.1'), events.join(', '));
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  it("connect({ socket }) leaves the caller's socket as it was, and its events to it", async function () {
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.on('error', () => {});
      sock.write('hello');
    });
    const port = await listen(server);
    const raw = new net.Socket({ allowHalfOpen: false });
    const events = [];
    const client = tlswrap.connect({ socket: raw, ca: fixtures.ca, servername: 'localhost' });
    for (const name of ['lookup', 'connect', 'ready']) client.on(name, () => events.push(name));
    raw.connect(port, 'localhost');
    try {
      await once(client, 'secureConnect');
      assert.deepStrictEqual(events, ['connect']);
      // The generic transport keeps the socket half-open, or it would end
      // itself on the peer's FIN before the engine is done with it.
      if (process.env.TLSWRAP_TRANSPORT !== 'js') assert.strictEqual(raw.allowHalfOpen, false);
      const [data] = await once(client, 'data');
      assert.strictEqual(data.toString(), 'hello');
      client.destroy();
      await once(client, 'close');
      assert.strictEqual(client.bufferSize, undefined);
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  // node:tls sets options.timeout only on a connection it makes itself.
  it("connect({ socket, timeout }) leaves the timeout to the caller's socket; connect({ timeout }) sets it", async function () {
    // A TCP server that never answers: both TLS sockets stay in their handshake.
    const server = net.createServer((s) => s.resume());
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    const sockets = [raw];
    try {
      await once(raw, 'connect');
      const given = tlswrap.connect({ socket: raw, timeout: 50 });
      const made = tlswrap.connect({ port, host: '127.0.0.1', timeout: 50 });
      sockets.push(given, made);
      const fired = [];
      for (const [name, s] of [['given', given], ['made', made]]) {
        s.on('error', () => {});
        s.on('timeout', () => fired.push(name));
      }
      await sleep(300);
      assert.strictEqual(given.timeout, undefined);
      assert.strictEqual(made.timeout, 50);
      assert.deepStrictEqual([...new Set(fired)], ['made']);
    } finally {
      for (const s of sockets) s.destroy();
      await closeServer(server);
    }
  });

  it('traffic refreshes the timeout of the socket underneath', async function () {
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      let n = 0;
      const timer = setInterval(() => {
        if (++n === 12) {
          clearInterval(timer);
          sock.end();
        } else {
          sock.write('x');
        }
      }, 100);
      sock.on('close', () => clearInterval(timer));
    });
    const port = await listen(server);
    const raw = net.connect(port, '127.0.0.1');
    let timeouts = 0;
    // 1.2 s of traffic against a 450 ms timeout: without the refresh it
    // fires, and a loaded machine (ASan in CI) may stall a gap by 350 ms.
    raw.setTimeout(450, () => { timeouts++; });
    const client = tlswrap.connect({ socket: raw, ca: fixtures.ca, servername: 'localhost' });
    try {
      client.resume();
      await once(client, 'end');
      assert.strictEqual(timeouts, 0);
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });

  it("new TLSSocket(socket, { servername }) ignores the option, as node:tls's does; connect() sets it", async function () {
    for (const value of [123, {}, true, Buffer.from('x'), 'example.com']) {
      const sock = new tlswrap.TLSSocket(new net.Socket(), { servername: value });
      assert.strictEqual(sock.servername, null);
      sock.destroy();
    }
    // The constructor's servername is not sent; connect()'s is.
    const seen = [];
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      seen.push(sock.servername);
      sock.on('error', () => {});
      sock.resume();
      sock.end('bye');
    });
    const port = await listen(server);
    try {
      const byHand = new tlswrap.TLSSocket(null, { servername: 'example.com', rejectUnauthorized: false });
      byHand.connect(port, '127.0.0.1', () => byHand.write('x'));
      await readBytes(byHand, 3);
      byHand.destroy();
      const client = tlswrap.connect({ port, host: '127.0.0.1', servername: 'example.com', rejectUnauthorized: false });
      await readBytes(client, 3);
      client.destroy();
      assert.deepStrictEqual(seen, [false, 'example.com']);
    } finally {
      await closeServer(server);
    }
  });

  // node:tls's client TLSSocket made without a socket connects its own TCP
  // socket; the handshake runs (at the latest with the first write), 'secure'
  // comes, 'secureConnect' does not (that is tls.connect()'s).
  for (const [what, make] of [
    ['new TLSSocket()', () => new tlswrap.TLSSocket()],
    ['new TLSSocket(null, opts)', () => new tlswrap.TLSSocket(null, { ca: fixtures.ca, servername: 'localhost' })],
  ]) {
    it(`${what} then .connect(port, host, cb): 'connect', the handshake, data both ways`, async function () {
      const server = tlswrap.createServer(serverOptions(), (sock) => {
        sock.on('error', () => {});
        sock.once('data', (d) => sock.end(`got ${d}`));
      });
      const port = await listen(server);
      const client = make();
      try {
        const events = [];
        for (const name of ['connect', 'secure', 'secureConnect']) client.on(name, () => events.push(name));
        let cbThis = null;
        assert.strictEqual(client.connect(port, '127.0.0.1', function () {
          cbThis = this;
          client.write('ping');
        }), client);
        const got = await readBytes(client, 'got ping'.length);
        assert.strictEqual(got.toString(), 'got ping');
        assert.strictEqual(cbThis, client);
        assert.deepStrictEqual(events, ['connect', 'secure']);
        assert.strictEqual(client.remotePort, port);
        assert.ok(client.getProtocol().startsWith('TLS'));
      } finally {
        client.destroy();
        await closeServer(server);
      }
    });
  }

  // tls.connect({ socket }) waits for the socket's 'connect' before it
  // starts the handshake, whether it is connecting or not yet asked to.
  for (const [what, later] of [['still connecting', false], ['not yet connected (connected later)', true]]) {
    it(`connect({ socket }) with a net.Socket ${what}: 'connect', then the handshake`, async function () {
      const server = tlswrap.createServer(serverOptions(), (sock) => {
        sock.on('error', () => {});
        sock.once('data', (d) => sock.write(`got ${d}`));
      });
      const port = await listen(server);
      const raw = later ? new net.Socket() : net.connect(port, '127.0.0.1');
      const client = tlswrap.connect({ socket: raw, ca: fixtures.ca, servername: 'localhost' });
      try {
        const errors = [];
        client.on('error', (err) => errors.push(err));
        const events = [];
        for (const name of ['connect', 'secureConnect']) client.on(name, () => events.push(name));
        if (later) setTimeout(() => raw.connect(port, '127.0.0.1'), 20);
        await once(client, 'secureConnect');
        assert.strictEqual(client.authorized, true);
        client.write('ping');
        const got = await readBytes(client, 'got ping'.length);
        assert.strictEqual(got.toString(), 'got ping');
        assert.deepStrictEqual(events, ['connect', 'secureConnect']);
        assert.deepStrictEqual(errors, []);
      } finally {
        client.destroy();
        await closeServer(server);
      }
    });
  }

  it("allowHalfOpen with a socket given is the socket's, the option is ignored (new TLSSocket and connect)", function () {
    const made = [];
    const make = (socket, opts) => {
      const s = new tlswrap.TLSSocket(socket, opts);
      made.push(s);
      return s.allowHalfOpen;
    };
    try {
      for (const sockHalf of [false, true]) {
        for (const opt of [undefined, false, true]) {
          assert.strictEqual(make(new net.Socket({ allowHalfOpen: sockHalf }), { allowHalfOpen: opt }), sockHalf,
                             `net.Socket allowHalfOpen ${sockHalf}, option ${opt}`);
        }
      }
      const duplex = new Duplex({ read() {}, write(c, e, cb) { cb(); }, allowHalfOpen: false });
      assert.strictEqual(make(duplex, { allowHalfOpen: true }), false, 'a Duplex with allowHalfOpen false');
      // Without a socket the option counts.
      assert.strictEqual(make(null, { allowHalfOpen: true }), true);
      assert.strictEqual(make(null, {}), false);
      for (const opt of [undefined, true]) {
        const s = tlswrap.connect({ socket: new net.Socket({ allowHalfOpen: false }), allowHalfOpen: opt });
        s.on('error', () => {});
        made.push(s);
        assert.strictEqual(s.allowHalfOpen, false, `connect({ socket, allowHalfOpen: ${opt} })`);
      }
    } finally {
      for (const s of made) s.destroy();
    }
  });
});

describe('socket: connect({ signal })', function () {
  // As node:tls (net.Socket's option): an aborted signal destroys the
  // socket with an AbortError (code ABORT_ERR, cause the signal's reason),
  // whether it was aborted before connect(), right after, or on 'connect'.
  for (const when of ['before connect()', 'right after connect()', "on 'connect'"]) {
    it(`aborted ${when}: 'error' AbortError then 'close', no secureConnect`, async function () {
      const server = tlswrap.createServer(serverOptions(), (sock) => sock.on('error', () => {}));
      server.on('tlsClientError', () => {});
      const port = await listen(server);
      try {
        const ac = new AbortController();
        if (when === 'before connect()') ac.abort();
        const client = tlswrap.connect(clientOptions(port, { signal: ac.signal }));
        if (when === 'right after connect()') ac.abort();
        if (when === "on 'connect'") client.on('connect', () => ac.abort());
        let secure = false;
        client.on('secureConnect', () => { secure = true; });
        const errors = [];
        client.on('error', (err) => errors.push(err));
        await closed(client);
        assert.strictEqual(secure, false);
        assert.strictEqual(errors.length, 1);
        assert.strictEqual(errors[0].name, 'AbortError');
        assert.strictEqual(errors[0].code, 'ABORT_ERR');
        assert.strictEqual(errors[0].cause, ac.signal.reason);
      } finally {
        await closeServer(server);
      }
    });
  }

  it('a signal that is not an AbortSignal throws ERR_INVALID_ARG_TYPE', function () {
    assert.throws(() => tlswrap.connect(clientOptions(1, { signal: 'x' })), { code: 'ERR_INVALID_ARG_TYPE' });
  });
});

// What node's own modules read from socket._handle, and TLS layered over a
// TLS socket (TLS in TLS: a proxy's CONNECT tunnel over TLS).
describe('socket: the _handle surface, and TLS over a TLS socket', function () {
  const fs = require('node:fs');
  const nodeTls = require('node:tls');
  const { pattern } = require('./common');
  const onNativeTransport = builtin || process.env.TLSWRAP_TRANSPORT !== 'js';

  it("handle.fd: the connection's socket on the native transport, -1 over a JS Duplex", async function () {
    const pair = await makePair();
    try {
      for (const socket of [pair.client, pair.sock]) {
        const { fd } = socket._handle;
        if (onNativeTransport) {
          assert.ok(Number.isInteger(fd) && fd >= 0, `fd ${fd}`);
          assert.ok(fs.fstatSync(fd).isSocket());
        } else {
          assert.strictEqual(fd, -1);
        }
      }
      // node:http reads it for every connection: never a throw there.
      assert.doesNotThrow(() => pair.client._handle.isStreamBase);
    } finally {
      await closePair(pair);
    }
  });

  it('handle.writeQueueSize: a write the peer does not take counts; 0 once its callback ran', async function () {
    const pair = await makePair();
    try {
      const { client, sock } = pair;
      assert.strictEqual(typeof client._handle.writeQueueSize, 'number');
      sock.pause();
      const size = 8 * 1024 * 1024;
      let done = false;
      const written = new Promise((resolve, reject) => client.write(Buffer.alloc(size), (err) => {
        done = true;
        if (err) reject(err);
        else resolve();
      }));
      await sleep(50);
      assert.strictEqual(done, false);
      const queued = client._handle.writeQueueSize;
      assert.ok(queued > 1024 * 1024 && queued <= size * 1.01, `writeQueueSize ${queued}`);
      sock.resume();
      await written;
      await new Promise((resolve) => setImmediate(resolve));
      assert.strictEqual(client._handle.writeQueueSize, 0);
    } finally {
      await closePair(pair);
    }
  });

  // An outer connection whose server side runs an inner TLS server over the
  // outer socket; the client runs an inner client over its outer socket.
  async function tlsInTls(outerClientModule, innerClientModule) {
    const server = tlswrap.createServer(serverOptions(), (outer) => {
      outer.on('error', () => {});
      const inner = new tlswrap.TLSSocket(outer, { isServer: true, ...serverOptions() });
      inner.on('error', () => {});
      inner.on('data', (d) => inner.write(d)); // echo
    });
    const port = await listen(server);
    const outer = outerClientModule.connect(clientOptions(port));
    outer.on('error', () => {});
    try {
      await once(outer, 'secureConnect');
      let inner;
      try {
        inner = innerClientModule.connect({ socket: outer, ca: fixtures.ca, servername: 'localhost' });
      } catch (err) {
        return { thrown: err };
      }
      const failed = once(inner, 'error').then(([err]) => { throw err; });
      await Promise.race([once(inner, 'secureConnect'), failed]);
      const payload = pattern(256 * 1024);
      inner.write(payload);
      const echoed = await Promise.race([readBytes(inner, payload.length), failed]);
      const result = { authorized: inner.authorized, protocol: inner.getProtocol(), same: echoed.equals(payload) };
      inner.destroy();
      return result;
    } finally {
      outer.destroy();
      await closeServer(server);
    }
  }
  it('TLS in TLS: the module over its own TLS socket', async function () {
    assert.deepStrictEqual(await tlsInTls(tlswrap, tlswrap), { authorized: true, protocol: 'TLSv1.3', same: true });
  });

  it('TLS in TLS: the module over a node:tls socket', async function () {
    assert.deepStrictEqual(await tlsInTls(nodeTls, tlswrap), { authorized: true, protocol: 'TLSv1.3', same: true });
  });

  it('node:tls over a tlswrap socket: works for node:tls, a clear ERR_TLSWRAP_NOT_SUPPORTED for tlswrap', async function () {
    const r = await tlsInTls(tlswrap, nodeTls);
    if (builtin) {
      assert.deepStrictEqual(r, { authorized: true, protocol: 'TLSv1.3', same: true });
    } else {
      assert.ok(r.thrown, 'node:tls was expected to refuse a tlswrap socket');
      assert.strictEqual(r.thrown.code, 'ERR_TLSWRAP_NOT_SUPPORTED');
      assert.match(r.thrown.message, /node:tls cannot run over a tlswrap socket/);
    }
  });
});
