'use strict';

// Key share prediction: with a session cache, a TLS 1.3 client remembers the
// group each server chose and next time sends a key share for it alone, while
// supported_groups stays as configured. The ClientHellos are read off the wire
// through a TCP relay. node:tls has nothing of the kind, so this file is
// tlswrap's alone (under TLSWRAP_TEST_BUILTIN it is skipped).

const assert = require('node:assert');
const net = require('node:net');
const { once } = require('node:events');
const { builtin, fixtures, tlswrap, serverOptions, clientOptions, listen, closeServer, RecordType } = require('./common');

const X25519 = 0x001d;
const P256 = 0x0017;
const X25519MLKEM768 = 0x11ec;
// OpenSSL 3.5 marks key shares in its group lists, and by default sends two.
const [major, minor] = process.versions.openssl.split('.').map(Number);
const hasHybrid = major > 3 || (major === 3 && minor >= 5);

// The groups of a ClientHello's key_share and supported_groups extensions.
function readClientHello(record) {
  const message = record.subarray(5);
  assert.strictEqual(message[0], 1, 'a ClientHello');
  let at = 4 + 2 + 32;
  at += 1 + message[at];
  at += 2 + message.readUInt16BE(at);
  at += 1 + message[at];
  const end = at + 2 + message.readUInt16BE(at);
  const hello = { shares: [], groups: [] };
  for (at += 2; at < end;) {
    const type = message.readUInt16BE(at);
    const data = message.subarray(at + 4, at + 4 + message.readUInt16BE(at + 2));
    if (type === 51) {
      for (let k = 2; k < data.length; k += 4 + data.readUInt16BE(k + 2)) hello.shares.push(data.readUInt16BE(k));
    } else if (type === 10) {
      for (let k = 2; k < data.length; k += 2) hello.groups.push(data.readUInt16BE(k));
    }
    at += 4 + data.length;
  }
  return hello;
}

// A relay in front of whichever server `target.port` names when a connection
// comes; each connection's ClientHellos (two after a HelloRetryRequest) are
// pushed onto `hellos` as one array.
async function startRelay(target) {
  const hellos = [];
  const server = net.createServer((client) => {
    const seen = [];
    hellos.push(seen);
    const upstream = net.connect(target.port, '127.0.0.1');
    let pending = Buffer.alloc(0);
    let plaintext = true;
    client.on('data', (chunk) => {
      upstream.write(chunk);
      if (!plaintext) return;
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
        const record = pending.subarray(0, 5 + pending.readUInt16BE(3));
        pending = pending.subarray(record.length);
        if (record[0] === RecordType.handshake) seen.push(readClientHello(record));
        else if (record[0] === RecordType.applicationData) plaintext = false;
      }
    });
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('end', () => upstream.end());
  });
  const port = await listen(server);
  return { port, hellos, close: () => closeServer(server) };
}

async function startServer(ecdhCurve) {
  const server = tlswrap.createServer(serverOptions({ ecdhCurve }), (socket) => {
    socket.on('error', () => {});
    socket.end('k');
  });
  return { server, port: await listen(server) };
}

// One connection; resolves once the server's byte (sent after its tickets)
// has come and the connection has closed.
async function connectOnce(port, extra) {
  const client = tlswrap.connect(clientOptions(port, { minVersion: 'TLSv1.3', ...extra }));
  client.on('error', () => {});
  await once(client, 'secureConnect');
  const result = { reused: client.isSessionReused(), authorized: client.authorized };
  await once(client, 'data');
  client.end();
  if (!client.closed) await once(client, 'close');
  return result;
}

