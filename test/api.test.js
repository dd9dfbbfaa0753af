'use strict';

// The TLSSocket query API on a connected pair, both sides: certificates, cipher,
// protocol, session, Finished messages, keying material, ALPN/SNI, ephemeral
// key, shared sigalgs, setMaxSendFragment. Values are checked against what
// node:tls itself reports for the same connection shape (a node:tls pair made
// alongside), so they hold whatever OpenSSL the running node has.

const assert = require('node:assert');
const net = require('node:net');
const tls = require('node:tls');
const { X509Certificate } = require('node:crypto');
const { once } = require('node:events');
const { builtin, fixture, fixtures, tlswrap, serverOptions, clientOptions, listen, closeServer } = require('./common');

const legacy = (pem) => new X509Certificate(pem).toLegacyObject();
const hexPairs = (n) => new RegExp(`^([0-9A-F]{2}:){${n - 1}}[0-9A-F]{2}$`);
const certDate = /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} GMT$/;

// A server + client of implementation `impl`, both sides secure.
async function makePair(impl, version, extraServer = {}, extraClient = {}) {
  const server = impl.createServer(serverOptions({
    requestCert: true, ca: fixtures.ca, ALPNProtocols: ['h2', 'http/1.1'],
    minVersion: version, maxVersion: version, ...extraServer,
  }));
  const serverSide = once(server, 'secureConnection');
  const port = await listen(server);
  const client = impl.connect(clientOptions(port, {
    key: fixtures.clientKey, cert: fixtures.clientCert, ALPNProtocols: ['http/1.1'], ...extraClient,
  }));
  // Wait for a session too: in TLS 1.3 the ticket comes after the handshake.
  const session = once(client, 'session');
  await once(client, 'secureConnect');
  const [sock] = await serverSide;
  await session;
  return { server, client, sock };
}

async function closePair(pair) {
  if (!pair) return;
  pair.client.destroy();
  pair.sock.destroy();
  await closeServer(pair.server);
}

