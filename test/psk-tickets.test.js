'use strict';

// Which TLS 1.3 resumptions a server that asks for client certificates and
// takes PSKs counts as authorized: a ticket is the server's own word on the
// handshake that sealed it, and only one sealed on a handshake whose client
// proved itself with a key pskCallback gave (test/psk.test.js) counts for a
// client that shows no certificate. These pin what may not: tickets from a
// client that proved nothing, changed tickets, a server without
// pskCallback, and a key OpenSSL asks for and then does not use. node:tls
// counts every certificate-less TLS 1.3 resumption, so this is tlswrap's
// alone (skipped under TLSWRAP_TEST_BUILTIN).

const assert = require('node:assert');
const crypto = require('node:crypto');
const nodeTls = require('node:tls');
const { builtin, tlswrap, fixtures, serverOptions, listen, closeServer } = require('./common');
const { resumeBehindIdentity } = require('./tls13-psk-client');

const KEY = Buffer.from('d731ef57be09e5204f0b205b60627028', 'hex');
const serverKnows = (socket, identity) => (identity === 'client1' ? KEY : null);
const clientSends = () => ({ psk: KEY, identity: 'client1' });

(builtin ? describe.skip : describe)('PSK: tickets that prove nothing', function () {
  const servers = [];
  afterEach(async function () {
    await Promise.all(servers.splice(0).map(closeServer));
  });

  const pskServer = (extra) => serverOptions({
    ca: fixtures.ca, requestCert: true, rejectUnauthorized: false, pskCallback: serverKnows,
    minVersion: 'TLSv1.3', ciphers: 'TLS_AES_128_GCM_SHA256', ...extra,
  });
  async function start(options) {
    const server = tlswrap.createServer(options, (sock) => sock.end('x'));
    servers.push(server);
    return { server, port: await listen(server) };
  }
  async function connectOnce(server, clientOpts) {
    const judged = new Promise((resolve) => server.once('secureConnection', (sock) => resolve({
      reused: sock.isSessionReused(), authorized: sock.authorized,
    })));
    const client = tlswrap.connect({ host: '127.0.0.1', rejectUnauthorized: false, ...clientOpts });
    let session = null;
    let ticket = null;
    client.on('session', (s) => {
      session = s;
      ticket = client.getTLSTicket();
    });
    client.on('data', () => {});
    client.on('error', () => {});
    await new Promise((resolve) => client.on('close', resolve));
    const verdict = await Promise.race([judged, new Promise((resolve) => setTimeout(resolve, 200, null))]);
    return { session, ticket, server: verdict };
  }

  it('a ticket from a client that showed nothing, offered with a key the server knows', async function () {
    const { server, port } = await start(pskServer());
    const first = await connectOnce(server, { port });
    assert.deepStrictEqual(first.server, { reused: false, authorized: false });
    const again = await connectOnce(server, { port, session: first.session, pskCallback: clientSends });
    assert.deepStrictEqual(again.server, { reused: true, authorized: false });
  });

  // OpenSSL asks pskCallback for the first identity, then drops the key
  // it gave (a SHA-256 key, the suite chosen hashes with SHA-384) and
  // takes the next identity, the ticket, whose binder is the only one it
  // checks: the key given proves nothing. OpenSSL's client puts its ticket
  // first, so a scripted client offers them.
  it('a ticket from a client that showed nothing, behind a known identity whose key goes unused',
    async function () {
      const asked = [];
      const { server, port } = await start(pskServer({
        ciphers: 'TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256',
        pskCallback: (socket, identity) => { asked.push(identity); return serverKnows(socket, identity); },
      }));
      const first = await connectOnce(server, { port, servername: 'localhost', ciphers: 'TLS_AES_256_GCM_SHA384' });
      assert.deepStrictEqual(first.server, { reused: false, authorized: false });
      const judged = new Promise((resolve) => server.once('secureConnection', (sock) => resolve({
        reused: sock.isSessionReused(), authorized: sock.authorized,
      })));
      const selected = await resumeBehindIdentity(port, 'localhost', first.session, 'client1');
      assert.strictEqual(selected, 1);
      assert.deepStrictEqual(await judged, { reused: true, authorized: false });
      // OpenSSL asks pskCallback about the ticket too when it is short
      // enough to be an identity (PSK_MAX_IDENTITY_LEN), which varies with
      // the session's random fields; that gets no key.
      assert.strictEqual(asked[0], 'client1');
      assert.ok(asked.length <= 2 && !asked.slice(1).includes('client1'), String(asked));
    });

  // The same, with a ticket sealed by a server that writes no tag into its
  // tickets: node:tls given the same ticketKeys and sessionIdContext (a
  // fleet moving from node:tls to tlswrap; an older tlswrap too). An
  // untagged session looks like the one OpenSSL made from pskCallback's key,
  // so the key it asked for and then dropped may not count.
  it('an untagged ticket from node:tls sharing the ticket keys, behind a known identity whose key goes unused',
    async function () {
      const ticketKeys = crypto.randomBytes(48);
      const sessionIdContext = 'fleet';
      const asked = [];
      const { server, port } = await start(pskServer({
        ticketKeys, sessionIdContext, ciphers: 'TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256',
        pskCallback: (socket, identity) => { asked.push(identity); return serverKnows(socket, identity); },
      }));
      const node = nodeTls.createServer(serverOptions({ ticketKeys, sessionIdContext, minVersion: 'TLSv1.3' }),
                                        (sock) => sock.end('x'));
      servers.push(node);
      const nodePort = await listen(node);
      // node:tls's ticket resumes here, a client that shows nothing else not
      // authorized: without SNI under node:tls 20 (its session id context
      // is the sessionIdContext as given, as tlswrap's without a name), with
      // SNI under 24 (both bind it to the name).
      let ticket = null;
      for (const servername of [undefined, 'localhost']) {
        const first = await connectOnce(node, { port: nodePort, servername, ciphers: 'TLS_AES_256_GCM_SHA384' });
        assert.deepStrictEqual(first.server, { reused: false, authorized: false });
        const plain = await connectOnce(server, { port, servername, session: first.session });
        assert.strictEqual(plain.server.authorized, false);
        if (plain.server.reused) {
          ticket = { session: first.session, servername: servername || null };
          break;
        }
      }
      assert.ok(ticket, 'no ticket of node:tls resumes at tlswrap');
      // (OpenSSL may have asked pskCallback about that ticket as an identity.)
      asked.length = 0;
      const judged = new Promise((resolve) => server.once('secureConnection', (sock) => resolve({
        reused: sock.isSessionReused(), authorized: sock.authorized,
      })));
      const selected = await resumeBehindIdentity(port, ticket.servername, ticket.session, 'client1');
      assert.strictEqual(selected, 1);
      assert.deepStrictEqual(await judged, { reused: true, authorized: false });
      assert.strictEqual(asked[0], 'client1');
    });

  it('a PSK client\'s ticket changed in flight: a full handshake, no certificate, not authorized',
    async function () {
      const { server, port } = await start(pskServer());
      const first = await connectOnce(server, { port, pskCallback: clientSends });
      assert.deepStrictEqual(first.server, { reused: true, authorized: true });
      const at = first.session.indexOf(first.ticket);
      assert.ok(at > 0);
      const forged = Buffer.from(first.session);
      forged[at + (first.ticket.length >> 1)] ^= 1;
      const unknown = () => ({ psk: KEY, identity: 'nobody' });
      for (const opts of [{}, { pskCallback: unknown }]) {
        const again = await connectOnce(server, { port, session: forged, ...opts });
        assert.deepStrictEqual(again.server, { reused: false, authorized: false });
      }
    });

  it('a PSK client\'s ticket at a server sharing the ticket keys that takes no PSKs', async function () {
    const ticketKeys = crypto.randomBytes(48);
    const { server, port } = await start(pskServer({ ticketKeys }));
    const other = await start(pskServer({ ticketKeys, pskCallback: undefined }));
    const first = await connectOnce(server, { port, pskCallback: clientSends });
    assert.deepStrictEqual(first.server, { reused: true, authorized: true });
    const again = await connectOnce(other.server, { port: other.port, session: first.session });
    assert.deepStrictEqual(again.server, { reused: true, authorized: false });
  });
});