(builtin ? describe.skip : describe)('key share prediction (TLS 1.3, with a session cache)', function () {
  this.timeout(20000);
  const servers = [];
  let relay;
  afterEach(async function () {
    if (relay) await relay.close();
    relay = undefined;
    while (servers.length) await closeServer(servers.pop().server);
  });

  async function relayTo(ecdhCurve) {
    const server = await startServer(ecdhCurve);
    servers.push(server);
    const target = { port: server.port };
    relay = await startRelay(target);
    return { target, server };
  }

  it('a server that took the second group gets a key share for it at once the next time, no HelloRetryRequest',
    async function () {
      await relayTo('P-256');
      const sessionCache = new tlswrap.SessionCache();
      const options = { sessionCache, ecdhCurve: 'X25519:P-256' };
      await connectOnce(relay.port, options);
      const [first] = relay.hellos;
      assert.deepStrictEqual(first.map((h) => h.shares), [[X25519], [P256]], 'a HelloRetryRequest for P-256');
      const second = await connectOnce(relay.port, options);
      assert.strictEqual(second.reused, true);
      const [hello, ...more] = relay.hellos[1];
      assert.strictEqual(more.length, 0, 'one ClientHello');
      assert.deepStrictEqual(hello.shares, [P256]);
      // Every configured group is still offered (from OpenSSL 3.5 in the
      // configured order; before, the predicted one is moved first).
      assert.deepStrictEqual([...hello.groups].sort(), [...first[0].groups].sort());
      if (hasHybrid) assert.deepStrictEqual(hello.groups, first[0].groups);
    });

  it('a server whose groups changed is asked again: a HelloRetryRequest, the connection, a new hint', async function () {
    const { target } = await relayTo('P-256');
    const sessionCache = new tlswrap.SessionCache();
    const options = { sessionCache, ecdhCurve: 'X25519:P-256' };
    await connectOnce(relay.port, options);
    const other = await startServer('X25519');
    servers.push(other);
    target.port = other.port;
    const moved = await connectOnce(relay.port, options);
    assert.strictEqual(moved.authorized, true);
    assert.deepStrictEqual(relay.hellos[1].map((h) => h.shares), [[P256], [X25519]]);
    await connectOnce(relay.port, options);
    assert.deepStrictEqual(relay.hellos[2].map((h) => h.shares), [[X25519]]);
  });

  it('no hint without a session cache, nor from a connection that failed verification', async function () {
    await relayTo('P-256');
    const plain = { ecdhCurve: 'X25519:P-256' };
    await connectOnce(relay.port, plain);
    await connectOnce(relay.port, plain);
    // Unverified: no CA for the server's certificate, let through anyway.
    const sessionCache = new tlswrap.SessionCache();
    const unverified = { sessionCache, ecdhCurve: 'X25519:P-256', ca: fixtures.selfSignedCert, rejectUnauthorized: false };
    assert.strictEqual((await connectOnce(relay.port, unverified)).authorized, false);
    await connectOnce(relay.port, unverified);
    for (const hellos of relay.hellos) {
      assert.deepStrictEqual(hellos.map((h) => h.shares), [[X25519], [P256]]);
    }
  });

  it("tlswrap/https's Agent predicts through its session cache", async function () {
    const https = require('tlswrap/https');
    const server = https.createServer(serverOptions({ ecdhCurve: 'P-256' }), (req, res) => res.end('k'));
    const port = await listen(server);
    servers.push({ server });
    relay = await startRelay({ port });
    const agent = new https.Agent({ keepAlive: false });
    const get = () => new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: relay.port, servername: 'localhost', ca: fixtures.ca, agent,
                  ecdhCurve: 'X25519:P-256' }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.socket));
      }).on('error', reject);
    });
    await get();
    await get();
    assert.deepStrictEqual(relay.hellos.map((hellos) => hellos.map((h) => h.shares)), [[[X25519], [P256]], [[P256]]]);
    agent.destroy();
  });

  it('the hints are bounded: the least recently stored key goes first', function () {
    const { keyShareHint, rememberKeyShare, MAX_HINTS } = require('../lib/key_share_hint');
    rememberKeyShare('bound-test/first', 23);
    rememberKeyShare('bound-test/second', 29);
    rememberKeyShare('bound-test/first', 29);
    for (let i = 0; i < MAX_HINTS - 1; i++) rememberKeyShare(`bound-test/${i}`, 29);
    assert.strictEqual(keyShareHint('bound-test/second'), undefined);
    assert.strictEqual(keyShareHint('bound-test/first'), 29);
    rememberKeyShare('bound-test/zero', 0);
    assert.strictEqual(keyShareHint('bound-test/zero'), undefined);
  });

  (hasHybrid ? it : it.skip)('OpenSSL 3.5 default groups: one key share (the hybrid) instead of two, same supported_groups',
    async function () {
      await relayTo(undefined);
      const sessionCache = new tlswrap.SessionCache();
      await connectOnce(relay.port, { sessionCache });
      const [[first]] = relay.hellos;
      assert.deepStrictEqual(first.shares, [X25519MLKEM768, X25519]);
      const second = await connectOnce(relay.port, { sessionCache });
      assert.strictEqual(second.reused, true);
      const [[hello, ...more]] = relay.hellos.slice(1);
      assert.strictEqual(more.length, 0);
      assert.deepStrictEqual(hello.shares, [X25519MLKEM768]);
      // Pins the default list kept in src/engine/engine_control.cc.
      assert.deepStrictEqual(hello.groups, first.groups);
    });
});
