'use strict';

// TLS 1.3 post-handshake messages arrive between data records: KeyUpdate
// (driven by a real OpenSSL peer, `openssl s_server` / `s_client`, whose
// stdin takes a line `k` or `K` to send one) and NewSessionTicket. Data on
// both sides of them must arrive complete and in order, and a 'session'
// event must sit between the data written before and after its ticket.

const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { X509Certificate } = require('node:crypto');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { builtin, tlswrap, serverOptions, clientOptions, listen, assertSameText, release } = require('./common');
const { startFinishingServer } = require('./tls13-forged');

const fixturesDir = path.join(__dirname, 'fixtures');
const TLS13 = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' };
const TIMEOUT = 5000;

// An `openssl` child process with -msg on, so that each handshake message it
// sends (>>>) or receives (<<<) is printed as it happens: that is how the
// test knows a KeyUpdate went out before it types the next line.
class OpenSSL {
  constructor(args) {
    this.out = '';
    this.proc = spawn('openssl', [...args, '-msg'], { cwd: fixturesDir, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.setEncoding('latin1');
    this.proc.stdout.on('data', (text) => { this.out += text; });
    this.proc.stderr.resume();
    this.exited = once(this.proc, 'exit');
  }

  // Resolves with the match once stdout matches `re`.
  waitFor(re) {
    return until(() => re.exec(this.out), `openssl output to match ${re}`);
  }

  line(text) {
    this.proc.stdin.write(`${text}\n`);
  }

  async stop() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill();
    await this.exited;
  }
}

// Polls `get` until it returns something truthy (bounded, then rejects).
function until(get, what) {
  const deadline = Date.now() + TIMEOUT;
  return new Promise((resolve, reject) => {
    const check = () => {
      const value = get();
      if (value) resolve(value);
      else if (Date.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(check, 5);
    };
    check();
  });
}

function textOf(socket) {
  const state = { text: '' };
  socket.setEncoding('latin1');
  socket.on('data', (chunk) => { state.text += chunk; });
  return state;
}

// A KeyUpdate record from openssl's msg output, by direction.
const SENT_KEY_UPDATE = /^>>> .*KeyUpdate/m;
const RECEIVED_KEY_UPDATE = /^<<< .*KeyUpdate/m;

describe('TLS 1.3 KeyUpdate against openssl', function () {
  let ossl;
  let server;
  const sockets = [];

  afterEach(async function () {
    await release(sockets, ossl, server);
    ossl = null;
    server = null;
  });

  // The payloads are long enough to take more than one record each.
  const before = `before-${'b'.repeat(20000)}`;
  const after = `after-${'a'.repeat(20000)}`;

  for (const [letter, requested] of [['k', false], ['K', true]]) {
    // openssl sends `before`, a KeyUpdate (`letter`), `after`: all of it must
    // arrive in order. Then our write must still reach openssl under the new
    // keys and, if it asked for it (K), behind our own KeyUpdate.
    async function exchange(ossl, socket, got, marker) {
      ossl.line(before);
      await until(() => got.text.length >= before.length + 1, 'the data before the KeyUpdate');
      ossl.line(letter);
      await ossl.waitFor(SENT_KEY_UPDATE);
      ossl.line(after);
      await until(() => got.text.length >= before.length + after.length + 2, 'the data after the KeyUpdate');
      assertSameText(got.text, `${before}\n${after}\n`, 'received');

      socket.write(`${marker}\n`);
      await ossl.waitFor(new RegExp(`^${marker}$`, 'm'));
      const answer = RECEIVED_KEY_UPDATE.exec(ossl.out);
      if (requested) {
        assert.ok(answer, 'tlswrap did not answer the requested KeyUpdate');
        assert.ok(answer.index < ossl.out.indexOf(marker), 'KeyUpdate answer came after the data');
      } else {
        assert.strictEqual(answer, null, 'tlswrap sent a KeyUpdate that was not requested');
      }
    }

    it(`tlswrap client, s_server sends KeyUpdate (${letter}): data before and after in order`, async function () {
      ossl = new OpenSSL(['s_server', '-accept', '127.0.0.1:0', '-naccept', '1', '-tls1_3',
        '-key', 'server-key.pem', '-cert', 'server-cert.pem']);
      const [, port] = await ossl.waitFor(/ACCEPT 127\.0\.0\.1:(\d+)/);
      const client = tlswrap.connect(clientOptions(Number(port), TLS13));
      sockets.push(client);
      const got = textOf(client);
      await once(client, 'secureConnect');

      await exchange(ossl, client, got, 'from-client');
      const closed = once(client, 'close');
      client.end();
      await closed;
      const [code] = await ossl.exited;
      assert.strictEqual(code, 0);
    });

    it(`tlswrap server, s_client sends KeyUpdate (${letter}): data before and after in order`, async function () {
      server = tlswrap.createServer(serverOptions(TLS13));
      const secured = once(server, 'secureConnection');
      const port = await listen(server);
      ossl = new OpenSSL(['s_client', '-connect', `127.0.0.1:${port}`, '-tls1_3',
        '-CAfile', 'ca-cert.pem', '-servername', 'localhost']);
      const [peer] = await secured;
      sockets.push(peer);
      const got = textOf(peer);

      await exchange(ossl, peer, got, 'from-server');
      // EOF on stdin makes s_client send close_notify and exit.
      const ended = once(peer, 'end');
      ossl.proc.stdin.end();
      await ended;
      const [code] = await ossl.exited;
      assert.strictEqual(code, 0);
    });
  }
});

describe('TLS 1.3 NewSessionTicket and sessions', function () {
  let server;
  const sockets = [];

  afterEach(async function () {
    await release(sockets, null, server);
    server = null;
  });

  // A TLS 1.3 client that records its data chunks and '<session>' events in
  // order, answering 'go' to each chunk `goWhen` picks; resolves at 'end'.
  async function recordClient(port, goWhen) {
    const client = tlswrap.connect(clientOptions(port, TLS13));
    sockets.push(client);
    const events = [];
    client.setEncoding('latin1');
    client.on('data', (chunk) => {
      events.push(chunk);
      if (goWhen(chunk)) client.write('go');
    });
    client.on('session', () => events.push('<session>'));
    await once(client, 'end');
    return events;
  }

  it('a session event sits between the data written before and after its ticket', async function () {
    // Test-only hook of the engine: serverSocket._handle.newSessionTicket()
    // sends one NewSessionTicket. node:tls has no way to do that on demand.
    if (builtin) this.skip();
    const A = 'A'.repeat(20000);
    const B = 'B'.repeat(20000);
    server = tlswrap.createServer(serverOptions(TLS13));
    server.on('secureConnection', (socket) => {
      sockets.push(socket);
      // OpenSSL sends a TLS 1.3 server's automatic tickets right after its
      // first application data, so: 'x' (the tickets follow it), then wait
      // for the client's 'go', which comes after all of that.
      socket.write('x');
      socket.once('data', () => {
        // Written back to back, so the ticket travels in the same burst as
        // the data around it and the client has to split that burst
        // correctly. (The hook is expected to queue the ticket behind data
        // already passed to write(), as a later write would be.)
        socket.write(A);
        socket._handle.newSessionTicket();
        socket.end(B);
      });
    });
    const events = await recordClient(await listen(server), (chunk) => chunk === 'x');

    // From the first byte of A on: A, exactly one session, B.
    const start = events.findIndex((e) => e !== '<session>' && e !== 'x');
    const later = events.slice(start);
    const sessions = later.filter((e) => e === '<session>').length;
    assert.strictEqual(sessions, 1, `expected one session event among the data, got ${sessions}`);
    const at = later.indexOf('<session>');
    assertSameText(later.slice(0, at).join(''), A, 'data before the session event (should be what was written before the ticket)');
    assertSameText(later.slice(at + 1).join(''), B, 'data after the session event (should be what was written after the ticket)');
  });

  it('a ticket asked for in a handler goes before data written after it there', async function () {
    // The ticket's hook is tlswrap's alone (see above).
    if (builtin) this.skip();
    const A = 'A'.repeat(2000);
    const B = 'B'.repeat(2000);
    server = tlswrap.createServer(serverOptions(TLS13));
    server.on('secureConnection', (socket) => {
      sockets.push(socket);
      socket.write('x');
      socket.once('data', () => {
        // A is complete (nothing else is in flight) when the ticket is asked
        // for, so B reaches the engine at once while the ticket still waits
        // for this handler to return.
        socket.write(A, () => {
          socket.once('data', () => {
            socket._handle.newSessionTicket();
            socket.end(B);
          });
          socket.write('y');
        });
      });
    });
    const events = await recordClient(await listen(server), (chunk) => chunk === 'x' || chunk.endsWith('y'));

    const start = events.findIndex((e) => e.endsWith('y'));
    const later = events.slice(start + 1);
    assert.deepStrictEqual(later.slice(0, 1), ['<session>'], `after A: ${later.map((e) => e.slice(0, 8))}`);
    assertSameText(later.slice(1).join(''), B, 'data after the session event');
  });

  // A TLS 1.3 ticket is not a handshake in node:tls's sense: no second
  // 'secure'/'secureConnect', and disableRenegotiation() does not fire.
  it("tickets after the handshake: one 'secure' and 'secureConnect' per side, no renegotiation error", async function () {
    server = tlswrap.createServer(serverOptions(TLS13));
    const serverSeen = [];
    server.on('secureConnection', (socket) => {
      sockets.push(socket);
      socket.on('secure', () => serverSeen.push('secure'));
      socket.on('error', (err) => serverSeen.push(err.code));
      socket.write('x');
      socket.once('data', () => {
        // tlswrap's test hook: one more ticket, on demand.
        if (!builtin) socket._handle.newSessionTicket();
        socket.end('bye');
      });
    });
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port, TLS13));
    sockets.push(client);
    client.disableRenegotiation();
    const seen = [];
    for (const name of ['secure', 'secureConnect', 'session', 'end']) client.on(name, () => seen.push(name));
    client.on('error', (err) => seen.push(err.code));
    client.setEncoding('latin1');
    let text = '';
    client.on('data', (chunk) => {
      if (text === '') client.write('go');
      text += chunk;
    });
    await once(client, 'close');
    assert.strictEqual(text, 'xbye');
    const sessions = seen.filter((e) => e === 'session').length;
    assert.ok(sessions >= 2, `${sessions} session events: the tickets did not arrive`);
    // ('secureConnect' is emitted from connect()'s own 'secure' listener.)
    assert.deepStrictEqual(seen.filter((e) => e !== 'session'), ['secureConnect', 'secure', 'end']);
    assert.deepStrictEqual(serverSeen, []);
  });

  for (const version of ['TLSv1.3', 'TLSv1.2']) {
    it(`a session from the 'session' event resumes a second connection (${version})`, async function () {
      const only = { minVersion: version, maxVersion: version };
      server = tlswrap.createServer(serverOptions(only));
      server.on('secureConnection', (socket) => {
        sockets.push(socket);
        socket.end('hi');
      });
      const port = await listen(server);

      const first = tlswrap.connect(clientOptions(port, only));
      sockets.push(first);
      const firstClosed = once(first, 'close');
      const sessions = [];
      first.on('session', (session) => sessions.push(session));
      first.resume();
      await once(first, 'secureConnect');
      assert.strictEqual(first.isSessionReused(), false);
      // In TLS 1.3 the tickets come after the handshake; wait for one.
      await until(() => sessions.length > 0, "a 'session' event");
      await firstClosed;
      assert.ok(sessions.every((s) => Buffer.isBuffer(s) && s.length > 0));

      const second = tlswrap.connect(clientOptions(port, { ...only, session: sessions[sessions.length - 1] }));
      sockets.push(second);
      const secondClosed = once(second, 'close');
      second.resume();
      await once(second, 'secureConnect');
      assert.strictEqual(second.isSessionReused(), true);
      await secondClosed;
    });
  }
});

