'use strict';

// The client session cache: connect({ sessionCache }) resumes against
// tlswrap, node:tls and `openssl s_server` peers (TLS 1.2 session IDs, TLS 1.2
// tickets, TLS 1.3 tickets); a session never crosses CA sets, server names,
// client certificates or ALPN offers; sessions from failed verification never
// enter; a declined session leaves; the LRU bound holds; each worker thread
// has its own default cache. node:tls has no such cache, so this file is
// tlswrap's alone (under TLSWRAP_TEST_BUILTIN it is skipped).

const assert = require('node:assert');
const crypto = require('node:crypto');
const net = require('node:net');
const path = require('node:path');
const tls = require('node:tls');
const { spawn, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const { Worker } = require('node:worker_threads');
const { builtin, fixtures, tlswrap, serverOptions, clientOptions, listen, closeServer } = require('./common');
const { startFinishingServer } = require('./tls13-forged');

const { SSL_OP_NO_TICKET } = crypto.constants;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const fixturePath = (name) => path.join(__dirname, 'fixtures', name);

// One connection through `cache`: whether it resumed, and how many sessions
// it stored. TLS 1.3 tickets come after the handshake, so the client waits for
// the server's one byte (sent after them) before it ends.
async function connectOnce(port, extra = {}) {
  const client = tlswrap.connect(clientOptions(port, extra));
  let sessions = 0;
  client.on('session', () => sessions++);
  const error = once(client, 'error').then(([err]) => err);
  const secure = once(client, 'secureConnect').then(() => null);
  const err = await Promise.race([secure, error]);
  if (err) {
    client.destroy();
    return { error: err };
  }
  const reused = client.isSessionReused();
  const authorized = client.authorized;
  const alpn = client.alpnProtocol;
  await once(client, 'data');
  client.end();
  if (!client.closed) await once(client, 'close');
  return { reused, authorized, alpn, sessions };
}

// A server that writes one byte to each connection once its handshake is
// done, so the tickets sent after a TLS 1.3 handshake reach the client first.
async function startServer(impl, extra) {
  const server = impl.createServer(serverOptions(extra), (socket) => {
    socket.on('error', () => {});
    socket.end('k');
  });
  const port = await listen(server);
  return { server, port };
}

// A server-side TLS 1.2 session-ID store for newSession/resumeSession.
// `takeOnce` removes a session when it is looked up (a single-use store);
// `misses` counts lookups of IDs it was once given but no longer has.
function addSessionStore(server, { takeOnce = false } = {}) {
  const store = new Map();
  const given = new Set();
  const stats = { misses: 0 };
  server.on('newSession', (id, data, cb) => {
    store.set(id.toString('hex'), data);
    given.add(id.toString('hex'));
    cb();
  });
  server.on('resumeSession', (id, cb) => {
    const hex = id.toString('hex');
    const data = store.get(hex);
    if (!data && given.has(hex)) stats.misses++;
    if (takeOnce) store.delete(hex);
    cb(null, data || null);
  });
  return stats;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// `openssl s_server` for `accepts` connections (plus the readiness probe).
// With -www each connection asks for a page and reads it to the end, so TLS
// 1.3 tickets have arrived; without it (-early_data refuses -www) the client
// sends close_notify and waits for s_server's, which comes after the tickets.
async function startSServer(args, accepts) {
  const port = await freePort();
  const proc = spawn('openssl', ['s_server', '-accept', `127.0.0.1:${port}`, '-naccept', String(accepts + 1),
    '-cert', fixturePath('server-cert.pem'), '-key', fixturePath('server-key.pem'), ...args],
  // stdin stays open: at its EOF s_server would end the connection.
  { stdio: ['pipe', 'ignore', 'pipe'] });
  proc.stdin.on('error', () => {});
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = once(proc, 'exit').then(() => false);
  const deadline = Date.now() + 5000;
  let ready = false;
  while (!ready && Date.now() < deadline && proc.exitCode === null) {
    ready = await Promise.race([exited, new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('connect', () => { s.destroy(); resolve(true); });
      s.on('error', () => setTimeout(() => resolve(false), 25));
    })]);
  }
  if (!ready) {
    proc.kill();
    throw new Error(`openssl s_server did not start: ${stderr}`);
  }
  return {
    port,
    www: args.includes('-www'),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill();
        await exited;
      }
    },
  };
}