for (const version of ['TLSv1.2', 'TLSv1.3']) {
  describe(`api on a connected pair, ${version}`, function () {
    let pair, ref;
    before(async function () {
      pair = await makePair(tlswrap, version);
      ref = await makePair(tls, version);
    });
    after(async function () {
      await closePair(pair);
      await closePair(ref);
    });

    it("client getPeerCertificate(): node's legacy certificate object of the server cert", function () {
      const cert = pair.client.getPeerCertificate();
      assert.deepStrictEqual(cert, legacy(fixtures.serverCert));
      // The fields one by one, as users read them.
      assert.strictEqual(Object.getPrototypeOf(cert.subject), null);
      assert.deepStrictEqual({ ...cert.subject }, { CN: 'localhost', O: 'tlswrap' });
      assert.deepStrictEqual({ ...cert.issuer }, { CN: 'tlswrap test CA', O: 'tlswrap' });
      assert.strictEqual(cert.subjectaltname, 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
      assert.strictEqual(cert.ca, false);
      assert.match(cert.valid_from, certDate);
      assert.match(cert.valid_to, certDate);
      assert.match(cert.fingerprint, hexPairs(20));
      assert.match(cert.fingerprint256, hexPairs(32));
      assert.match(cert.fingerprint512, hexPairs(64));
      assert.match(cert.serialNumber, /^[0-9A-F]+$/);
      assert.ok(Buffer.isBuffer(cert.raw));
      assert.ok(cert.raw.equals(new X509Certificate(fixtures.serverCert).raw));
      assert.ok(Buffer.isBuffer(cert.pubkey));
      assert.strictEqual(cert.bits, 2048);
      assert.strictEqual(cert.exponent, '0x10001');
      assert.match(cert.modulus, /^[0-9A-F]{512}$/);
      assert.deepStrictEqual(cert.ext_key_usage, ['1.3.6.1.5.5.7.3.1']);
      // The fixtures carry no Authority Information Access: node then omits
      // infoAccess (Node 20) or leaves it undefined (Node 24).
      assert.strictEqual(cert.infoAccess, undefined);
      assert.ok(!('issuerCertificate' in cert));
      assert.deepStrictEqual(cert, ref.client.getPeerCertificate());
    });

    it('server getPeerCertificate(): the client cert (clientAuth, email SAN)', function () {
      const cert = pair.sock.getPeerCertificate();
      assert.deepStrictEqual(cert, legacy(fixtures.clientCert));
      assert.strictEqual(cert.subject.CN, 'tlswrap client');
      assert.strictEqual(cert.subjectaltname, 'email:client@tlswrap.invalid');
      assert.deepStrictEqual(cert.ext_key_usage, ['1.3.6.1.5.5.7.3.2']);
    });

    it('getPeerCertificate(true): issuerCertificate chain, the root refers to itself', function () {
      for (const [sock, leafPem] of [[pair.client, fixtures.serverCert], [pair.sock, fixtures.clientCert]]) {
        const leaf = sock.getPeerCertificate(true);
        const { issuerCertificate: root, ...leafFields } = leaf;
        assert.deepStrictEqual(leafFields, legacy(leafPem));
        assert.ok(root, 'issuerCertificate present');
        const { issuerCertificate: rootIssuer, ...rootFields } = root;
        assert.deepStrictEqual(rootFields, legacy(fixtures.ca));
        assert.strictEqual(root.ca, true);
        assert.strictEqual(rootIssuer, root);
      }
    });

    it('getCertificate(): our own certificate on each side', function () {
      assert.deepStrictEqual(pair.client.getCertificate(), legacy(fixtures.clientCert));
      assert.deepStrictEqual(pair.sock.getCertificate(), legacy(fixtures.serverCert));
    });

    it('getPeerX509Certificate() / getX509Certificate() are X509Certificate objects', function () {
      const peer = pair.client.getPeerX509Certificate();
      assert.ok(peer instanceof X509Certificate);
      assert.strictEqual(peer.subject, 'CN=localhost\nO=tlswrap');
      assert.strictEqual(pair.client.getX509Certificate().subject, 'CN=tlswrap client\nO=tlswrap');
      assert.strictEqual(pair.sock.getPeerX509Certificate().subject, 'CN=tlswrap client\nO=tlswrap');
      assert.strictEqual(pair.sock.getX509Certificate().subject, 'CN=localhost\nO=tlswrap');
    });

    it('getCipher(): {name, standardName, version}, same on both sides and as node picks', function () {
      const cipher = pair.client.getCipher();
      assert.deepStrictEqual(Object.keys(cipher).sort(), ['name', 'standardName', 'version']);
      assert.strictEqual(cipher.version, version);
      assert.deepStrictEqual(pair.sock.getCipher(), cipher);
      assert.deepStrictEqual(cipher, ref.client.getCipher());
      if (version === 'TLSv1.3') assert.strictEqual(cipher.standardName, cipher.name);
      else assert.match(cipher.standardName, /^TLS_ECDHE_RSA_WITH_/);
    });

    it('getProtocol()', function () {
      assert.strictEqual(pair.client.getProtocol(), version);
      assert.strictEqual(pair.sock.getProtocol(), version);
    });

    it('getSession(), getTLSTicket(), isSessionReused() on a fresh connection', function () {
      assert.ok(Buffer.isBuffer(pair.client.getSession()));
      assert.ok(Buffer.isBuffer(pair.sock.getSession()));
      assert.ok(Buffer.isBuffer(pair.client.getTLSTicket()));
      assert.strictEqual(pair.sock.getTLSTicket(), undefined);
      assert.strictEqual(pair.client.isSessionReused(), false);
      assert.strictEqual(pair.sock.isSessionReused(), false);
    });

    it("getFinished()/getPeerFinished(): one side's Finished is the other's peer Finished", function () {
      const { client, sock } = pair;
      for (const b of [client.getFinished(), client.getPeerFinished(), sock.getFinished(), sock.getPeerFinished()]) {
        assert.ok(Buffer.isBuffer(b));
        // verify_data: 12 bytes in TLS 1.2, the transcript hash length in 1.3.
        assert.strictEqual(b.length, ref.client.getFinished().length);
      }
      assert.strictEqual(client.getFinished().length, version === 'TLSv1.2' ? 12 : 48);
      assert.ok(client.getFinished().equals(sock.getPeerFinished()));
      assert.ok(client.getPeerFinished().equals(sock.getFinished()));
      assert.ok(!client.getFinished().equals(client.getPeerFinished()));
    });

    it('exportKeyingMaterial(length, label, context): equal on both ends', function () {
      const { client, sock } = pair;
      const ctx = Buffer.from('context bytes');
      const a = client.exportKeyingMaterial(64, 'EXPORTER-tlswrap-test', ctx);
      const b = sock.exportKeyingMaterial(64, 'EXPORTER-tlswrap-test', ctx);
      assert.ok(Buffer.isBuffer(a));
      assert.strictEqual(a.length, 64);
      assert.ok(a.equals(b));
      assert.ok(client.exportKeyingMaterial(16, 'no-context').equals(sock.exportKeyingMaterial(16, 'no-context')));
      assert.ok(!a.subarray(0, 32).equals(client.exportKeyingMaterial(32, 'EXPORTER-other', ctx)));
      assert.throws(() => client.exportKeyingMaterial(), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
      assert.throws(() => client.exportKeyingMaterial(10, 5), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
      assert.throws(() => client.exportKeyingMaterial(10, 'a', 'ctx'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
      assert.throws(() => client.exportKeyingMaterial(0, 'a'), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    });

    it('alpnProtocol, servername, encrypted, authorized', function () {
      const { client, sock } = pair;
      assert.strictEqual(client.alpnProtocol, 'http/1.1');
      assert.strictEqual(sock.alpnProtocol, 'http/1.1');
      assert.strictEqual(sock.servername, 'localhost');
      assert.strictEqual(client.servername, 'localhost');
      assert.strictEqual(client.encrypted, true);
      assert.strictEqual(sock.encrypted, true);
      assert.strictEqual(client.authorized, true);
      assert.strictEqual(sock.authorized, true);
      assert.strictEqual(client.authorizationError, null);
      assert.strictEqual(sock.authorizationError, null);
    });

    it('getEphemeralKeyInfo(): the key exchange on the client, null on the server', function () {
      const info = pair.client.getEphemeralKeyInfo();
      assert.deepStrictEqual(info, ref.client.getEphemeralKeyInfo());
      // OpenSSL 3.0 (Node 20) agrees on X25519; 3.5 on a hybrid post-quantum
      // group, which Node 24.19+ reports as a TLSGroup without a size (older
      // ones as {} or with the keys undefined: checked against node above).
      if (/^3\.[0-4]\./.test(process.versions.openssl)) {
        assert.deepStrictEqual(info, { type: 'ECDH', name: 'X25519', size: 253 });
      } else if (info.type !== undefined) {
        assert.ok(typeof info.name === 'string' && info.name.length > 0, JSON.stringify(info));
      }
      assert.strictEqual(pair.sock.getEphemeralKeyInfo(), null);
    });

    it('getSharedSigalgs(): same lists as node gives on each side', function () {
      for (const [mine, theirs] of [[pair.client, ref.client], [pair.sock, ref.sock]]) {
        const algs = mine.getSharedSigalgs();
        assert.ok(Array.isArray(algs));
        assert.ok(algs.every((a) => typeof a === 'string' && /^[\w-]+\+\w+$/.test(a)), algs.join());
        assert.ok(algs.includes('RSA-PSS+SHA256'));
        assert.deepStrictEqual(algs, theirs.getSharedSigalgs());
      }
    });

    it('setMaxSendFragment(): true in [512, 16384], false outside, TypeError for non-numbers', function () {
      const { client, sock } = pair;
      assert.strictEqual(client.setMaxSendFragment(512), true);
      assert.strictEqual(sock.setMaxSendFragment(16384), true);
      assert.strictEqual(client.setMaxSendFragment(511), false);
      assert.strictEqual(client.setMaxSendFragment(16385), false);
      assert.throws(() => client.setMaxSendFragment('1024'),
        { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /"size" argument must be of type number/ });
      assert.strictEqual(client.setMaxSendFragment(16384), true);
    });

    it('data still flows both ways after all those calls (small fragments too)', async function () {
      const { client, sock } = pair;
      sock.setMaxSendFragment(512);
      const payload = Buffer.alloc(5000, 7);
      sock.write(payload);
      const got = [];
      let n = 0;
      await new Promise((resolve) => {
        const onData = (d) => {
          got.push(d);
          n += d.length;
          if (n >= payload.length) {
            client.off('data', onData);
            resolve();
          }
        };
        client.on('data', onData);
      });
      assert.ok(Buffer.concat(got).equals(payload));
      client.write('back');
      const [d] = await once(sock, 'data');
      assert.strictEqual(d.toString(), 'back');
    });
  });
}

describe('api: other connection shapes', function () {
  it("TLS 1.2 CBC cipher: getCipher().version is the cipher's, 'TLSv1.0', as node reports", async function () {
    const pair = await makePair(tlswrap, 'TLSv1.2', { ciphers: 'ECDHE-RSA-AES128-SHA' });
    try {
      assert.deepStrictEqual(pair.client.getCipher(), {
        name: 'ECDHE-RSA-AES128-SHA', standardName: 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', version: 'TLSv1.0',
      });
      assert.strictEqual(pair.client.getProtocol(), 'TLSv1.2');
    } finally {
      await closePair(pair);
    }
  });

  it('getPeerX509Certificate(): issuerCertificate is the next certificate the peer sent', async function () {
    // The server sends its leaf and the intermediate CA; the client its leaf,
    // to which OpenSSL adds the CA it is under (the client trusts that CA).
    const interChain = Buffer.concat([fixture('inter-leaf-cert.pem'), fixture('inter-ca-cert.pem')]);
    const pair = await makePair(tlswrap, 'TLSv1.3', { key: fixture('inter-leaf-key.pem'), cert: interChain });
    try {
      const cn = (x) => x.subject.split('\n').find((l) => l.startsWith('CN='));
      const leaf = pair.client.getPeerX509Certificate();
      assert.ok(leaf instanceof X509Certificate);
      assert.strictEqual(cn(leaf), 'CN=localhost');
      assert.ok(leaf.issuerCertificate instanceof X509Certificate);
      assert.strictEqual(cn(leaf.issuerCertificate), 'CN=tlswrap test intermediate CA');
      assert.strictEqual(leaf.issuerCertificate.issuerCertificate, undefined);
      assert.ok(leaf.checkIssued(leaf.issuerCertificate));
      const client = pair.sock.getPeerX509Certificate();
      assert.strictEqual(cn(client), 'CN=tlswrap client');
      assert.strictEqual(cn(client.issuerCertificate), 'CN=tlswrap test CA');
      // A certificate made from bytes has none.
      assert.strictEqual(new X509Certificate(fixtures.serverCert).issuerCertificate, undefined);
    } finally {
      await closePair(pair);
    }
  });

  // A chain that did not verify: as node:tls links it, each certificate's
  // issuerCertificate is the first certificate sent that issued it (by name
  // and key identifier), never an unrelated one, each used once.
  for (const [what, certs, expected] of [
    ['a self-signed leaf sent with an unrelated certificate', ['selfsigned-cert.pem', 'other-cert.pem'],
      ['localhost']],
    ['a leaf sent with an unrelated certificate and its CA twice', ['server-cert.pem', 'other-cert.pem', 'ca-cert.pem',
      'ca-cert.pem'], ['localhost', 'tlswrap test CA', 'tlswrap test CA']],
    ['a leaf sent with an unrelated certificate only', ['server-cert.pem', 'other-cert.pem'], ['localhost']],
  ]) {
    it(`getPeerCertificate(true), not verified, ${what}: linked by issuer, not by order`, async function () {
      const key = certs[0] === 'selfsigned-cert.pem' ? fixtures.selfSignedKey : fixtures.serverKey;
      const server = tlswrap.createServer({ key, cert: Buffer.concat(certs.map((f) => fixture(f))) }, (s) => s.end());
      const port = await listen(server);
      try {
        // Trusting an unrelated certificate: nothing verifies.
        const client = tlswrap.connect(clientOptions(port, { ca: fixtures.otherCert, rejectUnauthorized: false }));
        await once(client, 'secureConnect');
        assert.strictEqual(client.authorized, false);
        const names = [];
        let cert = client.getPeerCertificate(true);
        for (; names.length < 10; cert = cert.issuerCertificate) {
          names.push(cert.subject.CN);
          if (!cert.issuerCertificate || cert.issuerCertificate === cert) break;
        }
        assert.deepStrictEqual(names, expected);
        // A chain ends in a self-signed certificate linked to itself, else
        // without an issuer.
        const selfSigned = cert.subject.CN === cert.issuer.CN && cert.subject.O === cert.issuer.O;
        assert.strictEqual(cert.issuerCertificate === cert, selfSigned);
        if (!selfSigned) assert.strictEqual(cert.issuerCertificate, undefined);
        client.destroy();
      } finally {
        await closeServer(server);
      }
    });
  }

  // Before any handshake the client has no session, which OpenSSL 3.0's
  // group query reads through (tlswrap crashed there on Node 20; node:tls 24
  // and 26 crash there still, so this is tlswrap's alone).
  it('getEphemeralKeyInfo() before the handshake: nothing known, no crash', async function () {
    if (builtin) this.skip();
    const server = tlswrap.createServer(serverOptions());
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      client.on('error', () => {});
      const before = client.getEphemeralKeyInfo();
      assert.strictEqual(before.type, undefined);
      assert.strictEqual(before.name, undefined);
      await once(client, 'secureConnect');
      // After it, what this Node's OpenSSL names (see the tests below).
      assert.strictEqual(typeof client.getEphemeralKeyInfo(), 'object');
      client.destroy();
    } finally {
      await closeServer(server);
    }
  });

  it('RSA key exchange: getEphemeralKeyInfo() is {}', async function () {
    const pair = await makePair(tlswrap, 'TLSv1.2', { ciphers: 'AES256-SHA256' });
    try {
      // {} on Node 20; Node 24 spells it with the keys present but undefined.
      const info = pair.client.getEphemeralKeyInfo();
      assert.strictEqual(info.type, undefined);
      assert.strictEqual(info.name, undefined);
      assert.strictEqual(info.size, undefined);
      const ref = await makePair(tls, 'TLSv1.2', { ciphers: 'AES256-SHA256' });
      try {
        assert.deepStrictEqual(info, ref.client.getEphemeralKeyInfo());
      } finally {
        await closePair(ref);
      }
      assert.strictEqual(pair.client.getCipher().standardName, 'TLS_RSA_WITH_AES_256_CBC_SHA256');
    } finally {
      await closePair(pair);
    }
  });

  it('resumed TLS 1.2 connection: getEphemeralKeyInfo() as node:tls gives it', async function () {
    // No key exchange on resumption: Node 20, 22 and early 24 give {}, later
    // ones name the group the session had ({ type: 'TLSGroup', name }).
    async function resumedKeyInfo(impl) {
      const server = impl.createServer(serverOptions({ maxVersion: 'TLSv1.2' }), (s) => s.end('x'));
      const port = await listen(server);
      const infos = [];
      let session;
      try {
        for (let i = 0; i < 2; i++) {
          const client = impl.connect(clientOptions(port, { maxVersion: 'TLSv1.2', session }));
          client.on('session', (s) => { session = s; });
          await once(client, 'secureConnect');
          infos.push({ reused: client.isSessionReused(), info: client.getEphemeralKeyInfo() });
          client.resume();
          await once(client, 'close');
        }
      } finally {
        await closeServer(server);
      }
      return infos;
    }
    const mine = await resumedKeyInfo(tlswrap);
    const theirs = await resumedKeyInfo(tls);
    assert.deepStrictEqual(mine.map((c) => c.reused), [false, true]);
    assert.deepStrictEqual(mine, theirs);
  });

  it('TLS 1.3 CHACHA20 over P-256: cipher, key info, 32-byte Finished', async function () {
    const pair = await makePair(tlswrap, 'TLSv1.3', { ciphers: 'TLS_CHACHA20_POLY1305_SHA256', ecdhCurve: 'P-256' });
    try {
      assert.deepStrictEqual(pair.client.getCipher(), {
        name: 'TLS_CHACHA20_POLY1305_SHA256', standardName: 'TLS_CHACHA20_POLY1305_SHA256', version: 'TLSv1.3',
      });
      assert.deepStrictEqual(pair.client.getEphemeralKeyInfo(), { type: 'ECDH', name: 'prime256v1', size: 256 });
      assert.strictEqual(pair.client.getFinished().length, 32);
    } finally {
      await closePair(pair);
    }
  });

  it('no ALPN on either side: alpnProtocol is false on both', async function () {
    const pair = await makePair(tlswrap, 'TLSv1.3', { ALPNProtocols: undefined }, { ALPNProtocols: undefined });
    try {
      assert.strictEqual(pair.client.alpnProtocol, false);
      assert.strictEqual(pair.sock.alpnProtocol, false);
    } finally {
      await closePair(pair);
    }
  });

  it('after close the getters return null', async function () {
    const pair = await makePair(tlswrap, 'TLSv1.3');
    const { client } = pair;
    client.end();
    await once(client, 'close');
    try {
      assert.strictEqual(client.getPeerCertificate(), null);
      assert.strictEqual(client.getCertificate(), null);
      assert.strictEqual(client.getCipher(), null);
      assert.strictEqual(client.getProtocol(), null);
      assert.strictEqual(client.getSession(), null);
      assert.strictEqual(client.getTLSTicket(), null);
      assert.strictEqual(client.isSessionReused(), null);
      assert.strictEqual(client.getFinished(), null);
      assert.strictEqual(client.getPeerFinished(), null);
      assert.strictEqual(client.getEphemeralKeyInfo(), null);
      assert.strictEqual(client.getSharedSigalgs(), null);
      // Negotiated facts stay readable.
      assert.strictEqual(client.alpnProtocol, 'http/1.1');
      assert.strictEqual(client.authorized, true);
      assert.strictEqual(client.encrypted, true);
    } finally {
      await closePair(pair);
    }
  });
});

describe('api: a handshake OpenSSL fails', function () {
  // node:tls keeps the handle through the failure's 'error' and
  // 'tlsClientError': what was negotiated before the alert (the version,
  // the server's certificate, the cipher) is what a program logs there.
  it("the sockets still answer in 'error' and 'tlsClientError', and no more after 'close'", async function () {
    const server = tlswrap.createServer(serverOptions({ requestCert: true, ca: fixtures.ca, maxVersion: 'TLSv1.2' }));
    const serverSaw = new Promise((resolve) => {
      server.once('tlsClientError', (err, sock) => {
        const seen = { code: err.code, protocol: sock.getProtocol(), reused: sock.isSessionReused() };
        // node:tls 20 crashes (SIGSEGV) when asked after a failed handshake's
        // 'close'; tlswrap answers as for any closed socket.
        sock.once('close', () => resolve(builtin ? seen : { ...seen, afterClose: sock.getProtocol() }));
      });
    });
    const port = await listen(server);
    try {
      // No client certificate: the server refuses with an alert once it
      // has sent its whole flight.
      const client = tlswrap.connect(clientOptions(port));
      const closed = new Promise((resolve) => client.once('close', resolve));
      const [err] = await once(client, 'error').catch((e) => [e]);
      assert.match(err.code, /^ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_HANDSHAKE_FAILURE$/); // OpenSSL 3.0 | 3.2+
      assert.strictEqual(client.getProtocol(), 'TLSv1.2');
      assert.strictEqual(client.getPeerCertificate().subject.CN, 'localhost');
      assert.strictEqual(typeof client.getCipher().name, 'string');
      assert.strictEqual(client.getEphemeralKeyInfo().type, 'ECDH');
      assert.strictEqual(client.isSessionReused(), false);
      await closed;
      const srv = await serverSaw;
      const expected = { code: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE', protocol: 'TLSv1.2', reused: false };
      assert.deepStrictEqual(srv, builtin ? expected : { ...expected, afterClose: null });
      if (!builtin) {
        assert.strictEqual(client.getProtocol(), null);
        assert.strictEqual(client.getPeerCertificate(), null);
      }
    } finally {
      await closeServer(server);
    }
  });
});

describe('api: before the handshake', function () {
  it('exportKeyingMaterial before the handshake: ERR_TLS_INVALID_STATE', async function () {
    const server = tlswrap.createServer(serverOptions());
    const notYet = { code: 'ERR_TLS_INVALID_STATE', message: 'TLS socket connection must be securely established' };
    const secure = once(server, 'secureConnection');
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    const clientSecure = once(client, 'secureConnect');
    try {
      assert.throws(() => client.exportKeyingMaterial(16, 'EXPORTER-test'), notYet);
      const [sock] = await secure;
      await clientSecure;
      assert.strictEqual(client.exportKeyingMaterial(16, 'EXPORTER-test').length, 16);
      assert.deepStrictEqual(sock.exportKeyingMaterial(16, 'EXPORTER-test'), client.exportKeyingMaterial(16, 'EXPORTER-test'));
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });
});

describe('api: module surface', function () {
  it("exports node:tls's public names with node's values", function () {
    for (const name of ['connect', 'createServer', 'createSecureContext', 'checkServerIdentity', 'getCiphers']) {
      assert.strictEqual(typeof tlswrap[name], 'function', name);
    }
    assert.strictEqual(typeof tlswrap.Server, 'function');
    assert.strictEqual(typeof tlswrap.TLSSocket, 'function');
    assert.deepStrictEqual(tlswrap.getCiphers(), tls.getCiphers());
    for (const name of ['DEFAULT_MIN_VERSION', 'DEFAULT_MAX_VERSION', 'DEFAULT_ECDH_CURVE', 'DEFAULT_CIPHERS',
      'CLIENT_RENEG_LIMIT', 'CLIENT_RENEG_WINDOW']) {
      assert.strictEqual(tlswrap[name], tls[name], name);
      assert.strictEqual(Object.getOwnPropertyDescriptor(tlswrap, name).enumerable, true, name);
    }
    assert.deepStrictEqual(tlswrap.rootCertificates, tls.rootCertificates);
  });

  it('createServer() gives a tlswrap.Server, itself a net.Server; connect() a tlswrap.TLSSocket', async function () {
    const server = tlswrap.createServer(serverOptions());
    assert.ok(server instanceof tlswrap.Server);
    assert.ok(server instanceof net.Server);
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      assert.ok(client instanceof tlswrap.TLSSocket);
      await once(client, 'secureConnect');
      client.destroy();
    } finally {
      await closeServer(server);
    }
  });

  it('new Server(options, listener) registers the listener for secureConnection', async function () {
    let got = 0;
    const server = new tlswrap.Server(serverOptions(), (sock) => { got++; sock.end(); });
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      client.resume();
      await once(client, 'close');
      assert.strictEqual(got, 1);
    } finally {
      await closeServer(server);
    }
  });

  it('Server(options, listener) without new: a Server, a subclass of it works too', async function () {
    let got = 0;
    const server = tlswrap.Server(serverOptions(), (sock) => { got++; sock.end(); });
    assert.ok(server instanceof tlswrap.Server);
    assert.ok(server instanceof net.Server);
    assert.strictEqual(server.constructor, tlswrap.Server);
    class MyServer extends tlswrap.Server {}
    const mine = new MyServer(serverOptions());
    assert.ok(mine instanceof MyServer && mine instanceof tlswrap.Server);
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      client.resume();
      await once(client, 'close');
      assert.strictEqual(got, 1);
    } finally {
      await closeServer(server);
    }
  });
});

// Every name node:tls has on the running Node, tlswrap has too (names differ
// between Node versions, so the list is read, not written down).
describe('api: the names of node:tls', function () {
  // Own and inherited names of C.prototype, up to (not including) Base's.
  function protoNames(C, Base) {
    const names = new Set();
    for (let p = C.prototype; p && p !== Base.prototype; p = Object.getPrototypeOf(p)) {
      for (const key of Object.getOwnPropertyNames(p)) names.add(key);
    }
    return names;
  }
  // node's TLSSocket plumbing around its own native handle: no documented
  // contract, nothing a user calls; tlswrap's handle is driven differently.
  const nodeInternals = new Set(['_wrapHandle', '_init', '_destroySSL', '_handleTimeout', '_tlsError',
    '_releaseControl', '_finishInit']);

  // What tlswrap adds to node:tls's names.
  const additions = builtin ? [] : ['SessionCache'];

  it("the module's names are node:tls's and tlswrap's additions, no more, no fewer", function () {
    assert.deepStrictEqual(Object.keys(tlswrap).sort(), [...Object.keys(tls), ...additions].sort());
    for (const name of Object.keys(tls)) {
      assert.strictEqual(typeof tlswrap[name], typeof tls[name], name);
    }
  });

  it("TLSSocket.prototype has node's methods (up to net.Socket's)", function () {
    const missing = [...protoNames(tls.TLSSocket, net.Socket)]
      .filter((name) => !(name in tlswrap.TLSSocket.prototype) && !nodeInternals.has(name));
    assert.deepStrictEqual(missing, []);
    assert.ok(tlswrap.TLSSocket.prototype instanceof net.Socket);
  });

  it("Server.prototype has node's methods (up to net.Server's)", function () {
    const missing = [...protoNames(tls.Server, net.Server)].filter((name) => !(name in tlswrap.Server.prototype));
    assert.deepStrictEqual(missing, []);
  });

  it('server._getServerData()/_setServerData(): the ticket keys as hex', function () {
    const server = tlswrap.createServer(serverOptions());
    const keys = Buffer.alloc(48, 0xab);
    server._setServerData({ ticketKeys: keys.toString('hex') });
    assert.deepStrictEqual(server._getServerData(), { ticketKeys: keys.toString('hex') });
    assert.ok(server.getTicketKeys().equals(keys));
  });

  it('server.setOptions() (Node 20, DEP0122) updates requestCert for later connections', async function () {
    if (typeof tls.Server.prototype.setOptions !== 'function') this.skip();
    const server = tlswrap.createServer(serverOptions({ ca: fixtures.ca }));
    const warned = new Promise((resolve) => process.once('warning', resolve));
    server.setOptions({ requestCert: true, rejectUnauthorized: false });
    assert.strictEqual((await warned).code, 'DEP0122');
    const port = await listen(server);
    try {
      const serverSide = once(server, 'secureConnection');
      const client = tlswrap.connect(clientOptions(port, { key: fixtures.clientKey, cert: fixtures.clientCert }));
      await once(client, 'secureConnect');
      const [sock] = await serverSide;
      assert.strictEqual(sock.getPeerCertificate().subject.CN, 'tlswrap client');
      client.destroy();
    } finally {
      await closeServer(server);
    }
  });

  it("socket.setKeyCert(): a server socket serves the given context's certificate", async function () {
    const server = net.createServer();
    const port = await listen(server);
    let client, sock;
    try {
      const accepted = once(server, 'connection');
      client = tlswrap.connect(clientOptions(port, { servername: 'other.example' }));
      const [raw] = await accepted;
      sock = new tlswrap.TLSSocket(raw, {
        isServer: true, secureContext: tlswrap.createSecureContext(serverOptions()),
      });
      sock.setKeyCert({ key: fixtures.otherKey, cert: fixtures.otherCert });
      // An already made context is taken as is.
      sock.setKeyCert(tlswrap.createSecureContext({ key: fixtures.otherKey, cert: fixtures.otherCert }));
      await once(client, 'secureConnect');
      assert.strictEqual(client.getPeerCertificate().subject.CN, 'other.example');
      assert.strictEqual(client.authorized, true);
      // A client ignores it.
      client.setKeyCert({ key: fixtures.serverKey, cert: fixtures.serverCert });
    } finally {
      if (client) client.destroy();
      if (sock) sock.destroy();
      await closeServer(server);
    }
  });
});

// The package as ESM code imports it: every name as a named export, the
// module object as the default export.
describe('api: ESM import', function () {
  const { execFile } = require('node:child_process');
  const path = require('node:path');
  const root = path.join(__dirname, '..');

  // Runs `source` as an ES module in a child node, in the package's directory
  // (so 'tlswrap' resolves to this package through its exports map); resolves
  // with its last stdout line parsed as JSON.
  function runModule(source) {
    return new Promise((resolve, reject) => {
      execFile(process.execPath, ['--input-type=module', '-e', source], { cwd: root, timeout: 15000 },
        (err, stdout, stderr) => {
          if (err) return reject(new Error(`child failed: ${err.message}\n${stderr}`));
          const lines = stdout.trim().split('\n');
          resolve(JSON.parse(lines[lines.length - 1]));
        });
    });
  }
  const specifier = tlswrap === tls ? 'node:tls' : 'tlswrap';

  it("import * / import { ... } give every name of require(), with the same values", async function () {
    const result = await runModule(`
      import { createRequire } from 'node:module';
      import * as ns from '${specifier}';
      import tls, { TLSSocket, DEFAULT_MIN_VERSION, rootCertificates, connect, createServer } from '${specifier}';
      const cjs = createRequire(process.cwd() + '/')(${JSON.stringify(tlswrap === tls ? 'node:tls' : root)});
      const missing = Object.keys(cjs).filter((name) => !(name in ns));
      const differ = Object.keys(cjs).filter((name) => ns[name] !== cjs[name]);
      console.log(JSON.stringify({
        missing, differ, sameDefault: tls === cjs,
        named: [typeof TLSSocket, typeof DEFAULT_MIN_VERSION, Array.isArray(rootCertificates), typeof connect,
          typeof createServer],
      }));
    `);
    assert.deepStrictEqual(result, {
      missing: [], differ: [], sameDefault: true, named: ['function', 'string', true, 'function', 'function'],
    });
  });

  it('a write to DEFAULT_MIN_VERSION on the module object reaches the named export', async function () {
    // node:tls's bindings follow after syncBuiltinESMExports(); tlswrap's
    // follow at once (the call is a no-op for a package).
    const result = await runModule(`
      import { syncBuiltinESMExports } from 'node:module';
      import tls, { DEFAULT_MIN_VERSION, DEFAULT_CIPHERS } from '${specifier}';
      const before = DEFAULT_MIN_VERSION;
      tls.DEFAULT_MIN_VERSION = 'TLSv1.3';
      tls.DEFAULT_CIPHERS = 'TLS_AES_128_GCM_SHA256';
      syncBuiltinESMExports();
      console.log(JSON.stringify([before, DEFAULT_MIN_VERSION, DEFAULT_CIPHERS]));
    `);
    assert.deepStrictEqual(result, ['TLSv1.2', 'TLSv1.3', 'TLS_AES_128_GCM_SHA256']);
  });
});

describe('api: server captureRejections', function () {
  // As node:tls: with captureRejections (events.captureRejections; node's
  // tls.Server ignores the option), a rejected async 'secureConnection'
  // listener destroys that socket with the rejection; the server emits no
  // 'error'.
  it("a rejected async 'secureConnection' listener destroys that socket", async function () {
    const EventEmitter = require('node:events');
    const boom = new Error('listener rejected');
    EventEmitter.captureRejections = true;
    let server;
    try {
      server = tlswrap.createServer(serverOptions());
    } finally {
      EventEmitter.captureRejections = false;
    }
    const serverErrors = [];
    server.on('error', (err) => serverErrors.push(err));
    const destroyedWith = new Promise((resolve) => {
      server.on('secureConnection', async (sock) => {
        sock.on('error', (err) => resolve(err));
        throw boom;
      });
    });
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    client.on('error', () => {});
    try {
      const timeout = require('node:timers/promises').setTimeout(3000, 'the socket was not destroyed', { ref: false });
      assert.strictEqual(await Promise.race([destroyedWith, timeout]), boom);
      await new Promise((resolve) => client.once('close', resolve));
      assert.deepStrictEqual(serverErrors, []);
    } finally {
      client.destroy();
      await closeServer(server);
    }
  });
});