// A server may send application data with its Finished, before the client's
// Finished arrives (0.5-RTT), and tickets between data records; OpenSSL's
// server does neither, so a scripted one (tls13-forged.js) sends all of it
// in the write that carries its Finished: the client reads the handshake's
// end, data, tickets and close_notify from one burst.
describe("TLS 1.3 data and tickets in the server's first flight (0.5-RTT)", function () {
  let server;
  const sockets = [];
  const leaf = new X509Certificate(fs.readFileSync(path.join(fixturesDir, 'server-cert.pem'))).raw;
  const leafKey = fs.readFileSync(path.join(fixturesDir, 'server-key.pem'));

  afterEach(async function () {
    await release(sockets, null, server);
    server = null;
  });

  it("secureConnect first, then data and 'session' in the order sent, then 'end'; nothing lost", async function () {
    const big = 'B'.repeat(40000);
    server = await startFinishingServer(leaf, leafKey, (r) => [
      r.data('one|'), r.ticket(7200), r.data(big), r.ticket(0), r.ticket(604800), r.data('|three'),
      r.alert(1, 0), // close_notify
    ]);
    const client = tlswrap.connect(clientOptions(server.address().port, TLS13));
    sockets.push(client);
    const events = [];
    client.setEncoding('latin1');
    client.on('secureConnect', () => events.push(`<secureConnect ${client.authorized}>`));
    client.on('data', (chunk) => {
      // Data chunks between two events are one run, however they are cut.
      if (events.length > 0 && !events[events.length - 1].startsWith('<')) events[events.length - 1] += chunk;
      else events.push(chunk);
    });
    client.on('session', (session) => events.push(`<session ${Buffer.isBuffer(session)}>`));
    await once(client, 'end');
    assert.deepStrictEqual(events, [
      '<secureConnect true>', 'one|', '<session true>', big, '<session true>', '<session true>', '|three',
    ]);
  });
});