async function connectOnceSServer(peer, extra) {
  const client = tlswrap.connect(clientOptions(peer.port, extra));
  await once(client, 'secureConnect');
  const reused = client.isSessionReused();
  if (peer.www) client.write('GET / HTTP/1.0\r\n\r\n');
  else client.end();
  client.resume();
  if (!client.closed) await once(client, 'close');
  return { reused };
}

(builtin ? describe.skip : describe)('client session cache', function () {
  const servers = [];
  async function start(impl, extra) {
    const s = await startServer(impl, extra);
    servers.push(s.server);
    return s;
  }
  afterEach(async function () {
    await Promise.all(servers.splice(0).map(closeServer));
  });

  describe('SessionCache', function () {
    it('options are checked', function () {
      assert.throws(() => new tlswrap.SessionCache({ max: 0 }), { code: 'ERR_OUT_OF_RANGE' });
      assert.throws(() => new tlswrap.SessionCache({ max: '5' }), { code: 'ERR_INVALID_ARG_TYPE' });
      assert.throws(() => tlswrap.connect({ port: 1, sessionCache: {} }), { code: 'ERR_INVALID_ARG_TYPE' });
    });

    it('holds at most `max` keys, dropping the least recently used', function () {
      const cache = new tlswrap.SessionCache({ max: 2 });
      const a = Buffer.from('a');
      cache.set('a', a);
      cache.set('b', Buffer.from('b'));
      assert.strictEqual(cache.get('a'), a); // 'a' is now the most recent
      cache.set('c', Buffer.from('c'));
      assert.strictEqual(cache.size, 2);
      assert.strictEqual(cache.get('b'), undefined);
      assert.strictEqual(cache.get('a'), a);
      assert.ok(cache.get('c'));
    });
  });

  const kinds = [
    ['TLS 1.2 session IDs', { maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET }, true],
    ['TLS 1.2 tickets', { maxVersion: 'TLSv1.2' }, false],
    ['TLS 1.3 tickets', { minVersion: 'TLSv1.3' }, false],
  ];
  for (const [implName, impl] of [['tlswrap', tlswrap], ['node:tls', tls]]) {
    for (const [kind, options, ids] of kinds) {
      it(`resumes against a ${implName} server: ${kind}`, async function () {
        const { server, port } = await start(impl, options);
        if (ids) addSessionStore(server);
        const sessionCache = new tlswrap.SessionCache();
        const first = await connectOnce(port, { sessionCache });
        assert.strictEqual(first.reused, false);
        assert.ok(first.sessions > 0);
        for (let i = 0; i < 3; i++) {
          const again = await connectOnce(port, { sessionCache });
          assert.strictEqual(again.reused, true, `connection ${i + 2} resumed`);
          assert.strictEqual(again.authorized, true);
        }
        // Without the option nothing is cached or offered.
        assert.strictEqual((await connectOnce(port)).reused, false);
      });
    }
  }

  describe('against openssl s_server', function () {
    before(function () {
      if (!hasOpenssl) this.skip();
    });
    for (const [kind, args] of [
      ['TLS 1.2 session IDs', ['-www', '-tls1_2', '-no_ticket']],
      ['TLS 1.2 tickets', ['-www', '-tls1_2']],
      ['TLS 1.3 tickets', ['-www', '-tls1_3']],
    ]) {
      it(`resumes: ${kind}`, async function () {
        const peer = await startSServer(args, 4);
        try {
          const sessionCache = new tlswrap.SessionCache();
          assert.strictEqual((await connectOnceSServer(peer, { sessionCache })).reused, false);
          for (let i = 0; i < 3; i++) {
            assert.strictEqual((await connectOnceSServer(peer, { sessionCache })).reused, true,
                               `connection ${i + 2} resumed`);
          }
        } finally {
          await peer.stop();
        }
      });
    }
  });

  // The cache keeps only the two tickets of the first handshake here (later
  // ones are not stored), so tickets run out and get offered a second time.
  for (const [what, args, expected] of [
    ['single-use tickets (stateful with anti-replay, s_server -no_ticket -early_data): a spent ticket is tried once, declined, and then ' +
     'no spent ticket is offered', ['-tls1_3', '-no_ticket', '-early_data'], [false, true, true, false, false]],
    ['reusable tickets (stateless): unused tickets first, then reused', ['-www', '-tls1_3'], [false, true, true, true, true]],
  ]) {
    it(`TLS 1.3 ${what}`, async function () {
      if (!hasOpenssl) this.skip();
      const peer = await startSServer(args, 5);
      try {
        const offered = [];
        const sessionCache = new tlswrap.SessionCache();
        const get = sessionCache.get.bind(sessionCache);
        const set = sessionCache.set.bind(sessionCache);
        let frozen = false;
        sessionCache.get = (key) => {
          const session = get(key);
          offered.push(session ? session.toString('hex') : null);
          return session;
        };
        sessionCache.set = (key, session) => (frozen ? undefined : set(key, session));
        const reused = [];
        for (let i = 0; i < 5; i++) {
          reused.push((await connectOnceSServer(peer, { sessionCache })).reused);
          frozen = true;
        }
        assert.deepStrictEqual(reused, expected);
        assert.notStrictEqual(offered[1], offered[2], 'the two tickets are each offered first');
        if (expected[3] === false) assert.strictEqual(offered[4], null, 'a spent ticket was offered again');
        else assert.strictEqual(offered[3], offered[1]);
      } finally {
        await peer.stop();
      }
    });
  }

  // RFC 8446 4.6.1: a ticket_lifetime of 0 means the ticket is to be
  // discarded at once. A scripted server sends tickets of chosen lifetimes.
  it('TLS 1.3 tickets of lifetime 0 are not stored, in a SessionCache or a store of ones own', async function () {
    const leaf = new crypto.X509Certificate(fixtures.serverCert).raw;
    for (const [lifetimes, kept] of [[[0], 0], [[7200, 0, 3600], 2]]) {
      const server = await startFinishingServer(leaf, fixtures.serverKey, (r) => [
        ...lifetimes.map((lifetime) => r.ticket(lifetime)), r.data('k'), r.alert(1, 0),
      ]);
      servers.push(server);
      const { port } = server.address();
      const sessionCache = new tlswrap.SessionCache();
      const first = await connectOnce(port, { sessionCache, minVersion: 'TLSv1.3' });
      assert.deepStrictEqual([first.authorized, first.sessions], [true, lifetimes.length]);
      assert.strictEqual(sessionCache.size, kept > 0 ? 1 : 0);
      const stored = [];
      const store = { get: () => undefined, set: (key, session) => stored.push(session), delete: () => {} };
      await connectOnce(port, { sessionCache: store, minVersion: 'TLSv1.3' });
      assert.strictEqual(stored.length, kept);
      for (const session of stored) {
        sessionCache.clear();
        sessionCache.set('k', session);
        assert.strictEqual(sessionCache.size, 1);
      }
    }
  });

  it('TLS 1.3 reusable tickets: unused tickets first, then reused', async function () {
    const { server, port } = await start(tlswrap, { minVersion: 'TLSv1.3' });
    const sessionCache = new tlswrap.SessionCache();
    const reused = [];
    for (let i = 0; i < 5; i++) reused.push((await connectOnce(port, { sessionCache })).reused);
    assert.deepStrictEqual(reused, [false, true, true, true, true]);
  });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    describe(`a session never crosses keys, ${version}`, function () {
      const same = () => undefined;
      const cases = [
        ['CA sets', { ca: [fixtures.ca] }, { ca: [fixtures.ca, fixtures.selfSignedCert] }],
        ['server names', { servername: 'a.example', checkServerIdentity: same },
          { servername: 'b.example', checkServerIdentity: same }],
        ['client certificates', {}, { cert: fixtures.clientCert, key: fixtures.clientKey }],
        ['ALPN offers', { ALPNProtocols: ['h2'] }, { ALPNProtocols: ['http/1.1'] }],
        ['rejectUnauthorized', {}, { rejectUnauthorized: false }],
        ['checkServerIdentity functions', { checkServerIdentity: same }, { checkServerIdentity: () => undefined }],
        ['secureContexts', { secureContext: tlswrap.createSecureContext({ ca: fixtures.ca }) },
          { secureContext: tlswrap.createSecureContext({ ca: fixtures.ca }) }],
        ['ports', {}, 'other port'],
        // OpenSSL refuses a session from another id context outright
        // (ERR_SSL_ATTEMPT_TO_REUSE_SESSION_IN_DIFFERENT_CONTEXT).
        ['session id contexts', {}, { sessionIdContext: 'other' }],
        ['ECDH curves', {}, { ecdhCurve: 'P-256' }],
        ['local addresses', { localAddress: '127.0.0.1' }, {}],
      ];
      for (const [what, a, b] of cases) {
        it(`different ${what}: full handshake; the first settings still resume`, async function () {
          const opts = { minVersion: version, maxVersion: version, ALPNProtocols: ['h2', 'http/1.1'] };
          const { port } = await start(tlswrap, opts);
          let portB = port;
          let optionsB = b;
          if (b === 'other port') {
            // A second server with the same ticket keys: only the key keeps
            // the session from it.
            const other = await start(tlswrap, opts);
            other.server.setTicketKeys(servers[0].getTicketKeys());
            portB = other.port;
            optionsB = {};
          }
          const sessionCache = new tlswrap.SessionCache();
          assert.strictEqual((await connectOnce(port, { sessionCache, ...a })).reused, false);
          const other = await connectOnce(portB, { sessionCache, ...optionsB });
          assert.ifError(other.error);
          assert.strictEqual(other.reused, false);
          assert.strictEqual((await connectOnce(port, { sessionCache, ...a })).reused, true);
        });
      }
    });
  }

  // A socket of the program's own is keyed by its peer: before it is
  // connected there is no peer to name, and nothing is cached.
  it('connect({ socket }): keyed by the connected peer; a socket still connecting caches nothing', async function () {
    const a = await start(tlswrap, {});
    const b = await start(tlswrap, {});
    b.server.setTicketKeys(a.server.getTicketKeys());
    const sessionCache = new tlswrap.SessionCache();
    const connected = async (port) => {
      const socket = net.connect(port, '127.0.0.1');
      await once(socket, 'connect');
      return connectOnce(port, { sessionCache, socket, host: undefined, port: undefined });
    };
    assert.strictEqual((await connected(a.port)).reused, false);
    assert.strictEqual(sessionCache.size, 1);
    const other = await connected(b.port);
    assert.ifError(other.error);
    assert.strictEqual(other.reused, false, 'a session of another port was offered');
    assert.strictEqual((await connected(a.port)).reused, true);

    const empty = new tlswrap.SessionCache();
    const connecting = net.connect(a.port, '127.0.0.1');
    const r = await connectOnce(a.port, { sessionCache: empty, socket: connecting, host: undefined, port: undefined });
    assert.ifError(r.error);
    assert.strictEqual(empty.size, 0);
  });

  // The key remembers the digest of a large Buffer with a copy of its bytes:
  // the same object rewritten in place is other settings.
  it('a CA Buffer rewritten in place is another key; its first bytes still resume', async function () {
    const { port } = await start(tlswrap, {});
    const second = fixtures.selfSignedCert.toString();
    const ca = Buffer.from(`${fixtures.ca}\n${second}`);
    assert.ok(ca.length > 1024, 'large enough for the remembered-digest path');
    const original = Buffer.from(ca);
    const sessionCache = new tlswrap.SessionCache();
    assert.strictEqual((await connectOnce(port, { sessionCache, ca })).reused, false);
    assert.strictEqual((await connectOnce(port, { sessionCache, ca })).reused, true);
    ca.fill(' ', ca.length - second.length); // the second certificate gone, same object
    const other = await connectOnce(port, { sessionCache, ca });
    assert.ifError(other.error);
    assert.strictEqual(other.reused, false);
    original.copy(ca);
    assert.strictEqual((await connectOnce(port, { sessionCache, ca })).reused, true);
  });

  describe('verification', function () {
    // A resumed session keeps the leaf, not the chain the server sent: a
    // custom check that pins the intermediate would refuse on resumption
    // what it accepted. It passed this key's session (the key holds the
    // function), so it is not asked again, as node:tls never asks it then.
    it('a custom checkServerIdentity that pins the intermediate: asked on the full handshake, not on resumptions', async function () {
      const { X509Certificate } = crypto;
      const fixture = (name) => require('node:fs').readFileSync(fixturePath(name));
      const intermediate = new X509Certificate(fixture('inter-ca-cert.pem')).fingerprint256;
      const server = tlswrap.createServer({
        key: fixture('inter-leaf-key.pem'),
        cert: Buffer.concat([fixture('inter-leaf-cert.pem'), fixture('inter-ca-cert.pem')]),
      }, (socket) => socket.end('k'));
      const port = await listen(server);
      try {
        let asked = 0;
        const checkServerIdentity = (host, cert) => {
          asked++;
          const err = tlswrap.checkServerIdentity(host, cert);
          if (err) return err;
          if (!cert.issuerCertificate || cert.issuerCertificate.fingerprint256 !== intermediate) {
            return new Error('intermediate pin mismatch');
          }
          return undefined;
        };
        const sessionCache = new tlswrap.SessionCache();
        const results = [];
        for (let i = 0; i < 3; i++) results.push(await connectOnce(port, { sessionCache, checkServerIdentity }));
        for (const r of results) assert.ifError(r.error);
        assert.deepStrictEqual(results.map((r) => [r.authorized, r.reused]), [[true, false], [true, true], [true, true]]);
        assert.strictEqual(asked, 1);
      } finally {
        await closeServer(server);
      }
    });

    // The key names what the check judged: over a unix socket with only
    // `host` (no SNI), two names reach one server, and a policy that admits
    // one of them must be asked about the other (a full handshake).
    it('a custom check that admits one host name is asked again for another name on the same path', async function () {
      const os = require('node:os');
      const fixture = (name) => require('node:fs').readFileSync(fixturePath(name));
      const sock = path.join(os.tmpdir(), `tlswrap-sc-${process.pid}.sock`);
      const server = tlswrap.createServer({ key: fixture('many-names-key.pem'), cert: fixture('many-names-cert.pem') },
        (socket) => socket.end('k'));
      await new Promise((resolve) => server.listen(sock, resolve));
      try {
        const asked = [];
        const checkServerIdentity = (host, cert) => {
          asked.push(host);
          if (host !== 'host-001.tlswrap.example') return new Error(`the policy refuses ${host}`);
          return tlswrap.checkServerIdentity(host, cert);
        };
        const sessionCache = new tlswrap.SessionCache();
        const options = { path: sock, port: undefined, servername: undefined, sessionCache, checkServerIdentity };
        const first = await connectOnce(undefined, { ...options, host: 'host-001.tlswrap.example' });
        assert.deepStrictEqual([first.authorized, first.reused], [true, false]);
        const second = await connectOnce(undefined, { ...options, host: 'host-002.tlswrap.example' });
        assert.ok(second.error, 'the second name was let through');
        assert.strictEqual(second.error.message, 'the policy refuses host-002.tlswrap.example');
        assert.deepStrictEqual(asked, ['host-001.tlswrap.example', 'host-002.tlswrap.example']);
      } finally {
        await closeServer(server);
      }
    });

    // node:tls's checkServerIdentity replaced by the program (a pin) after
    // sessions were cached under node's own: another key, and it is asked.
    it('node:tls.checkServerIdentity replaced after use: the replacement is asked, not skipped', async function () {
      const { port } = await start(tlswrap, {});
      const sessionCache = new tlswrap.SessionCache();
      const original = tls.checkServerIdentity;
      assert.strictEqual((await connectOnce(port, { sessionCache, checkServerIdentity: original })).authorized, true);
      let asked = 0;
      tls.checkServerIdentity = () => {
        asked++;
        return new Error('pin mismatch');
      };
      try {
        const r = await connectOnce(port, { sessionCache, checkServerIdentity: tls.checkServerIdentity });
        assert.strictEqual(r.error && r.error.message, 'pin mismatch');
        assert.strictEqual(asked, 1);
      } finally {
        tls.checkServerIdentity = original;
      }
    });

    // A replaced createSecureContext may give the same options another trust
    // store (here: the test CA, then none); a session it verified must not
    // let a connection through that its context now refuses.
    it('a replaced createSecureContext: nothing is cached, so a changed trust store is applied', async function () {
      const { port } = await start(tlswrap, {});
      const original = tlswrap.createSecureContext;
      let trustTestCA = true;
      tlswrap.createSecureContext = (options) => original({ ...options, ca: trustTestCA ? fixtures.ca : undefined });
      try {
        const sessionCache = new tlswrap.SessionCache();
        const options = { sessionCache, ca: undefined };
        const first = await connectOnce(port, options);
        assert.strictEqual(first.authorized, true);
        assert.strictEqual(sessionCache.size, 0);
        trustTestCA = false;
        const second = await connectOnce(port, options);
        assert.ok(second.error, 'connected with a session its trust store would refuse');
        assert.strictEqual(second.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      } finally {
        tlswrap.createSecureContext = original;
      }
    });

    it('a session from a connection that failed verification (rejectUnauthorized:false) is not cached',
       async function () {
         const { port } = await start(tlswrap, { maxVersion: 'TLSv1.2' });
         const sessionCache = new tlswrap.SessionCache();
         const options = { sessionCache, servername: 'wrong.example', rejectUnauthorized: false };
         const first = await connectOnce(port, options);
         assert.strictEqual(first.authorized, false);
         assert.strictEqual(first.sessions, 1);
         assert.strictEqual(sessionCache.size, 0);
         assert.strictEqual((await connectOnce(port, options)).reused, false);
       });

    it('a connection rejected by checkServerIdentity caches nothing', async function () {
      const { port } = await start(tlswrap, {});
      const sessionCache = new tlswrap.SessionCache();
      const checkServerIdentity = () => new Error('no');
      const first = await connectOnce(port, { sessionCache, checkServerIdentity });
      assert.strictEqual(first.error.message, 'no');
      assert.strictEqual(sessionCache.size, 0);
    });

    // The chain result a resumed connection reports is the one stored in the
    // session: one verified with a partial chain must not make a strict
    // connection authorized.
    it('a session verified with allowPartialTrustChain is not offered to a strict connection', async function () {
      const { fixture } = require('./common');
      const interCa = fixture('inter-ca-cert.pem');
      const { port } = await start(tlswrap, {
        key: fixture('inter-leaf-key.pem'), cert: Buffer.concat([fixture('inter-leaf-cert.pem'), interCa]),
      });
      const sessionCache = new tlswrap.SessionCache();
      const partial = await connectOnce(port, { sessionCache, ca: interCa, allowPartialTrustChain: true });
      assert.strictEqual(partial.authorized, true);
      assert.strictEqual(sessionCache.size, 1);
      const strict = await connectOnce(port, { sessionCache, ca: interCa });
      assert.ok(strict.error, `a strict connection went through (resumed: ${strict.reused})`);
      assert.strictEqual(strict.error.code, 'UNABLE_TO_GET_ISSUER_CERT');
    });

    // A session passed by hand resumes with the verification it was made
    // with (node:tls does the same); the ticket that connection receives
    // (s_server sends one on a resumption) must not become a session of a
    // key whose CA never verified the server.
    it('a hand-passed session that resumed feeds nothing to the cache', async function () {
      if (!hasOpenssl) this.skip();
      const peer = await startSServer(['-www', '-tls1_3'], 3);
      try {
        let session;
        const first = tlswrap.connect(clientOptions(peer.port));
        first.on('session', (t) => { session = t; });
        await once(first, 'secureConnect');
        first.write('GET / HTTP/1.0\r\n\r\n');
        first.resume();
        if (!first.closed) await once(first, 'close');
        assert.ok(session, 'no session from the first connection');
        const sessionCache = new tlswrap.SessionCache();
        const untrusting = { sessionCache, ca: fixtures.selfSignedCert };
        const tickets = [];
        const handed = tlswrap.connect(clientOptions(peer.port, { ...untrusting, session }));
        handed.on('session', (t) => tickets.push(t));
        await once(handed, 'secureConnect');
        assert.strictEqual(handed.isSessionReused(), true);
        handed.write('GET / HTTP/1.0\r\n\r\n');
        handed.resume();
        if (!handed.closed) await once(handed, 'close');
        assert.ok(tickets.length >= 1, 'the resumed connection received no ticket');
        assert.strictEqual(sessionCache.size, 0);
        const next = tlswrap.connect(clientOptions(peer.port, untrusting));
        const [err] = await once(next, 'error');
        assert.strictEqual(err.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      } finally {
        await peer.stop();
      }
    });

    // A pskCallback picks the identity and key per connection: a session
    // from one identity would stand in for another's (the server never asks).
    it('connections with a pskCallback neither store nor take sessions', async function () {
      const KEY = Buffer.alloc(16, 7);
      const PSK12 = { ciphers: 'PSK-AES128-CBC-SHA256', maxVersion: 'TLSv1.2' };
      const { port } = await start(tlswrap, {
        ...PSK12, pskCallback: (socket, id) => (id === 'alice' ? KEY : null),
      });
      const sessionCache = new tlswrap.SessionCache();
      const as = (identity) => ({
        ...PSK12, sessionCache, checkServerIdentity: () => undefined, pskCallback: () => ({ psk: KEY, identity }),
      });
      const alice = await connectOnce(port, as('alice'));
      assert.ifError(alice.error);
      assert.strictEqual(sessionCache.size, 0);
      const mallory = await connectOnce(port, as('mallory'));
      assert.ok(mallory.error, 'an identity the server does not know got through');
    });

    // Node 22.19+ and 24: the default store a context without `ca` trusts
    // can change under a running program.
    it('a session verified under the default CA store is not offered once that store changed', async function () {
      if (typeof tlswrap.setDefaultCACertificates !== 'function') this.skip();
      const { fixture } = require('./common');
      const { port } = await start(tlswrap, {});
      const sessionCache = new tlswrap.SessionCache();
      const before = tlswrap.getCACertificates('default');
      try {
        tlswrap.setDefaultCACertificates([fixtures.ca.toString()]);
        const first = await connectOnce(port, { sessionCache, ca: undefined });
        assert.strictEqual(first.authorized, true);
        assert.strictEqual(sessionCache.size, 1);
        // A CA of the same name and another key: the server's chain fails.
        tlswrap.setDefaultCACertificates([fixture('twin-ca-cert.pem').toString()]);
        const after = await connectOnce(port, { sessionCache, ca: undefined });
        assert.ok(after.error, `verified against a store that no longer holds its CA (resumed: ${after.reused})`);
        assert.strictEqual(after.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      } finally {
        tlswrap.setDefaultCACertificates(before);
      }
    });

    // node's own name check runs on resumed connections too (node:tls
    // skips it): a session made for one name never authorizes another.
    it('the default name check runs on a resumed connection; a custom check that passed the session is not asked again', async function () {
      const { port } = await start(tlswrap, { maxVersion: 'TLSv1.2' });
      const sessionCache = new tlswrap.SessionCache();
      const names = [];
      const checkServerIdentity = (name, cert) => {
        names.push(name);
        return tls.checkServerIdentity(name, cert);
      };
      assert.strictEqual((await connectOnce(port, { sessionCache, checkServerIdentity })).reused, false);
      const resumed = await connectOnce(port, { sessionCache, checkServerIdentity });
      assert.ifError(resumed.error);
      assert.deepStrictEqual([resumed.reused, resumed.authorized], [true, true]);
      assert.deepStrictEqual(names, ['localhost']);
      // The same server reached under another name: another key, and a
      // full handshake that fails the name check.
      const other = await connectOnce(port, { sessionCache, servername: 'other.example' });
      assert.strictEqual(other.error.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    });
  });

  it('a declined session (ticket keys rotated) gives a full handshake, is replaced, and resumption goes on',
     async function () {
       const { server, port } = await start(tlswrap, { maxVersion: 'TLSv1.2' });
       const sessionCache = new tlswrap.SessionCache();
       await connectOnce(port, { sessionCache });
       assert.strictEqual((await connectOnce(port, { sessionCache })).reused, true);
       server.setTicketKeys(crypto.randomBytes(48));
       const declined = await connectOnce(port, { sessionCache });
       assert.ifError(declined.error);
       assert.strictEqual(declined.reused, false);
       assert.strictEqual((await connectOnce(port, { sessionCache })).reused, true);
     });

  it('TLS 1.3: a ticket declined on its first use takes the older tickets of its key with it', async function () {
    const { server, port } = await start(tlswrap, { minVersion: 'TLSv1.3' });
    const sessionCache = new tlswrap.SessionCache();
    // A full handshake leaves the server's two tickets; its resumed
    // connections issue none.
    assert.strictEqual((await connectOnce(port, { sessionCache })).reused, false);
    server.setTicketKeys(crypto.randomBytes(48));
    const declined = await connectOnce(port, { sessionCache });
    assert.ifError(declined.error);
    assert.strictEqual(declined.reused, false);
    // Two fresh tickets, each used twice: the stale one left behind would
    // be offered (unused first) and cost a full handshake.
    for (let i = 0; i < 4; i++) {
      const next = await connectOnce(port, { sessionCache });
      assert.ifError(next.error);
      assert.strictEqual(next.reused, true, `connection ${i} after the rotation was not resumed`);
    }
  });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`${version}: a ticket the server reissues on resumption (older key) replaces the cached one`, async function () {
      const [k1, k2] = [crypto.randomBytes(48), crypto.randomBytes(48)];
      const { server, port } = await start(tlswrap, { minVersion: version, maxVersion: version, ticketKeys: k1 });
      const sessionCache = new tlswrap.SessionCache();
      await connectOnce(port, { sessionCache });
      server.setTicketKeys(Buffer.concat([k2, k1]));
      assert.strictEqual((await connectOnce(port, { sessionCache })).reused, true);
      server.setTicketKeys(k2);
      assert.strictEqual((await connectOnce(port, { sessionCache })).reused, true);
    });
  }

  it('the LRU bound holds across servers', async function () {
    const a = await start(tlswrap, { maxVersion: 'TLSv1.2' });
    const b = await start(tlswrap, { maxVersion: 'TLSv1.2' });
    const c = await start(tlswrap, { maxVersion: 'TLSv1.2' });
    const sessionCache = new tlswrap.SessionCache({ max: 2 });
    for (const s of [a, b, c]) await connectOnce(s.port, { sessionCache });
    assert.strictEqual(sessionCache.size, 2);
    assert.strictEqual((await connectOnce(a.port, { sessionCache })).reused, false);
    assert.strictEqual((await connectOnce(c.port, { sessionCache })).reused, true);
  });

  it('a store of ones own: get/set/delete with string keys and DER Buffers', async function () {
    const { port } = await start(tlswrap, { maxVersion: 'TLSv1.2' });
    const shared = new Map();
    // Two stores over one Map, as two processes sharing a store would be.
    const store = () => ({
      get: (key) => shared.get(key),
      set: (key, session) => {
        assert.strictEqual(typeof key, 'string');
        assert.ok(Buffer.isBuffer(session));
        shared.set(key, session);
      },
      delete: (key) => shared.delete(key),
    });
    assert.strictEqual((await connectOnce(port, { sessionCache: store() })).reused, false);
    assert.strictEqual(shared.size, 1);
    assert.strictEqual((await connectOnce(port, { sessionCache: store() })).reused, true);
  });

  it('sessionCache: true is one process-wide cache; each worker thread has its own', async function () {
    const { port } = await start(tlswrap, { maxVersion: 'TLSv1.2' });
    assert.strictEqual((await connectOnce(port, { sessionCache: true })).reused, false);
    assert.strictEqual((await connectOnce(port, { sessionCache: true })).reused, true);
    const worker = new Worker(`
      const { parentPort, workerData } = require('node:worker_threads');
      const tlswrap = require(workerData.lib);
      const once = (options) => new Promise((resolve, reject) => {
        const c = tlswrap.connect({ host: '127.0.0.1', port: workerData.port, ca: workerData.ca,
                                    servername: 'localhost', sessionCache: true });
        c.on('error', reject);
        c.on('secureConnect', () => {
          const reused = c.isSessionReused();
          c.resume();
          c.on('close', () => resolve(reused));
        });
      });
      (async () => parentPort.postMessage([await once(), await once()]))();
    `, { eval: true, workerData: { port, ca: fixtures.ca, lib: path.join(__dirname, '..') } });
    const exited = once(worker, 'exit');
    const [result] = await once(worker, 'message');
    assert.deepStrictEqual(result, [false, true]);
    await exited;
  });
});
