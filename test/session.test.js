'use strict';

// Session resumption: the client's 'session' event and getSession(), the
// `session` option, isSessionReused() on both ends, ticket keys shared between
// servers and rotated with setTicketKeys(), sessionIdContext, and the
// server's newSession/resumeSession cache for TLS 1.2 session IDs.

const assert = require('node:assert');
const crypto = require('node:crypto');
const { once } = require('node:events');
const tls = require('node:tls');
const { builtin, fixtures, tlswrap, serverOptions, clientOptions, listen, closeServer } = require('./common');

const otherOptions = { key: fixtures.otherKey, cert: fixtures.otherCert };

const { SSL_OP_NO_TICKET } = crypto.constants;

// Waits until `done()` holds or 2 s have passed (TLS 1.3 tickets arrive
// after the handshake, at no set time).
async function until(done) {
  const deadline = Date.now() + 2000;
  while (!done() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// One connection: what the client saw (sessions included), and whether the
// server side resumed. A full handshake brings one session in TLS 1.2 and two
// in TLS 1.3 (OpenSSL's default of two tickets); TLS 1.3 tickets arrive after
// the handshake, so they are waited for, within a bound.
async function connectOnce(server, port, extra = {}) {
  const serverSide = once(server, 'secureConnection');
  const client = tlswrap.connect(clientOptions(port, extra));
  const sessions = [];
  client.on('session', (s) => sessions.push(s));
  await once(client, 'secureConnect');
  const [sock] = await serverSide;
  const reused = client.isSessionReused();
  const expected = reused ? 0 : client.getProtocol() === 'TLSv1.3' ? 2 : 1;
  await until(() => sessions.length >= expected);
  const result = {
    reused,
    serverReused: sock.isSessionReused(),
    sessions,
    getSession: client.getSession(),
    protocol: client.getProtocol(),
  };
  client.end();
  await once(client, 'close');
  return result;
}

// node:tls 24.22 on hands out a client session as this prefix, a 2-byte
// length and the server's name, then the DER.
const nodeSessionPrefix = Buffer.from('\0nodejs:tls:session:1\0', 'latin1');
function derStart(session) {
  if (!session.subarray(0, nodeSessionPrefix.length).equals(nodeSessionPrefix)) return 0;
  return nodeSessionPrefix.length + 2 + session.readUInt16BE(nodeSessionPrefix.length);
}

// Where the ticket lies in a session (SSL_SESSION_ASN1: a SEQUENCE whose
// tlsext_tick is an [10] EXPLICIT OCTET STRING), from the session's start.
function ticketRange(session) {
  const base = derStart(session);
  const range = ticketRangeInDER(session.subarray(base));
  return { start: base + range.start, length: range.length };
}
function ticketRangeInDER(der) {
  function header(at) {
    let len = der[at + 1];
    let body = at + 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + der[at + 2 + i];
      body += n;
    }
    return { tag: der[at], body, len };
  }
  const outer = header(0);
  assert.strictEqual(outer.tag, 0x30);
  for (let at = outer.body; at < outer.body + outer.len;) {
    const field = header(at);
    if (field.tag === 0xaa) {
      const octets = header(field.body);
      assert.strictEqual(octets.tag, 0x04);
      return { start: octets.body, length: octets.len };
    }
    at = field.body + field.len;
  }
  throw new Error('no ticket in the session');
}

async function startServer(extra) {
  const server = tlswrap.createServer(serverOptions(extra));
  const port = await listen(server);
  return { server, port };
}

for (const version of ['TLSv1.2', 'TLSv1.3']) {
  describe(`session resumption, ${version}`, function () {
    const servers = [];
    async function start(extra) {
      const s = await startServer({ minVersion: version, maxVersion: version, ...extra });
      servers.push(s.server);
      return s;
    }
    afterEach(async function () {
      await Promise.all(servers.splice(0).map(closeServer));
    });

    it("'session' event gives a Buffer; reconnecting with it resumes on both ends", async function () {
      const { server, port } = await start();
      const first = await connectOnce(server, port);
      assert.strictEqual(first.protocol, version);
      assert.strictEqual(first.reused, false);
      assert.strictEqual(first.serverReused, false);
      assert.strictEqual(first.sessions.length, version === 'TLSv1.2' ? 1 : 2);
      for (const s of first.sessions) assert.ok(Buffer.isBuffer(s) && s.length > 0);
      const again = await connectOnce(server, port, { session: first.sessions[0] });
      assert.strictEqual(again.reused, true);
      assert.strictEqual(again.serverReused, true);
      assert.strictEqual(again.protocol, version);
    });

    // node:tls 24.22 on hands out '\0nodejs:tls:session:1\0', the name the
    // server was verified for (2-byte length) and the DER, and takes such a
    // session back only for that name. One kept from node:tls resumes here
    // too, for its name only; before 24.22 node:tls knows no such form.
    it("a session in node:tls's named form resumes for the name it names, not for another", async function () {
      const { server, port } = await start();
      // TLS 1.2's session comes before 'secureConnect', TLS 1.3's after.
      const c = tls.connect(clientOptions(port));
      const [kept] = await once(c, 'session');
      c.end();
      await once(c, 'close');
      const prefix = nodeSessionPrefix;
      const nodeNames = derStart(kept) > 0;
      if (builtin && !nodeNames) this.skip();
      let named = kept;
      if (!nodeNames) {
        const name = Buffer.from('localhost');
        const length = Buffer.alloc(2);
        length.writeUInt16BE(name.length);
        named = Buffer.concat([prefix, length, name, kept]);
      }
      assert.strictEqual((await connectOnce(server, port, { session: named })).reused, true);
      // 127.0.0.1 is in the certificate too: the connection is verified, a
      // full handshake.
      const other = await connectOnce(server, port, { session: named, servername: undefined });
      assert.deepStrictEqual([other.reused, other.serverReused], [false, false]);
      if (nodeNames) {
        assert.strictEqual((await connectOnce(server, port, { session: named.toString('latin1') })).reused, true);
      }
      // Cut short, or with a name longer than what follows: no session, a
      // full handshake, nothing thrown. setSession() reads the form too.
      const nameEnd = derStart(named);
      for (const broken of [named.subarray(0, nameEnd - 1), named.subarray(0, prefix.length + 1),
        Buffer.concat([prefix, Buffer.from([0xff, 0xff]), Buffer.from('localhost')])]) {
        const r = await connectOnce(server, port, { session: broken });
        assert.deepStrictEqual([r.reused, r.serverReused], [false, false]);
      }
      const viaSetter = await new Promise((resolve, reject) => {
        const c = tlswrap.connect(clientOptions(port));
        c.setSession(named);
        c.on('error', reject);
        c.on('secureConnect', () => {
          resolve(c.isSessionReused());
          c.destroy();
        });
      });
      assert.strictEqual(viaSetter, true);
    });

    // Sessions are asked of OpenSSL once a 'session' listener exists. One
    // added in 'secureConnect' is too late for TLS 1.2's (part of the
    // handshake) and in time for TLS 1.3's tickets (they follow it); without
    // one, getSession() still has the session.
    it("a 'session' listener added in 'secureConnect' gets the tickets that follow; getSession() needs none",
      async function () {
        const { server, port } = await start();
        const client = tlswrap.connect(clientOptions(port));
        await once(client, 'secureConnect');
        const sessions = [];
        client.on('session', (s) => sessions.push(s));
        const expected = version === 'TLSv1.3' ? 2 : 0;
        await until(() => sessions.length >= expected);
        // Time for any session that should not come.
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.strictEqual(sessions.length, expected);
        const live = client.getSession();
        client.end();
        await once(client, 'close');
        for (const session of [...sessions, live]) {
          const again = await connectOnce(server, port, { session });
          assert.strictEqual(again.reused, true);
        }
      });

    it('a session offered again and again resumes each time; the same bytes with the ticket changed do not',
      async function () {
        const { server, port } = await start();
        const { sessions } = await connectOnce(server, port);
        const session = sessions[0];
        // tlswrap decodes a session's DER once and reuses it for the same
        // bytes: it must be the exact bytes.
        for (let i = 0; i < 3; i++) {
          const again = await connectOnce(server, port, { session });
          assert.strictEqual(again.reused, true);
          assert.strictEqual(again.serverReused, true);
        }
        const tampered = Buffer.from(session);
        const ticket = ticketRange(tampered);
        tampered[ticket.start + (ticket.length >> 1)] ^= 0x01;
        const other = await connectOnce(server, port, { session: tampered });
        assert.strictEqual(other.reused, false);
        assert.strictEqual(other.serverReused, false);
        const still = await connectOnce(server, port, { session });
        assert.strictEqual(still.reused, true);
      });

    // TLS 1.3: OpenSSL servers send two tickets together, and the first
    // 'session' must not see the second one already taken in.
    it("in each 'session' listener, getSession() is that session and getTLSTicket() its ticket",
      async function () {
        const { port } = await start();
        const client = tlswrap.connect(clientOptions(port));
        const expected = version === 'TLSv1.2' ? 1 : 2;
        const seen = [];
        await new Promise((resolve) => {
          client.on('session', (session) => {
            const ticket = ticketRange(session);
            seen.push({
              getSession: session.equals(client.getSession()),
              getTLSTicket: session.subarray(ticket.start, ticket.start + ticket.length)
                .equals(client.getTLSTicket()),
            });
            if (seen.length === expected) resolve();
          });
        });
        client.end();
        await once(client, 'close');
        assert.deepStrictEqual(seen, Array(expected).fill({ getSession: true, getTLSTicket: true }));
      });

    it('getSession() is the latest session and resumes too', async function () {
      const { server, port } = await start();
      const first = await connectOnce(server, port);
      assert.ok(Buffer.isBuffer(first.getSession));
      assert.ok(first.getSession.equals(first.sessions[first.sessions.length - 1]));
      const again = await connectOnce(server, port, { session: first.getSession });
      assert.strictEqual(again.reused, true);
    });

    it('a session is accepted by any server with the same ticketKeys, no other', async function () {
      const keys = crypto.randomBytes(48);
      const a = await start({ ticketKeys: keys });
      const b = await start({ ticketKeys: keys });
      const c = await start({ ticketKeys: crypto.randomBytes(48) });
      const fromA = await connectOnce(a.server, a.port);
      const onB = await connectOnce(b.server, b.port, { session: fromA.sessions[0] });
      assert.strictEqual(onB.reused, true);
      assert.strictEqual(onB.serverReused, true);
      // And the other way round.
      const fromB = await connectOnce(b.server, b.port);
      const onA = await connectOnce(a.server, a.port, { session: fromB.sessions[0] });
      assert.strictEqual(onA.reused, true);
      // A server with other keys does a full handshake instead.
      const onC = await connectOnce(c.server, c.port, { session: fromA.sessions[0] });
      assert.strictEqual(onC.reused, false);
      assert.strictEqual(onC.serverReused, false);
    });

    it('getTicketKeys()/setTicketKeys(): round-trip, and rotation invalidates old tickets', async function () {
      const keys = crypto.randomBytes(48);
      const { server, port } = await start({ ticketKeys: keys });
      const got = server.getTicketKeys();
      assert.ok(Buffer.isBuffer(got));
      assert.strictEqual(got.length, 48);
      assert.ok(got.equals(keys));

      const first = await connectOnce(server, port);
      const fresh = crypto.randomBytes(48);
      server.setTicketKeys(fresh);
      assert.ok(server.getTicketKeys().equals(fresh));
      const rotated = await connectOnce(server, port, { session: first.sessions[0] });
      assert.strictEqual(rotated.reused, false);
      server.setTicketKeys(keys);
      const restored = await connectOnce(server, port, { session: first.sessions[0] });
      assert.strictEqual(restored.reused, true);
    });

    it('default ticket keys: 48 random bytes, different per server', async function () {
      const a = await start();
      const b = await start();
      assert.strictEqual(a.server.getTicketKeys().length, 48);
      assert.ok(!a.server.getTicketKeys().equals(b.server.getTicketKeys()));
    });

    it('sessionIdContext must match for a session to resume', async function () {
      const keys = crypto.randomBytes(48);
      const a = await start({ ticketKeys: keys, sessionIdContext: 'context-a' });
      const a2 = await start({ ticketKeys: keys, sessionIdContext: 'context-a' });
      const b = await start({ ticketKeys: keys, sessionIdContext: 'context-b' });
      const first = await connectOnce(a.server, a.port);
      const same = await connectOnce(a2.server, a2.port, { session: first.sessions[0] });
      assert.strictEqual(same.reused, true);
      const other = await connectOnce(b.server, b.port, { session: first.sessions[0] });
      assert.strictEqual(other.reused, false);
    });

    // A resumed session carries the client certificate's verification from
    // the handshake that made it. node:tls resumes it at any server of the
    // program with the same ticket keys, whatever CAs that one trusts.
    it('servers sharing ticket keys: a session resumes where the client CAs are the same, not where they differ',
      async function () {
        if (builtin) this.skip();
        const keys = crypto.randomBytes(48);
        const clientAuth = { ticketKeys: keys, requestCert: true, rejectUnauthorized: false };
        const z = await start({ ...clientAuth, ca: fixtures.ca });
        const alike = await start({ ...clientAuth, ca: [fixtures.ca] });
        const other = await start({ ...clientAuth, ca: fixtures.selfSignedCert });
        const authorized = new Map();
        for (const { server } of [z, alike, other]) {
          server.on('secureConnection', (sock) => authorized.set(server, sock.authorized));
        }
        const client = { key: fixtures.clientKey, cert: fixtures.clientCert };
        const first = await connectOnce(z.server, z.port, client);
        assert.strictEqual(authorized.get(z.server), true);
        const same = await connectOnce(alike.server, alike.port, { ...client, session: first.sessions[0] });
        assert.strictEqual(same.serverReused, true, 'servers trusting the same CA must share sessions');
        assert.strictEqual(authorized.get(alike.server), true);
        const elsewhere = await connectOnce(other.server, other.port, { ...client, session: first.sessions[0] });
        assert.strictEqual(elsewhere.serverReused, false, 'resumed at a server that trusts other client CAs');
        assert.strictEqual(authorized.get(other.server), false, 'a client its CAs do not vouch for came out authorized');
      });

    // The session keeps the client's certificate, not its chain: node:tls
    // completes the chain from the trust store.
    it("a server's getPeerCertificate(true) on a resumed connection: the client's chain up to the CA",
      async function () {
        const { server, port } = await start({ ca: fixtures.ca, requestCert: true });
        const chains = [];
        server.on('secureConnection', (sock) => {
          const names = [];
          const seen = new Set();
          for (let c = sock.getPeerCertificate(true); c && c.subject && !seen.has(c.fingerprint256);
            c = c.issuerCertificate) {
            seen.add(c.fingerprint256);
            names.push(c.subject.CN);
          }
          chains.push(names);
        });
        const client = { key: fixtures.clientKey, cert: fixtures.clientCert };
        const first = await connectOnce(server, port, client);
        const again = await connectOnce(server, port, { ...client, session: first.sessions[0] });
        assert.strictEqual(again.serverReused, true);
        assert.deepStrictEqual(chains, [['tlswrap client', 'tlswrap test CA'], ['tlswrap client', 'tlswrap test CA']]);
      });

    it('a session from one server is not resumed by an unrelated server (full handshake, no error)',
      async function () {
        const a = await start();
        const b = await start();
        const first = await connectOnce(a.server, a.port);
        const onB = await connectOnce(b.server, b.port, { session: first.sessions[0] });
        assert.strictEqual(onB.reused, false);
        assert.strictEqual(onB.protocol, version);
      });
  });

  // node:tls keeps an SNI context's certificate on the connection's SSL but
  // never switches its SSL_CTX: tickets are sealed and opened with the
  // server's own keys, whichever context the name chose.
  describe(`session resumption under SNI contexts, ${version}`, function () {
    const servers = [];
    async function start(extra, setup) {
      const server = tlswrap.createServer(serverOptions({ minVersion: version, maxVersion: version, ...extra }));
      if (setup) setup(server);
      servers.push(server);
      return { server, port: await listen(server) };
    }
    afterEach(async function () {
      await Promise.all(servers.splice(0).map(closeServer));
    });
    const other = { servername: 'other.example' };

    it('addContext: a session for the added name resumes on both ends', async function () {
      const { server, port } = await start({}, (s) => s.addContext('other.example', otherOptions));
      const first = await connectOnce(server, port, other);
      assert.strictEqual(first.reused, false);
      const again = await connectOnce(server, port, { ...other, session: first.sessions[0] });
      assert.strictEqual(again.reused, true);
      assert.strictEqual(again.serverReused, true);
      assert.strictEqual(again.protocol, version);
    });

    it('SNICallback: a session resumes, and the resumed handshake does not ask SNICallback again',
      async function () {
        const context = tlswrap.createSecureContext(otherOptions);
        const calls = [];
        const { server, port } = await start({
          SNICallback: (name, cb) => { calls.push(name); cb(null, context); },
        });
        const first = await connectOnce(server, port, other);
        assert.deepStrictEqual(calls, ['other.example']);
        const again = await connectOnce(server, port, { ...other, session: first.sessions[0] });
        assert.strictEqual(again.reused, true);
        assert.strictEqual(again.serverReused, true);
        assert.deepStrictEqual(calls, ['other.example']);
      });

    it("the server's ticket keys seal an SNI context's tickets, not that context's own",
      async function () {
        const context = tlswrap.createSecureContext(otherOptions);
        const { server, port } = await start({}, (s) => s.addContext('other.example', context));
        const first = await connectOnce(server, port, other);
        context.context.setTicketKeys(crypto.randomBytes(48));
        const kept = await connectOnce(server, port, { ...other, session: first.sessions[0] });
        assert.strictEqual(kept.reused, true);
        server.setTicketKeys(crypto.randomBytes(48));
        const rotated = await connectOnce(server, port, { ...other, session: first.sessions[0] });
        assert.strictEqual(rotated.reused, false);
        assert.strictEqual(rotated.serverReused, false);
      });

    it('a session made for one server name does not resume under another (full handshake)',
      async function () {
        const { server, port } = await start({}, (s) => {
          s.addContext('other.example', otherOptions);
          s.addContext('other2.example', otherOptions);
        });
        const first = await connectOnce(server, port, other);
        // node:tls binds sessions to the server name in recent releases
        // (24.22 does, its session buffers then carry the name; 20.20 does
        // not and resumes under any name).
        if (builtin && !first.sessions[0].includes('nodejs:tls:session')) this.skip();
        const session = first.sessions[0];
        // Same SNI context, the default context, case, and no SNI at all.
        for (const servername of ['other2.example', 'localhost', 'OTHER.example', '']) {
          const r = await connectOnce(server, port, { servername, session, rejectUnauthorized: false });
          assert.deepStrictEqual([servername, r.reused, r.serverReused], [servername, false, false]);
        }
        const mine = await connectOnce(server, port, { ...other, session });
        assert.strictEqual(mine.reused, true);
      });
  });
}

// One client, followed until it closes: its events in order, what it was at
// 'secureConnect', and the sessions it handed out.
function watch(port, extra) {
  const client = tlswrap.connect(clientOptions(port, extra));
  const seen = { events: [], sessions: [], error: null, authorized: undefined };
  client.on('secureConnect', () => {
    seen.events.push('secureConnect');
    seen.authorized = client.authorized;
    seen.authorizationError = client.authorizationError;
    seen.reused = client.isSessionReused();
    // node:tls gives {} for a resumed TLS 1.2 connection.
    const cert = client.getPeerCertificate();
    seen.peerCN = cert.subject ? cert.subject.CN : undefined;
  });
  client.on('session', (session) => {
    seen.events.push('session');
    seen.sessions.push(session);
  });
  client.on('error', (err) => {
    seen.events.push('error');
    seen.error = err;
  });
  client.resume();
  return new Promise((resolve) => client.on('close', () => resolve(seen)));
}

for (const version of ['TLSv1.2', 'TLSv1.3']) {
  describe(`session resumption is verified, ${version}`, function () {
    let server, port;
    before(async function () {
      // The server writes a byte and ends: a TLS 1.3 server's tickets go out
      // before its first data, so by the client's 'close' every session it
      // will ever see has arrived.
      server = tlswrap.createServer(serverOptions({ minVersion: version, maxVersion: version }), (sock) => {
        sock.on('error', () => {});
        sock.end('x');
      });
      server.on('tlsClientError', () => {});
      port = await listen(server);
    });
    after(async function () {
      await closeServer(server);
    });

    // A full handshake brings one session in TLS 1.2, two tickets in TLS 1.3.
    const verifiedThenSessions = ['secureConnect', ...new Array(version === 'TLSv1.2' ? 1 : 2).fill('session')];

    it("'session' comes after verification and 'secureConnect'", async function () {
      const seen = await watch(port);
      assert.deepStrictEqual(seen.events, verifiedThenSessions);
      assert.strictEqual(seen.authorized, true);
    });

    it("a connection that fails ERR_TLS_CERT_ALTNAME_INVALID hands out no session", async function () {
      // On TLS 1.2 OpenSSL has the session before the name is checked.
      const seen = await watch(port, { servername: 'wrong.example' });
      assert.deepStrictEqual(seen.events, ['error']);
      assert.strictEqual(seen.error.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    });

    it('a connection that fails a custom checkServerIdentity hands out no session', async function () {
      const mine = Object.assign(new Error('not my server'), { code: 'MY_CHECK' });
      const seen = await watch(port, { checkServerIdentity: () => mine });
      assert.deepStrictEqual(seen.events, ['error']);
      assert.strictEqual(seen.error, mine);
    });

    it('rejectUnauthorized:false: the session still comes, after secureConnect, as with node:tls',
      async function () {
        const seen = await watch(port, { servername: 'wrong.example', rejectUnauthorized: false });
        assert.deepStrictEqual(seen.events, verifiedThenSessions);
        assert.strictEqual(seen.authorized, false);
        assert.strictEqual(seen.authorizationError, 'ERR_TLS_CERT_ALTNAME_INVALID');
      });

    it("a resumed connection's certificate goes through the name check: wrong name -> " +
       'ERR_TLS_CERT_ALTNAME_INVALID, no session', async function () {
      if (builtin) this.skip(); // node:tls skips the name check on resumption
      // A session for the wrong name, from a connection that waived the check.
      const lax = await watch(port, { servername: 'wrong.example', rejectUnauthorized: false });
      for (const s of lax.sessions) {
        const seen = await watch(port, { servername: 'wrong.example', session: s });
        assert.deepStrictEqual(seen.events, ['error']);
        assert.strictEqual(seen.error.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
        assert.strictEqual(seen.error.cert.subject.CN, 'localhost');
        // The same, waived: it did resume, and is not authorized.
        const waived = await watch(port, { servername: 'wrong.example', session: s, rejectUnauthorized: false });
        assert.strictEqual(waived.reused, true);
        assert.strictEqual(waived.authorized, false);
        assert.strictEqual(waived.authorizationError, 'ERR_TLS_CERT_ALTNAME_INVALID');
        assert.strictEqual(waived.peerCN, 'localhost');
      }
    });

    it('a resumed connection calls a custom checkServerIdentity; its Error is the one emitted', async function () {
      if (builtin) this.skip(); // node:tls skips the name check on resumption
      const first = await watch(port);
      const calls = [];
      const ok = await watch(port, {
        session: first.sessions[0],
        checkServerIdentity: (host, cert) => {
          calls.push([host, cert.subject.CN]);
          return tls.checkServerIdentity(host, cert);
        },
      });
      assert.strictEqual(ok.reused, true);
      assert.strictEqual(ok.authorized, true);
      assert.deepStrictEqual(calls, [['localhost', 'localhost']]);
      // Resumed sessions are handed out after verification as well.
      assert.strictEqual(ok.events[0], 'secureConnect');

      const mine = Object.assign(new Error('not my server'), { code: 'MY_CHECK' });
      const refused = await watch(port, { session: first.sessions[0], checkServerIdentity: () => mine });
      assert.deepStrictEqual(refused.events, ['error']);
      assert.strictEqual(refused.error, mine);
    });

    it("a resumed connection reports the chain result stored in its session", async function () {
      // Made without the CA, waived: the session remembers the chain failed.
      const lax = await watch(port, { ca: undefined, rejectUnauthorized: false });
      assert.strictEqual(lax.authorizationError, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      const seen = await watch(port, { session: lax.sessions[0] });
      assert.deepStrictEqual(seen.events, ['error']);
      assert.strictEqual(seen.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      const waived = await watch(port, { session: lax.sessions[0], rejectUnauthorized: false });
      assert.strictEqual(waived.reused, true);
      assert.strictEqual(waived.authorized, false);
      assert.strictEqual(waived.authorizationError, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    });
  });
}

describe('session resumption is verified, TLS 1.2 renegotiation', function () {
  it("a renegotiation's session waits for that handshake's check; a failed check hands out none", async function () {
    if (builtin) this.skip(); // node:tls emits it before checking the new handshake
    const TLS12 = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' };
    const server = tlswrap.createServer(serverOptions(TLS12), (sock) => {
      sock.on('error', () => {});
      sock.resume();
    });
    const port = await listen(server);
    try {
      let checks = 0;
      const mine = Object.assign(new Error('not my server any more'), { code: 'MY_CHECK' });
      const client = tlswrap.connect(clientOptions(port, {
        ...TLS12, checkServerIdentity: () => (++checks === 1 ? undefined : mine),
      }));
      const events = [];
      client.on('secureConnect', () => events.push('secureConnect'));
      client.on('session', () => events.push('session'));
      client.on('error', (err) => events.push(err.code));
      const closed = new Promise((resolve) => client.on('close', resolve));
      await once(client, 'secureConnect');
      client.renegotiate({}, () => {});
      await closed;
      assert.strictEqual(checks, 2);
      assert.deepStrictEqual(events, ['secureConnect', 'session', 'MY_CHECK']);
    } finally {
      await closeServer(server);
    }
  });
});

describe('session resumption, TLS 1.2 session IDs (no tickets)', function () {
  let server, port;
  const cache = new Map();
  const calls = { newSession: 0, resumeHits: 0 };
  before(async function () {
    ({ server, port } = await startServer({ maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET }));
    server.on('newSession', (id, data, cb) => {
      calls.newSession++;
      assert.ok(Buffer.isBuffer(id) && Buffer.isBuffer(data));
      cache.set(id.toString('hex'), data);
      cb();
    });
    server.on('resumeSession', (id, cb) => {
      // Also called for a first connection: an OpenSSL 3 client sends a
      // random session ID for middlebox compatibility.
      const data = cache.get(id.toString('hex'));
      if (data) calls.resumeHits++;
      cb(null, data || null);
    });
  });
  after(async function () {
    await closeServer(server);
  });

  it("newSession stores, resumeSession finds: the session resumes", async function () {
    const first = await connectOnce(server, port);
    assert.strictEqual(first.reused, false);
    assert.strictEqual(calls.newSession, 1);
    assert.strictEqual(cache.size, 1);
    const again = await connectOnce(server, port, { session: first.sessions[0] });
    assert.strictEqual(calls.resumeHits, 1);
    assert.strictEqual(again.reused, true);
    assert.strictEqual(again.serverReused, true);
  });

  it('resumeSession answering null: full handshake', async function () {
    const first = await connectOnce(server, port);
    cache.clear();
    const again = await connectOnce(server, port, { session: first.sessions[0] });
    assert.strictEqual(again.reused, false);
  });

  it('without newSession/resumeSession handlers (no internal cache) nothing resumes', async function () {
    const plain = await startServer({ maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET });
    try {
      const first = await connectOnce(plain.server, plain.port);
      const again = await connectOnce(plain.server, plain.port, { session: first.sessions[0] });
      assert.strictEqual(again.reused, false);
    } finally {
      await closeServer(plain.server);
    }
  });
});

// node:tls asks the application's store only for a ClientHello whose
// session_ticket extension is empty: a ticket resumes on its own. A TLS 1.3
// hello resuming by PSK sends that extension empty, with a random legacy
// session id (middlebox compatibility), so node:tls asks for that id.
describe("'resumeSession' and session tickets", function () {
  for (const [version, expected] of [['TLSv1.2', 0], ['TLSv1.3', 1]]) {
    it(`${version}: resuming by ticket asks 'resumeSession' ${expected} time(s), as node:tls`, async function () {
      const { server, port } = await startServer({ maxVersion: version });
      try {
        let asked = 0;
        server.on('resumeSession', (id, cb) => {
          asked++;
          cb(null, null);
        });
        const first = await connectOnce(server, port);
        asked = 0;
        const again = await connectOnce(server, port, { session: first.sessions[0] });
        assert.strictEqual(again.reused, true);
        assert.strictEqual(asked, expected);
      } finally {
        await closeServer(server);
      }
    });
  }
});

// node:tls goes on when no 'newSession'/'resumeSession' listener is left to
// answer, takes any ArrayBufferView as a stored session and anything else as
// none (a full handshake), and fails a connection whose 'resumeSession'
// callback is called twice.
describe("'newSession'/'resumeSession': no listener left, odd answers", function () {
  const servers = [];
  const sockets = [];
  afterEach(async function () {
    // A connection held for an answer would keep its server open.
    for (const s of sockets.splice(0)) s.destroy();
    await Promise.all(servers.splice(0).map(closeServer));
  });

  async function start(extra) {
    const server = tlswrap.createServer(serverOptions(extra), (s) => s.end('x'));
    server.on('connection', (s) => sockets.push(s));
    servers.push(server);
    return { server, port: await listen(server) };
  }

  // Rejects when `promise` has not settled in 5 s: a handshake held for an
  // answer that never comes fails here, not at mocha's timeout.
  function within(promise, what) {
    let timer;
    const late = new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no ${what} within 5 s`)), 5000);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  // One connection read to its end: what the client read, whether it resumed
  // and the sessions it got.
  async function exchange(port, extra) {
    const client = tlswrap.connect(clientOptions(port, extra));
    const sessions = [];
    const chunks = [];
    let reused = null;
    client.on('session', (s) => sessions.push(s));
    client.on('secureConnect', () => { reused = client.isSessionReused(); });
    client.on('data', (d) => chunks.push(d));
    // An error (a server that gave up) ends it too: what counts is 'close'.
    const closed = new Promise((resolve) => client.on('close', resolve));
    client.on('error', () => {});
    await within(closed, 'close');
    return { data: Buffer.concat(chunks).toString(), reused, sessions };
  }

  // A TLS 1.2 server with session IDs only, its store filled by one
  // connection: the session a client offers next, and the stored DER.
  async function storedSession() {
    const store = new Map();
    const { server, port } = await start({ maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET });
    server.on('newSession', (id, data, cb) => {
      store.set(id.toString('hex'), data);
      cb();
    });
    const first = await exchange(port);
    assert.strictEqual(first.data, 'x');
    assert.strictEqual(store.size, 1);
    return { server, port, session: first.sessions[0], der: [...store.values()][0] };
  }

  it("TLS 1.3: once('newSession') answers the first ticket; the second, with no listener, holds nothing",
     async function () {
       const { server, port } = await start({ minVersion: 'TLSv1.3' });
       let called = 0;
       server.once('newSession', (id, data, cb) => {
         called++;
         cb();
       });
       const result = await exchange(port);
       assert.strictEqual(result.data, 'x');
       assert.strictEqual(called, 1);
     });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`${version}: listeners removed after the connection came: the handshake goes on`, async function () {
      const { server, port } = await start({ maxVersion: version, secureOptions: SSL_OP_NO_TICKET });
      server.on('newSession', (id, data, cb) => cb());
      server.on('resumeSession', (id, cb) => cb(null, null));
      server.on('connection', () => {
        server.removeAllListeners('newSession');
        server.removeAllListeners('resumeSession');
      });
      // The client sends a session id (TLS 1.3's middlebox compatibility),
      // so 'resumeSession' would be asked.
      const result = await exchange(port);
      assert.strictEqual(result.data, 'x');
      assert.strictEqual(result.reused, false);
    });
  }

  for (const [what, answer] of [['a number', () => 42], ['an object', (der) => ({ session: der })],
    ['a string', () => 'abc']]) {
    it(`'resumeSession' answered with ${what}: a full handshake, nothing thrown`, async function () {
      const { server, port, session, der } = await storedSession();
      const thrown = [];
      server.on('resumeSession', (id, cb) => {
        try {
          cb(null, answer(der));
        } catch (err) {
          thrown.push(err);
        }
      });
      const result = await exchange(port, { session });
      assert.deepStrictEqual(thrown, []);
      assert.strictEqual(result.data, 'x');
      assert.strictEqual(result.reused, false);
    });
  }

  it("'resumeSession' answered with a DataView over the session: it resumes", async function () {
    const { server, port, session, der } = await storedSession();
    server.on('resumeSession', (id, cb) => cb(null, new DataView(der.buffer, der.byteOffset, der.byteLength)));
    const result = await exchange(port, { session });
    assert.strictEqual(result.reused, true);
  });

  for (const later of [false, true]) {
    it(`'resumeSession' callback called twice${later ? ', the second time later' : ''}: ` +
       'tlsClientError ERR_MULTIPLE_CALLBACK', async function () {
      const { server, port, session, der } = await storedSession();
      server.on('resumeSession', (id, cb) => {
        cb(null, der);
        if (later) setImmediate(() => cb(null, der));
        else cb(null, der);
      });
      const failed = once(server, 'tlsClientError');
      await exchange(port, { session });
      const [err] = await within(failed, 'tlsClientError');
      assert.strictEqual(err.code, 'ERR_MULTIPLE_CALLBACK');
    });
  }
});

// tlswrap's own: node:tls servers keep no session-ID cache of their own.
(builtin ? describe.skip : describe)('sessionCacheSize: the server keeps TLS 1.2 session IDs itself', function () {
  const servers = [];
  async function start(extra) {
    const s = await startServer({ maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET, ...extra });
    servers.push(s.server);
    return s;
  }
  afterEach(async function () {
    await Promise.all(servers.splice(0).map(closeServer));
  });

  it('a session ID resumes without newSession/resumeSession listeners', async function () {
    const { server, port } = await start({ sessionCacheSize: 16 });
    const first = await connectOnce(server, port);
    const again = await connectOnce(server, port, { session: first.sessions[0] });
    assert.strictEqual(again.reused, true);
    assert.strictEqual(again.serverReused, true);
  });

  it('holds at most sessionCacheSize sessions, the oldest dropped first', async function () {
    const { server, port } = await start({ sessionCacheSize: 1 });
    const a = await connectOnce(server, port);
    const b = await connectOnce(server, port);
    // b first: a's full handshake would store a new session in place of b's.
    assert.strictEqual((await connectOnce(server, port, { session: b.sessions[0] })).reused, true);
    assert.strictEqual((await connectOnce(server, port, { session: a.sessions[0] })).reused, false);
  });

  it('a session made for one server name does not resume under another', async function () {
    const { server, port } = await start({ sessionCacheSize: 16 });
    const checkServerIdentity = () => undefined;
    const first = await connectOnce(server, port, { servername: 'a.example', checkServerIdentity });
    const other = await connectOnce(server, port,
                                    { servername: 'b.example', checkServerIdentity, session: first.sessions[0] });
    assert.strictEqual(other.reused, false);
  });

  it('sessionCacheSize must be an integer >= 0', function () {
    assert.throws(() => tlswrap.createServer(serverOptions({ sessionCacheSize: -1 })), { code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => tlswrap.createServer(serverOptions({ sessionCacheSize: 1.5 })), { code: 'ERR_OUT_OF_RANGE' });
  });
});

describe("newSession holds the server's handshake until its callback", function () {
  const servers = [];
  afterEach(async function () {
    await Promise.all(servers.splice(0).map(closeServer));
  });

  // The listener stores the session 100 ms later, then calls back; what the
  // client sees must come after that.
  async function check(extra, clientEvent) {
    const { server, port } = await startServer(extra);
    servers.push(server);
    const order = [];
    server.on('newSession', (id, data, cb) => {
      setTimeout(() => {
        order.push('stored');
        cb();
      }, 100);
    });
    server.on('resumeSession', (id, cb) => cb(null, null));
    const client = tlswrap.connect(clientOptions(port));
    client.once(clientEvent, () => order.push(clientEvent));
    await once(client, clientEvent);
    client.end();
    await once(client, 'close');
    // (TLS 1.3: two tickets, two sessions stored.)
    assert.strictEqual(order[0], 'stored');
    assert.ok(order.includes(clientEvent));
  }

  it("TLS 1.2 session IDs: the client's 'secureConnect' comes after the session is stored", async function () {
    await check({ maxVersion: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET }, 'secureConnect');
  });

  it("TLS 1.3 stateful tickets: the client's 'session' comes after the session is stored", async function () {
    await check({ minVersion: 'TLSv1.3', secureOptions: SSL_OP_NO_TICKET }, 'session');
  });

  // node:tls's order: a TLS 1.2 server is not 'secure' until the session is
  // stored; TLS 1.3 sessions (tickets) come after the handshake, so there
  // 'secureConnection' does not wait.
  for (const [version, expected] of [
    ['TLSv1.2', ['newSession', 'stored', 'secureConnection', 'secureConnect']],
    ['TLSv1.3', ['secureConnect', 'secureConnection', 'newSession', 'newSession', 'stored', 'stored']],
  ]) {
    it(`${version}: the server's 'secureConnection' and the callback, in node:tls's order`, async function () {
      const { server, port } = await startServer({ maxVersion: version, secureOptions: SSL_OP_NO_TICKET });
      servers.push(server);
      const order = [];
      let stored = 0;
      const allStored = new Promise((resolve) => {
        server.on('newSession', (id, data, cb) => {
          order.push('newSession');
          setTimeout(() => {
            order.push('stored');
            cb();
            if (++stored === (version === 'TLSv1.2' ? 1 : 2)) resolve();
          }, 100);
        });
      });
      // Listeners, not promises: the order is of the events themselves.
      server.on('secureConnection', () => order.push('secureConnection'));
      const serverSide = once(server, 'secureConnection');
      const client = tlswrap.connect(clientOptions(port, { maxVersion: version }));
      client.on('secureConnect', () => order.push('secureConnect'));
      await Promise.all([once(client, 'secureConnect'), serverSide, allStored]);
      client.end();
      await once(client, 'close');
      assert.deepStrictEqual(order, expected);
    });
  }
});

describe('ticket key option checks', function () {
  it('setTicketKeys with a string throws ERR_INVALID_ARG_TYPE', function () {
    const server = tlswrap.createServer(serverOptions());
    assert.throws(() => server.setTicketKeys('x'.repeat(48)), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('setTicketKeys takes any ArrayBufferView (a DataView, a Uint16Array), as node:tls', function () {
    const server = tlswrap.createServer(serverOptions());
    const bytes = crypto.randomBytes(64);
    const keys = bytes.subarray(8, 56);
    server.setTicketKeys(new DataView(bytes.buffer, bytes.byteOffset + 8, 48));
    assert.deepStrictEqual(server.getTicketKeys(), keys);
    const other = crypto.randomFillSync(new Uint16Array(24));
    server.setTicketKeys(other);
    assert.deepStrictEqual(server.getTicketKeys(), Buffer.from(other.buffer));
  });
});

// tlswrap's own: several ticket keys (newest seals, all open) and automatic
// rotation of a server's own keys. node:tls takes exactly one key and never
// rotates, hence skipped under TLSWRAP_TEST_BUILTIN.
for (const version of ['TLSv1.2', 'TLSv1.3']) {
  (builtin ? describe.skip : describe)(`ticket key rotation, ${version}`, function () {
    const servers = [];
    async function start(extra) {
      const s = await startServer({ minVersion: version, maxVersion: version, ...extra });
      servers.push(s.server);
      return s;
    }
    afterEach(async function () {
      await Promise.all(servers.splice(0).map(closeServer));
    });

    // A connection offering `session`: whether it resumed, and the new
    // session it was given if any (a resumption under an older key brings a
    // ticket sealed with the newest: in TLS 1.2 inside the resumed session,
    // getSession(); in TLS 1.3 a 'session' after the handshake).
    async function resumeWith(port, session, wantNew = true) {
      const client = tlswrap.connect(clientOptions(port, { session }));
      const sessions = [];
      client.on('session', (s) => sessions.push(s));
      await once(client, 'secureConnect');
      const reused = client.isSessionReused();
      if (version === 'TLSv1.2') {
        const now = client.getSession();
        if (!now.equals(session)) sessions.push(now);
      }
      if (wantNew && reused) await until(() => sessions.length > 0);
      client.end();
      await once(client, 'close');
      return { reused, session: sessions[0] };
    }

    it('setTicketKeys(n*48 bytes): the newest seals, older ones still open; a key left out gives a full ' +
       'handshake, not an error', async function () {
      const [k1, k2, k3] = [crypto.randomBytes(48), crypto.randomBytes(48), crypto.randomBytes(48)];
      const { server, port } = await start({ ticketKeys: k1 });
      const underK1 = (await connectOnce(server, port)).sessions[0];
      server.setTicketKeys(Buffer.concat([k2, k1]));
      assert.ok(server.getTicketKeys().equals(k2), 'getTicketKeys() is the newest key (48 bytes, as node)');
      const resumed = await resumeWith(port, underK1);
      assert.strictEqual(resumed.reused, true);
      assert.ok(resumed.session, 'a ticket under an older key is reissued under the newest');
      server.setTicketKeys(Buffer.concat([k3, k2]));
      assert.strictEqual((await resumeWith(port, resumed.session, false)).reused, true);
      const dropped = await connectOnce(server, port, { session: underK1 });
      assert.strictEqual(dropped.reused, false);
    });

    it('ticketKeyRotation: a new key seals after the interval; tickets under the previous key still resume',
       async function () {
         const { server, port } = await start({ ticketKeyRotation: 0.1 });
         const before = server.getTicketKeys();
         const first = (await connectOnce(server, port)).sessions[0];
         await new Promise((resolve) => setTimeout(resolve, 150));
         const resumed = await resumeWith(port, first);
         assert.strictEqual(resumed.reused, true, 'a ticket under the rotated-out key resumes within its lifetime');
         const after = server.getTicketKeys();
         assert.ok(!after.equals(before), 'the key rotated');
         // The reissued ticket is sealed with the new key alone.
         server.setTicketKeys(after);
         assert.strictEqual((await resumeWith(port, resumed.session, false)).reused, true);
         assert.strictEqual((await connectOnce(server, port, { session: first })).reused, false);
       });

    it('a server given its keys (ticketKeys or setTicketKeys) does not rotate them', async function () {
      const keys = crypto.randomBytes(48);
      const { server, port } = await start({ ticketKeys: keys, ticketKeyRotation: 0.05 });
      await connectOnce(server, port);
      await new Promise((resolve) => setTimeout(resolve, 80));
      await connectOnce(server, port);
      assert.ok(server.getTicketKeys().equals(keys));
    });
  });
}

(builtin ? describe.skip : describe)('ticket key options', function () {
  it('ticketKeys and setTicketKeys take multiples of 48 bytes; ticketKeyRotation is seconds >= 0', function () {
    assert.throws(() => tlswrap.createServer(serverOptions({ ticketKeys: Buffer.alloc(50) })),
                  { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => tlswrap.createServer(serverOptions({ ticketKeyRotation: -1 })), { code: 'ERR_OUT_OF_RANGE' });
    // null, as undefined, is the default.
    tlswrap.createServer(serverOptions({ ticketKeyRotation: null }));
    tlswrap.createSecureContext({ ticketKeyRotation: null });
    const server = tlswrap.createServer(serverOptions({ ticketKeys: Buffer.alloc(96, 1) }));
    assert.throws(() => server.setTicketKeys(Buffer.alloc(47)), { code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => server.setTicketKeys(Buffer.alloc(0)), { code: 'ERR_INVALID_ARG_VALUE' });
    server.setTicketKeys(Buffer.alloc(144, 2));
    assert.ok(server.getTicketKeys().equals(Buffer.alloc(48, 2)));
  });

  // Counted natively in 64-bit nanoseconds: 1e12 s would overflow.
  it('ticketKeyRotation is at most 2**31 - 1 seconds; beyond, ERR_OUT_OF_RANGE', async function () {
    for (const ticketKeyRotation of [2 ** 31, 1e12, Infinity, NaN, -1]) {
      const expected = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
      assert.throws(() => tlswrap.createServer(serverOptions({ ticketKeyRotation })), expected);
      assert.throws(() => tlswrap.createSecureContext({ ticketKeyRotation }), expected);
    }
    const { server, port } = await startServer({ ticketKeyRotation: 2 ** 31 - 1 });
    try {
      const before = server.getTicketKeys();
      const first = await connectOnce(server, port);
      assert.strictEqual((await connectOnce(server, port, { session: first.sessions[0] })).reused, true);
      assert.ok(server.getTicketKeys().equals(before));
    } finally {
      await closeServer(server);
    }
  });
});

// node's cluster passes the first worker's _getServerData() to every other
// worker's _setServerData(): the workers then share their ticket keys, and a
// ticket one worker issued resumes on another.
for (const version of ['TLSv1.2', 'TLSv1.3']) {
  describe(`session resumption across servers and cluster workers, ${version}`, function () {
    it('_setServerData(other._getServerData()): a session from one server resumes on the other', async function () {
      const a = await startServer({ minVersion: version, maxVersion: version });
      const b = await startServer({ minVersion: version, maxVersion: version });
      try {
        const fromA = await connectOnce(a.server, a.port);
        assert.strictEqual((await connectOnce(b.server, b.port, { session: fromA.sessions[0] })).reused, false);
        b.server._setServerData(a.server._getServerData());
        const onB = await connectOnce(b.server, b.port, { session: fromA.sessions[0] });
        assert.strictEqual(onB.reused, true);
        assert.strictEqual(onB.serverReused, true);
      } finally {
        await Promise.all([closeServer(a.server), closeServer(b.server)]);
      }
    });

    it('cluster: two workers share ticket keys; a session from one resumes on the other', async function () {
      const { runChild, describeExit } = require('./run-child');
      const r = await runChild('cluster-tickets.js', [version]);
      assert.ok(r.result && !r.result.error, `${describeExit(r)}\n${r.stdout}`);
      assert.deepStrictEqual(r.result, {
        samePort: true, sameKeys: true, twoWorkers: true, gotSession: true, resumedOnOther: true,
      });
    });
  });
}

// Bare server sockets (new TLSSocket(raw, { isServer: true })) over contexts
// without a sessionIdContext: a session made where no client certificate
// was asked for, or verified under another `ca`, must not resume where one
// is required, as with node:tls (OpenSSL refuses to resume with client
// verification on and no session id context).
describe('bare server sockets asking for client certificates, no sessionIdContext', function () {
  const net = require('node:net');
  const servers = [];
  afterEach(async function () {
    for (const s of servers.splice(0)) await closeServer(s);
  });

  // A net.Server whose sockets become TLS sockets over `secureContext`;
  // `seen` gets what each one ended with.
  async function bareServer(secureContext, requestCert, seen) {
    const server = net.createServer((raw) => {
      const sock = new tlswrap.TLSSocket(raw, { isServer: true, secureContext, requestCert, rejectUnauthorized: requestCert });
      sock.on('error', (err) => seen.push({ error: err.code }));
      sock.on('secure', () => {
        seen.push({ secure: true, reused: sock.isSessionReused(), verifyError: sock._handle.verifyError() });
        sock.end('x');
      });
    });
    servers.push(server);
    return listen(server);
  }

  // Connects, reads to the end; resolves with the last session and whether
  // the handshake completed.
  function session(port, version, extra) {
    return new Promise((resolve) => {
      let last = null;
      const client = tlswrap.connect(clientOptions(port, { minVersion: version, maxVersion: version, ...extra }));
      client.on('session', (s) => { last = s; });
      client.on('error', () => {});
      client.resume();
      client.on('close', () => resolve(last));
    });
  }

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`${version}: a session from a socket that asked for no certificate does not pass one that requires it`,
      async function () {
        const context = tlswrap.createSecureContext({ ...serverOptions(), ca: fixtures.ca });
        const seenA = [];
        const seenB = [];
        const portA = await bareServer(context, false, seenA);
        const portB = await bareServer(context, true, seenB);
        const fromA = await session(portA, version);
        assert.ok(fromA, 'A gave the client a session');
        await session(portB, version, { session: fromA });
        assert.deepStrictEqual(seenB.filter((e) => e.secure), [], `B completed a handshake: ${JSON.stringify(seenB)}`);
      });

    it(`${version}: a certificate verified under one context's ca is not resumed as verified under another's`,
      async function () {
        const ticketKeys = crypto.randomBytes(48);
        const contextA = tlswrap.createSecureContext({ ...serverOptions(), ca: fixtures.ca, ticketKeys });
        const contextB = tlswrap.createSecureContext({ ...serverOptions(), ca: fixtures.selfSignedCert, ticketKeys });
        const seenA = [];
        const seenB = [];
        const portA = await bareServer(contextA, true, seenA);
        const portB = await bareServer(contextB, true, seenB);
        const withCert = { key: fixtures.clientKey, cert: fixtures.clientCert };
        const fromA = await session(portA, version, withCert);
        assert.strictEqual(seenA[0].verifyError, null, `A: ${JSON.stringify(seenA)}`);
        assert.ok(fromA, 'A gave the client a session');
        await session(portB, version, { ...withCert, session: fromA });
        // node:tls 1.2 refuses the handshake; 1.3 makes a full one that does
        // not verify. Either way B never calls the certificate verified.
        for (const e of seenB.filter((x) => x.secure)) {
          assert.strictEqual(e.reused, false, `B resumed: ${JSON.stringify(seenB)}`);
          assert.notStrictEqual(e.verifyError, null, `B verified: ${JSON.stringify(seenB)}`);
        }
      });
  }
});