describe('TLS 1.3 KeyUpdate flood from a peer that never reads', function () {
  // Each KeyUpdate(update_requested) makes OpenSSL queue a KeyUpdate of its
  // own. A peer that sends them without ever reading must not make the
  // engine buffer replies without bound: while the transport is over its
  // high-water mark the engine has to stop reading. Observed on a Duplex
  // transport whose writes never complete: its writableLength is what the
  // engine handed over. tlswrap only: node:tls keeps the replies in its own
  // buffer instead (unbounded too; it passes this only because that buffer is
  // not the Duplex's), so the test is skipped against it.
  const crypto = require('node:crypto');
  const { Duplex } = require('node:stream');
  const { fixtures } = require('./common');

  const KEY_UPDATES = 24000; // about 650 KB of records, as many bytes of replies
  const FEED = 16 * 1024; // bytes per transport 'data' event
  const BOUND = 128 * 1024;

  // RFC 8446 7.1 HKDF-Expand-Label over SHA-256, for outputs of <= 32 bytes.
  function expandLabel(secret, label, length) {
    const name = Buffer.from(`tls13 ${label}`);
    const info = Buffer.concat([Buffer.from([0, length, name.length]), name, Buffer.from([0, 1])]);
    return crypto.createHmac('sha256', secret).update(info).digest().subarray(0, length);
  }

  // The records of `count` KeyUpdate(update_requested) messages, each under
  // the next generation of TLS_AES_128_GCM_SHA256 traffic keys from `secret`
  // (the peer's application traffic secret, sequence number 0 under each).
  function keyUpdateRecords(secret, count) {
    const records = [];
    const inner = Buffer.from([24, 0, 0, 1, 1, 22]); // KeyUpdate(requested), type handshake
    const header = Buffer.from([23, 3, 3, 0, inner.length + 16]);
    for (let i = 0; i < count; i++) {
      const cipher = crypto.createCipheriv('aes-128-gcm', expandLabel(secret, 'key', 16), expandLabel(secret, 'iv', 12));
      cipher.setAAD(header);
      records.push(header, cipher.update(inner), cipher.final(), cipher.getAuthTag());
      secret = expandLabel(secret, 'traffic upd', 32);
    }
    return Buffer.concat(records);
  }

  it('replies queued on the transport stay bounded (tlswrap server, node:tls client)', async function () {
    if (builtin) this.skip();
    this.timeout(30000);
    const tls = require('node:tls');
    // Two Duplexes crossed: until `cut`, what one writes the other reads.
    // Once cut, the server's writes never complete (the peer reads nothing).
    let cut = false;
    const toServer = new Duplex({ read() {}, write(chunk, enc, cb) { if (!cut) fromClient.push(chunk); cb(); } });
    const fromClient = new Duplex({
      writableHighWaterMark: 16 * 1024,
      read() {},
      write(chunk, enc, cb) {
        if (cut) return; // never completes
        toServer.push(chunk);
        cb();
      },
    });
    const server = new tlswrap.TLSSocket(fromClient, {
      isServer: true, secureContext: tlswrap.createSecureContext(serverOptions(TLS13)),
    });
    const errors = [];
    server.on('error', (err) => errors.push(err));
    server.resume();
    const client = tls.connect({
      socket: toServer, servername: 'localhost', ca: fixtures.ca, ...TLS13, ciphers: 'TLS_AES_128_GCM_SHA256',
    });
    let secret = null;
    client.on('keylog', (line) => {
      const m = /^CLIENT_TRAFFIC_SECRET_0 \S+ ([0-9a-f]+)/.exec(line.toString('latin1'));
      if (m) secret = Buffer.from(m[1], 'hex');
    });
    try {
      await once(client, 'secureConnect');
      // The client's Finished and the server's tickets cross; after that the
      // client has sent nothing under its application keys.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(secret, 'no CLIENT_TRAFFIC_SECRET_0 keylog line');
      cut = true;
      const records = keyUpdateRecords(secret, KEY_UPDATES);
      let maxQueued = 0;
      for (let off = 0; off < records.length && !server.destroyed; off += FEED) {
        fromClient.push(records.subarray(off, off + FEED));
        await new Promise((resolve) => setImmediate(resolve));
        maxQueued = Math.max(maxQueued, fromClient.writableLength);
      }
      assert.ok(maxQueued > 0, `no KeyUpdate was answered (errors: ${errors.map((e) => e.message)})`);
      assert.ok(maxQueued <= BOUND,
                `${maxQueued} bytes of replies queued on a transport that takes nothing ` +
                `(${records.length} bytes of KeyUpdates sent; bound ${BOUND})`);
    } finally {
      client.destroy();
      server.destroy();
    }
  });
});
