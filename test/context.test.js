'use strict';

// createSecureContext and the context options of createServer/connect: key
// material in its forms, CAs, ciphers, protocol versions, curves, cipher
// order, secureOptions, and the `secureContext` option.

const assert = require('node:assert');
const crypto = require('node:crypto');
const { once } = require('node:events');
const nodeTls = require('node:tls');
const { builtin, fixture, fixtures, tlswrap, serverOptions, listen, closeServer } = require('./common');

const { SSL_OP_NO_TLSv1_3, SSL_OP_NO_TICKET } = crypto.constants;

// One handshake between a fresh tlswrap server and a tlswrap client; returns
// what each side reported. The client defaults to trusting the fixture CA.
async function handshake(serverOpts, clientOpts = {}, impl = tlswrap) {
  const server = impl.createServer(serverOpts);
  const out = { server: {}, client: {} };
  const serverDone = new Promise((resolve) => {
    server.once('secureConnection', (sock) => {
      sock.on('error', () => {});
      out.server.protocol = sock.getProtocol();
      out.server.cipher = sock.getCipher();
      resolve();
    });
    server.once('tlsClientError', (err) => {
      out.server.error = err;
      resolve();
    });
  });
  const port = await listen(server);
  try {
    const client = impl.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, ...clientOpts });
    await new Promise((resolve) => {
      client.on('secureConnect', () => {
        out.client.authorized = client.authorized;
        out.client.authorizationError = client.authorizationError;
        out.client.protocol = client.getProtocol();
        out.client.cipher = client.getCipher();
        out.client.keyInfo = client.getEphemeralKeyInfo();
        out.client.cn = client.getPeerCertificate().subject.CN;
        client.end();
      });
      client.on('error', (err) => {
        out.client.error = err;
      });
      client.resume();
      client.on('close', resolve);
    });
    await serverDone;
    return out;
  } finally {
    await closeServer(server);
  }
}

function assertOk(out, protocol) {
  assert.ifError(out.client.error);
  assert.ifError(out.server.error);
  assert.strictEqual(out.client.authorized, true);
  if (protocol) {
    assert.strictEqual(out.client.protocol, protocol);
    assert.strictEqual(out.server.protocol, protocol);
  }
}

describe("context: node:tls's checks of the options, word for word", function () {
  const net = require('node:net');
  const { serverKey: key, serverCert: cert } = fixtures;
  const outcome = (fn) => {
    try {
      fn();
    } catch (err) {
      return `${err.name} ${err.code}: ${err.message}`;
    }
    return 'ok';
  };
  const cases = [
    ['sessionTimeout not a number', (t) => t.createSecureContext({ sessionTimeout: 'abcd' })],
    ['sessionTimeout -1', (t) => t.createSecureContext({ sessionTimeout: -1 })],
    ['sessionTimeout 1.5', (t) => t.createSecureContext({ sessionTimeout: 1.5 })],
    ['sessionTimeout 2 ** 31', (t) => t.createSecureContext({ sessionTimeout: 2 ** 31 })],
    ['sessionTimeout 0', (t) => t.createSecureContext({ sessionTimeout: 0 })],
    ['ticketKeys a string', (t) => t.createSecureContext({ ticketKeys: 'abcd' })],
    ['ticketKeys a Uint8Array of 48', (t) => t.createSecureContext({ ticketKeys: new Uint8Array(48) })],
    ['sigalgs and ticketKeys null', (t) => t.createSecureContext({ sigalgs: null, ticketKeys: null })],
    ['passphrase a number, with a key', (t) => t.createSecureContext({ key, cert, passphrase: 1 })],
    ['passphrase a number, no key', (t) => t.createSecureContext({ passphrase: 1 })],
    ['clientCertEngine a number', (t) => t.createSecureContext({ clientCertEngine: 0 })],
    ['privateKeyEngine a number', (t) => t.createSecureContext({ privateKeyIdentifier: 'x', privateKeyEngine: 0 })],
    ['privateKeyIdentifier a number', (t) => t.createSecureContext({ privateKeyIdentifier: 0, privateKeyEngine: 'x' })],
    ['privateKeyIdentifier without an engine', (t) => t.createSecureContext({ privateKeyIdentifier: 'x' })],
    ['privateKeyIdentifier and a key', (t) => t.createSecureContext({ key, privateKeyIdentifier: 'x', privateKeyEngine: 'x' })],
    ['a PFX without its key', (t) => t.createSecureContext({ pfx: fixture('server-nokey.pfx'), passphrase: 'sesame' })],
    ['a PFX without a certificate', (t) => t.createSecureContext({ pfx: fixture('server-nocert.pfx'), passphrase: 'sesame' })],
    ['an ALPN name over 255 bytes', (t) => t.createServer({ ALPNProtocols: ['a', 'b'.repeat(300)] })],
    ['new TLSSocket, SNICallback a string', (t) => new t.TLSSocket(new net.Socket(), { isServer: true, SNICallback: 'x' })],
    ['new TLSSocket, SNICallback an object', (t) => new t.TLSSocket(new net.Socket(), { isServer: true, SNICallback: {} })],
    ['new TLSSocket, SNICallback false', (t) => new t.TLSSocket(new net.Socket(), { isServer: true, SNICallback: false })],
  ];
  for (const [what, fn] of cases) {
    it(what, function () {
      assert.strictEqual(outcome(() => fn(tlswrap)), outcome(() => fn(nodeTls)));
    });
  }

  it('an engine named: ERR_CRYPTO_CUSTOM_ENGINE_NOT_SUPPORTED (tlswrap has no engines)', function () {
    if (builtin) this.skip(); // node:tls tries to load the engine
    const noEngines = { code: 'ERR_CRYPTO_CUSTOM_ENGINE_NOT_SUPPORTED', message: 'Custom engines not supported by this OpenSSL' };
    assert.throws(() => tlswrap.createSecureContext({ clientCertEngine: 'dynamic' }), noEngines);
    assert.throws(() => tlswrap.createSecureContext({ privateKeyIdentifier: 'k', privateKeyEngine: 'dynamic' }), noEngines);
    assert.throws(() => tlswrap.createServer({ key, cert, clientCertEngine: 'dynamic' }), noEngines);
  });
});

describe('context: not for another thread', function () {
  // node:tls's SecureContext (native) cannot be cloned; tlswrap's says so
  // where Node can mark an object uncloneable (22.10 on). Sessions cross
  // threads as Buffers.
  it('structuredClone() of a SecureContext throws DataCloneError', function () {
    if (!builtin && typeof require('node:worker_threads').markAsUncloneable !== 'function') this.skip();
    const context = tlswrap.createSecureContext({});
    assert.throws(() => structuredClone(context), { name: 'DataCloneError' });
    assert.throws(() => structuredClone(context.context), { name: 'DataCloneError' });
  });
});

describe('context: key material', function () {
  it('createSecureContext({key, cert}) returns a context usable by a server (SNICallback) and connects', async function () {
    const ctx = tlswrap.createSecureContext({ key: fixtures.serverKey, cert: fixtures.serverCert });
    assert.strictEqual(typeof ctx, 'object');
    const out = await handshake(serverOptions({ SNICallback: (name, cb) => cb(null, ctx) }));
    assertOk(out);
    assert.strictEqual(out.client.cn, 'localhost');
  });

  it('pfx + passphrase (server option and createSecureContext)', async function () {
    assertOk(await handshake({ pfx: fixtures.serverPfx, passphrase: fixtures.passphrase }));
    const ctx = tlswrap.createSecureContext({ pfx: fixtures.serverPfx, passphrase: fixtures.passphrase });
    assertOk(await handshake(serverOptions({ SNICallback: (name, cb) => cb(null, ctx) })));
  });

  it('pfx in the { buf, passphrase } array form', async function () {
    assertOk(await handshake({ pfx: [{ buf: fixtures.serverPfx, passphrase: fixtures.passphrase }] }));
  });

  it('encrypted key + passphrase, and the { pem, passphrase } array form', async function () {
    assertOk(await handshake({ key: fixtures.serverKeyEncrypted, passphrase: fixtures.passphrase, cert: fixtures.serverCert }));
    assertOk(await handshake({
      key: [{ pem: fixtures.serverKeyEncrypted, passphrase: fixtures.passphrase }], cert: fixtures.serverCert,
    }));
  });

  it('key and cert as strings work as Buffers do', async function () {
    assertOk(await handshake({ key: fixtures.serverKey.toString(), cert: fixtures.serverCert.toString() },
      { ca: fixtures.ca.toString() }));
  });

  it('ca as an array (strings and Buffers mixed) and as one concatenated PEM', async function () {
    assertOk(await handshake(serverOptions(), { ca: [fixtures.selfSignedCert.toString(), fixtures.ca] }));
    assertOk(await handshake(serverOptions(), { ca: Buffer.concat([fixtures.selfSignedCert, fixtures.ca]) }));
  });

  // tlswrap parses a `ca` text once and keeps the certificates for the next
  // context with the same text: trust must follow the bytes, not the object.
  it('a ca Buffer rewritten in place trusts what it holds now', async function () {
    const ca = Buffer.alloc(Math.max(fixtures.ca.length, fixtures.selfSignedCert.length), '\n');
    fixtures.ca.copy(ca);
    assertOk(await handshake(serverOptions(), { ca }));
    ca.fill('\n');
    fixtures.selfSignedCert.copy(ca);
    const out = await handshake(serverOptions(), { ca });
    assert.strictEqual(out.client.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    ca.fill('\n');
    fixtures.ca.copy(ca);
    assertOk(await handshake(serverOptions(), { ca }));
  });

  it('contexts keep their CAs while many other ca texts come and go', async function () {
    const first = tlswrap.createSecureContext({ ca: fixtures.ca });
    for (let i = 1; i <= 150; i++) tlswrap.createSecureContext({ ca: `${fixtures.ca}${'\n'.repeat(i)}` });
    assertOk(await handshake(serverOptions(), { secureContext: first }));
    assertOk(await handshake(serverOptions(), { ca: fixtures.ca }));
  });
});

describe('context: protocol versions', function () {
  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`server pinned to ${version}: the connection negotiates ${version}`, async function () {
      assertOk(await handshake(serverOptions({ minVersion: version, maxVersion: version })), version);
    });
    it(`client pinned to ${version}: the connection negotiates ${version}`, async function () {
      assertOk(await handshake(serverOptions(), { minVersion: version, maxVersion: version }), version);
    });
  }

  it('defaults: TLSv1.3', async function () {
    assertOk(await handshake(serverOptions()), 'TLSv1.3');
  });

  it('server min TLSv1.3, client max TLSv1.2: ERR_SSL_UNSUPPORTED_PROTOCOL / ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
    async function () {
      const out = await handshake(serverOptions({ minVersion: 'TLSv1.3' }), { maxVersion: 'TLSv1.2' });
      assert.strictEqual(out.server.error.code, 'ERR_SSL_UNSUPPORTED_PROTOCOL');
      assert.strictEqual(out.server.error.reason, 'unsupported protocol');
      assert.strictEqual(out.client.error.code, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
      assert.strictEqual(out.client.error.reason, 'tlsv1 alert protocol version');
      assert.strictEqual(out.client.protocol, undefined);
    });

  it('server max TLSv1.2, client min TLSv1.3: the same codes', async function () {
    const out = await handshake(serverOptions({ maxVersion: 'TLSv1.2' }), { minVersion: 'TLSv1.3' });
    assert.strictEqual(out.server.error.code, 'ERR_SSL_UNSUPPORTED_PROTOCOL');
    assert.strictEqual(out.client.error.code, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
  });

  it("secureProtocol 'TLSv1_2_method' pins TLS 1.2", async function () {
    assertOk(await handshake(serverOptions({ secureProtocol: 'TLSv1_2_method' })), 'TLSv1.2');
  });

  it("secureProtocol 'SSLv23_method' caps at TLS 1.2 (both sides)", async function () {
    assertOk(await handshake(serverOptions({ secureProtocol: 'SSLv23_method' })), 'TLSv1.2');
    assertOk(await handshake(serverOptions(), { secureProtocol: 'SSLv23_client_method' }), 'TLSv1.2');
    assertOk(await handshake(serverOptions({ secureProtocol: 'TLS_method' })), 'TLSv1.3');
  });

  it('a *_server_method context cannot connect, a *_client_method one cannot accept: ' +
     'ERR_SSL_CALLED_A_FUNCTION_YOU_SHOULD_NOT_CALL', async function () {
    const refused = { code: 'ERR_SSL_CALLED_A_FUNCTION_YOU_SHOULD_NOT_CALL', message: /called a function you should not call/ };
    let out = await handshake(serverOptions(), { secureProtocol: 'TLSv1_2_server_method' });
    assert.match(out.client.error.message, refused.message);
    assert.strictEqual(out.client.error.code, refused.code);
    out = await handshake(serverOptions({ secureProtocol: 'TLSv1_2_client_method' }));
    assert.match(out.server.error.message, refused.message);
    assert.strictEqual(out.server.error.code, refused.code);
    // Each in its own role works, renegotiation included (TLS 1.2).
    assertOk(await handshake(serverOptions({ secureProtocol: 'TLSv1_2_server_method' }),
      { secureProtocol: 'TLSv1_2_client_method' }), 'TLSv1.2');
    // TLS 1.3 has no renegotiation: OpenSSL's refusal, not a hang.
    for (const [method, protocol, expect] of [['TLSv1_2', 'TLSv1.2', /^renegotiated$/], ['TLS', 'TLSv1.3', /^refused /]]) {
      const server = tlswrap.createServer(serverOptions({ secureProtocol: `${method}_server_method` }));
      server.on('secureConnection', (sock) => {
        sock.on('error', () => {});
        sock.renegotiate({}, (err) => sock.end(err ? `refused ${err.code}` : 'renegotiated'));
      });
      const port = await listen(server);
      try {
        const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca,
          secureProtocol: `${method}_client_method` });
        client.on('error', () => {});
        let got = '';
        client.setEncoding('utf8').on('data', (d) => { got += d; });
        await once(client, 'secureConnect');
        assert.strictEqual(client.getProtocol(), protocol);
        await once(client, 'end');
        assert.match(got, expect);
      } finally {
        await closeServer(server);
      }
    }
  });

  it('SSLv2 and SSLv3 method names: ERR_TLS_INVALID_PROTOCOL_METHOD "SSLvN methods disabled"', function () {
    for (const v of ['SSLv2', 'SSLv3']) {
      for (const kind of ['', '_client', '_server']) {
        assert.throws(() => tlswrap.createSecureContext({ secureProtocol: `${v}${kind}_method` }),
          { name: 'TypeError', code: 'ERR_TLS_INVALID_PROTOCOL_METHOD', message: `${v} methods disabled` });
      }
    }
    assert.throws(() => tlswrap.createSecureContext({ secureProtocol: 'TLSv9_method' }),
      { name: 'TypeError', code: 'ERR_TLS_INVALID_PROTOCOL_METHOD', message: 'Unknown method: TLSv9_method' });
  });

  it('secureOptions SSL_OP_NO_TLSv1_3 on the server gives TLS 1.2', async function () {
    assertOk(await handshake(serverOptions({ secureOptions: SSL_OP_NO_TLSv1_3 })), 'TLSv1.2');
  });
});

describe('context: ciphers', function () {
  it('TLS 1.2 cipher list: the one cipher allowed is the one used', async function () {
    const out = await handshake(serverOptions({ ciphers: 'ECDHE-RSA-AES256-GCM-SHA384', maxVersion: 'TLSv1.2' }));
    assertOk(out, 'TLSv1.2');
    assert.deepStrictEqual(out.client.cipher, {
      name: 'ECDHE-RSA-AES256-GCM-SHA384', standardName: 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', version: 'TLSv1.2',
    });
    assert.deepStrictEqual(out.server.cipher, out.client.cipher);
  });

  it('TLS 1.3 suites go in `ciphers` too', async function () {
    const out = await handshake(serverOptions({ ciphers: 'TLS_AES_128_GCM_SHA256' }));
    assertOk(out, 'TLSv1.3');
    assert.strictEqual(out.client.cipher.name, 'TLS_AES_128_GCM_SHA256');
  });

  it('no shared cipher: server ERR_SSL_NO_SHARED_CIPHER, client handshake_failure alert', async function () {
    for (const [s, c, max] of [
      ['AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'TLSv1.2'],
      ['TLS_AES_128_GCM_SHA256', 'TLS_CHACHA20_POLY1305_SHA256', 'TLSv1.3'],
    ]) {
      const out = await handshake(serverOptions({ ciphers: s, maxVersion: max }), { ciphers: c });
      assert.strictEqual(out.server.error.code, 'ERR_SSL_NO_SHARED_CIPHER', max);
      // OpenSSL 3.5 (Node 24) renamed the alert's reason ("ssl/tls alert ...").
      assert.match(out.client.error.code, /^ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_HANDSHAKE_FAILURE$/, max);
    }
  });

  // The server lists AES256 first, the client AES128 first.
  const serverPref = 'AES256-GCM-SHA384:AES128-GCM-SHA256';
  const clientPref = { ciphers: 'AES128-GCM-SHA256:AES256-GCM-SHA384' };

  it("honorCipherOrder: true -> the server's order wins", async function () {
    const out = await handshake(serverOptions({ ciphers: serverPref, maxVersion: 'TLSv1.2', honorCipherOrder: true }),
      clientPref);
    assert.strictEqual(out.client.cipher.name, 'AES256-GCM-SHA384');
  });

  it("honorCipherOrder: false -> the client's order wins", async function () {
    const out = await handshake(serverOptions({ ciphers: serverPref, maxVersion: 'TLSv1.2', honorCipherOrder: false }),
      clientPref);
    assert.strictEqual(out.client.cipher.name, 'AES128-GCM-SHA256');
  });

  it("honorCipherOrder unset on a Server: node's Server defaults it to true", async function () {
    const out = await handshake(serverOptions({ ciphers: serverPref, maxVersion: 'TLSv1.2' }), clientPref);
    assert.strictEqual(out.client.cipher.name, 'AES256-GCM-SHA384');
  });
});

describe('context: how `ciphers` splits into TLS 1.2 and TLS 1.3 lists', function () {
  it('a list of TLS 1.2 names only keeps the default TLS 1.3 suites (min TLSv1.3 still connects)', async function () {
    const out = await handshake(serverOptions({ ciphers: 'AES256-GCM-SHA384', minVersion: 'TLSv1.3' }));
    assertOk(out, 'TLSv1.3');
    const def = await handshake(serverOptions({ ciphers: 'AES256-GCM-SHA384' }));
    assertOk(def, 'TLSv1.3');
  });

  it('TLS 1.2 names only: a TLS 1.2 connection uses only them', async function () {
    const out = await handshake(serverOptions({ ciphers: 'AES256-GCM-SHA384' }), { maxVersion: 'TLSv1.2' });
    assertOk(out, 'TLSv1.2');
    assert.strictEqual(out.client.cipher.name, 'AES256-GCM-SHA384');
  });

  it('TLS 1.3 names only with maxVersion TLSv1.2: no TLS 1.2 cipher is left', async function () {
    const out = await handshake(serverOptions({ ciphers: 'TLS_AES_128_GCM_SHA256', maxVersion: 'TLSv1.2' }));
    assert.strictEqual(out.server.error.code, 'ERR_SSL_NO_CIPHERS_AVAILABLE');
    assert.match(out.client.error.code, /^ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_HANDSHAKE_FAILURE$/);
  });

  it("'' and null mean the default list", async function () {
    for (const ciphers of ['', null]) {
      tlswrap.createSecureContext({ ciphers });
      assertOk(await handshake(serverOptions({ ciphers }), { ciphers }), 'TLSv1.3');
    }
  });

  it("':' names nothing: ERR_INVALID_ARG_VALUE", function () {
    assert.throws(() => tlswrap.createSecureContext({ ciphers: ':' }), {
      name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE',
      message: "The property 'options.ciphers' is invalid. Received [ '', '' ]",
    });
  });

  it('a !TLS_ entry belongs to the TLS 1.3 list', async function () {
    // Alone in the TLS 1.3 list it leaves no suite (an error); beside a
    // suite it removes nothing else.
    assert.throws(() => tlswrap.createSecureContext({ ciphers: 'AES128-GCM-SHA256:!TLS_AES_256_GCM_SHA384' }),
      { code: 'ERR_SSL_NO_CIPHER_MATCH' });
    const ciphers = 'TLS_AES_128_GCM_SHA256:!TLS_AES_256_GCM_SHA384';
    const out = await handshake(serverOptions({ ciphers }));
    assertOk(out, 'TLSv1.3');
    assert.strictEqual(out.client.cipher.name, 'TLS_AES_128_GCM_SHA256');
  });

  it("'DEFAULT:@SECLEVEL=0' applies before the key: a 512-bit RSA certificate loads and serves", async function () {
    const weak = { key: fixture('weak512-key.pem'), cert: fixture('weak512-cert.pem') };
    assert.throws(() => tlswrap.createSecureContext(weak), { code: 'ERR_SSL_EE_KEY_TOO_SMALL' });
    const ciphers = 'DEFAULT:@SECLEVEL=0';
    tlswrap.createSecureContext({ ...weak, ciphers });
    const out = await handshake({ ...weak, ciphers, maxVersion: 'TLSv1.2' },
      { ca: weak.cert, ciphers, maxVersion: 'TLSv1.2' });
    assertOk(out, 'TLSv1.2');
  });
});

describe('context: what the module exports decides', function () {
  it('tls.connect builds its context with the exported createSecureContext (a replacement is called)', async function () {
    const original = tlswrap.createSecureContext;
    const seen = [];
    tlswrap.createSecureContext = (options) => {
      seen.push(options);
      return original(options);
    };
    try {
      assertOk(await handshake(serverOptions(), { ALPNProtocols: ['x'] }));
    } finally {
      tlswrap.createSecureContext = original;
    }
    // The server's setSecureContext goes through it too, as node's does.
    assert.strictEqual(seen.length, 2);
    assert.strictEqual(seen[0].sessionIdContext.length, 32);
    assert.strictEqual(seen[1].servername, 'localhost');
    assert.strictEqual(seen[1].ciphers, tlswrap.DEFAULT_CIPHERS);
  });

  it('tls.DEFAULT_CIPHERS set by the program is the default of connect and createServer', async function () {
    const original = tlswrap.DEFAULT_CIPHERS;
    tlswrap.DEFAULT_CIPHERS = 'TLS_AES_128_GCM_SHA256:AES128-GCM-SHA256';
    let tls13;
    let tls12;
    try {
      tls13 = await handshake(serverOptions());
      tls12 = await handshake(serverOptions(), { maxVersion: 'TLSv1.2' });
    } finally {
      tlswrap.DEFAULT_CIPHERS = original;
    }
    assertOk(tls13, 'TLSv1.3');
    assert.strictEqual(tls13.client.cipher.name, 'TLS_AES_128_GCM_SHA256');
    assertOk(tls12, 'TLSv1.2');
    assert.strictEqual(tls12.client.cipher.name, 'AES128-GCM-SHA256');
  });
});

describe('context: ecdhCurve', function () {
  it("server 'P-384': the key exchange uses secp384r1 (TLS 1.3 and 1.2)", async function () {
    for (const version of ['TLSv1.3', 'TLSv1.2']) {
      const out = await handshake(serverOptions({ ecdhCurve: 'P-384', maxVersion: version }));
      assertOk(out, version);
      assert.deepStrictEqual(out.client.keyInfo, { type: 'ECDH', name: 'secp384r1', size: 384 });
    }
  });

  it('curve lists on both sides: the shared one the client sent a key share for', async function () {
    const out = await handshake(serverOptions({ ecdhCurve: 'P-521:P-384' }), { ecdhCurve: 'P-384:P-521' });
    assertOk(out);
    assert.strictEqual(out.client.keyInfo.name, 'secp384r1');
  });

  it('no shared curve, TLS 1.3: server ERR_SSL_NO_SUITABLE_KEY_SHARE, client handshake_failure', async function () {
    const out = await handshake(serverOptions({ ecdhCurve: 'P-384' }), { ecdhCurve: 'P-256' });
    assert.strictEqual(out.server.error.code, 'ERR_SSL_NO_SUITABLE_KEY_SHARE');
    assert.match(out.client.error.code, /^ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_HANDSHAKE_FAILURE$/);
  });

  it('no shared curve, TLS 1.2: falls back to RSA key exchange (no key info)', async function () {
    const args = [serverOptions({ ecdhCurve: 'P-384', maxVersion: 'TLSv1.2' }), { ecdhCurve: 'P-256' }];
    const out = await handshake(...args);
    assertOk(out, 'TLSv1.2');
    // {} on Node 20 and 22, the keys present but undefined on later ones.
    assert.deepStrictEqual(Object.values(out.client.keyInfo), Object.values(out.client.keyInfo).map(() => undefined));
    assert.deepStrictEqual(out.client.keyInfo, (await handshake(...args, nodeTls)).client.keyInfo);
    assert.match(out.client.cipher.standardName, /^TLS_RSA_WITH_/);
  });
});

describe('context: allowPartialTrustChain', function () {
  // The server sends only its leaf; the client trusts only the intermediate
  // that signed it, not the root above it.
  const interServer = { key: fixture('inter-leaf-key.pem'), cert: fixture('inter-leaf-cert.pem') };
  const interCa = fixture('inter-ca-cert.pem');

  it('without it, an intermediate CA alone does not verify: UNABLE_TO_GET_ISSUER_CERT', async function () {
    const out = await handshake(interServer, { ca: interCa });
    assert.strictEqual(out.client.error.code, 'UNABLE_TO_GET_ISSUER_CERT');
  });

  it('with it, the intermediate CA in `ca` is enough', async function () {
    const out = await handshake(interServer, { ca: interCa, allowPartialTrustChain: true });
    assertOk(out);
    assert.strictEqual(out.client.authorizationError, null);
  });

  // OpenSSL builds a server's chain from its store when the certificate
  // option holds only the leaf; tlswrap's store finds `ca` certificates as
  // verification asks for them, so this pins that they are found for it too.
  for (const [what, list] of [['the intermediate and the root', []], ['every bundled root too', nodeTls.rootCertificates]]) {
    it(`a server whose ca holds ${what} sends the intermediate: a client trusting the root verifies`,
      async function () {
        const out = await handshake({ ...interServer, ca: [...list, interCa, fixtures.ca] }, {});
        assertOk(out);
      });
  }
});

// DH parameters (p, g) of a MODP group as a PEM 'DH PARAMETERS' block.
function dhParamsPem(group) {
  const dh = crypto.getDiffieHellman(group);
  const len = (n) => (n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]));
  const int = (b) => {
    const v = b[0] & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b;
    return Buffer.concat([Buffer.from([0x02]), len(v.length), v]);
  };
  const body = Buffer.concat([int(dh.getPrime()), int(dh.getGenerator())]);
  const der = Buffer.concat([Buffer.from([0x30]), len(body.length), body]);
  return `-----BEGIN DH PARAMETERS-----\n${der.toString('base64').match(/.{1,64}/g).join('\n')}\n-----END DH PARAMETERS-----\n`;
}

describe('context: dhparam', function () {
  const dhe = { ciphers: 'DHE-RSA-AES128-GCM-SHA256', maxVersion: 'TLSv1.2' };

  it('without dhparam the server offers no DHE cipher: ERR_SSL_NO_SHARED_CIPHER', async function () {
    const out = await handshake(serverOptions(dhe), dhe);
    assert.strictEqual(out.server.error.code, 'ERR_SSL_NO_SHARED_CIPHER');
  });

  it("dhparam 'auto': DHE with a group sized to the key (2048 bits)", async function () {
    const out = await handshake(serverOptions({ ...dhe, dhparam: 'auto' }), dhe);
    assertOk(out, 'TLSv1.2');
    assert.strictEqual(out.client.keyInfo.type, 'DH');
    assert.strictEqual(out.client.keyInfo.size, 2048);
    assert.strictEqual(out.client.cipher.name, 'DHE-RSA-AES128-GCM-SHA256');
  });

  it('dhparam PEM (string or Buffer): DHE with that group', async function () {
    for (const dhparam of [dhParamsPem('modp14'), Buffer.from(dhParamsPem('modp15'))]) {
      const out = await handshake(serverOptions({ ...dhe, dhparam }), dhe);
      assertOk(out, 'TLSv1.2');
      assert.strictEqual(out.client.keyInfo.type, 'DH');
    }
  });

  it('a 1024-bit group loads with a SecurityWarning; under 1024 bits throws; a PEM of no DH is ignored', async function () {
    const warnings = [];
    const onWarning = (w) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      // @SECLEVEL=0: newer OpenSSL refuses a 1024-bit group at its default level.
      tlswrap.createSecureContext({ dhparam: dhParamsPem('modp2'), ciphers: 'DEFAULT:@SECLEVEL=0' });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepStrictEqual(warnings.map((w) => [w.name, w.message]),
      [['SecurityWarning', 'DH parameter is less than 2048 bits']]);
    assert.throws(() => tlswrap.createSecureContext({ dhparam: dhParamsPem('modp1') }),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: 'DH parameter is less than 1024 bits' });
    assert.throws(() => tlswrap.createSecureContext({ dhparam: 5 }), { code: 'ERR_INVALID_ARG_TYPE' });
    tlswrap.createSecureContext({ dhparam: 'not a PEM at all' });
  });
});

describe('context: server.setSecureContext', function () {
  it('new connections get the new certificate, options and ticket keys; the old connection is untouched', async function () {
    const server = tlswrap.createServer(serverOptions({ ticketKeys: Buffer.alloc(48, 1) }));
    server.on('secureConnection', (sock) => sock.on('error', () => {}));
    const port = await listen(server);
    const clients = [];
    const cn = async (extra = {}) => {
      const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'other.example', ca: fixtures.ca, rejectUnauthorized: false, ...extra });
      client.on('error', () => {});
      clients.push(client);
      await once(client, 'secureConnect');
      const r = { cn: client.getPeerCertificate().subject.CN, protocol: client.getProtocol(), client };
      return r;
    };
    try {
      const first = await cn();
      assert.strictEqual(first.cn, 'localhost');
      server.setSecureContext({ key: fixtures.otherKey, cert: fixtures.otherCert, maxVersion: 'TLSv1.2' });
      const second = await cn();
      assert.strictEqual(second.cn, 'other.example');
      assert.strictEqual(second.protocol, 'TLSv1.2');
      assert.strictEqual(first.client.getPeerCertificate().subject.CN, 'localhost');
      // Ticket keys not given again are kept, as node's Server keeps them.
      assert.deepStrictEqual(server.getTicketKeys(), Buffer.alloc(48, 1));
      assert.throws(() => server.setSecureContext(null), { code: 'ERR_INVALID_ARG_TYPE' });
    } finally {
      for (const c of clients) c.destroy();
      await closeServer(server);
    }
  });
});

describe("context: node's TLS command-line flags (in a child)", function () {
  const { runChild } = require('./run-child');
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');

  async function withFlags(nodeArgs, args = []) {
    const { result, stderr } = await runChild('tls-flags.js', args, { nodeArgs });
    assert.ok(result, stderr);
    return result;
  }

  it('--tls-max-v1.2 and --tls-min-v1.3 set the defaults and what a default connection negotiates', async function () {
    const max12 = await withFlags(['--tls-max-v1.2']);
    assert.strictEqual(max12.max, 'TLSv1.2');
    assert.strictEqual(max12.protocol, 'TLSv1.2');
    const min13 = await withFlags(['--tls-min-v1.3']);
    assert.strictEqual(min13.min, 'TLSv1.3');
    assert.strictEqual(min13.protocol, 'TLSv1.3');
  });

  it('--tls-cipher-list sets DEFAULT_CIPHERS and the cipher a default connection uses', async function () {
    const list = 'TLS_CHACHA20_POLY1305_SHA256:ECDHE-RSA-CHACHA20-POLY1305';
    const r = await withFlags([`--tls-cipher-list=${list}`]);
    assert.strictEqual(r.ciphers, list);
    assert.strictEqual(r.protocol, 'TLSv1.3');
    assert.strictEqual(r.cipher, 'TLS_CHACHA20_POLY1305_SHA256');
  });

  it('--tls-keylog=file: both sides append their key lines (mode 0600), with one warning', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-keylog-'));
    const file = path.join(dir, 'keys.log');
    try {
      const r = await withFlags([`--tls-keylog=${file}`], [file]);
      assert.strictEqual(r.protocol, 'TLSv1.3');
      assert.deepStrictEqual(r.warnings, [`Using --tls-keylog makes TLS connections insecure by writing secret key material to file ${file}`]);
      // Five TLS 1.3 secrets, from the client and from the server.
      assert.deepStrictEqual(r.keylog, {
        lines: 10,
        labels: ['CLIENT_HANDSHAKE_TRAFFIC_SECRET', 'CLIENT_TRAFFIC_SECRET_0', 'EXPORTER_SECRET',
          'SERVER_HANDSHAKE_TRAFFIC_SECRET', 'SERVER_TRAFFIC_SECRET_0'],
        wellFormed: true,
        mode: '600',
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('context: the secureContext option', function () {
  it('connect({ secureContext }) uses it (its CA verifies the server)', async function () {
    const secureContext = tlswrap.createSecureContext({ ca: fixtures.ca });
    assertOk(await handshake(serverOptions(), { ca: undefined, secureContext }));
  });

  it('connect: secureContext wins over a `ca` option given alongside', async function () {
    const secureContext = tlswrap.createSecureContext({});
    const out = await handshake(serverOptions(), { secureContext, ca: fixtures.ca });
    assert.strictEqual(out.client.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('connect: client certificate from the secureContext satisfies requestCert', async function () {
    const secureContext = tlswrap.createSecureContext({ ca: fixtures.ca, key: fixtures.clientKey, cert: fixtures.clientCert });
    assertOk(await handshake(serverOptions({ requestCert: true, rejectUnauthorized: true, ca: fixtures.ca }),
      { ca: undefined, secureContext }));
  });

  it('a secureContext given to connect() outlives the socket: it serves the next connection', async function () {
    const secureContext = tlswrap.createSecureContext({ ca: fixtures.ca });
    const server = tlswrap.createServer(serverOptions());
    const port = await listen(server);
    try {
      const first = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', secureContext });
      await new Promise((resolve, reject) => {
        first.on('error', reject);
        first.on('secureConnect', resolve);
      });
      first.destroy();
    } finally {
      await closeServer(server);
    }
    assertOk(await handshake(serverOptions(), { ca: undefined, secureContext }));
  });

  it("createServer ignores `secureContext`, as node's Server does: key/cert options decide", async function () {
    const other = tlswrap.createSecureContext({ key: fixtures.otherKey, cert: fixtures.otherCert });
    const out = await handshake(serverOptions({ secureContext: other }));
    assertOk(out);
    assert.strictEqual(out.client.cn, 'localhost');
  });
});

describe('context: secureOptions', function () {
  it('SSL_OP_NO_TICKET: a TLS 1.2 client gets no ticket; without it, it does', async function () {
    const ticketOf = async (secureOptions) => {
      const server = tlswrap.createServer(serverOptions({ maxVersion: 'TLSv1.2', secureOptions }));
      const port = await listen(server);
      try {
        const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca });
        await new Promise((resolve, reject) => { client.on('secureConnect', resolve); client.on('error', reject); });
        const ticket = client.getTLSTicket();
        client.destroy();
        return ticket;
      } finally {
        await closeServer(server);
      }
    };
    assert.strictEqual(await ticketOf(SSL_OP_NO_TICKET), undefined);
    assert.ok(Buffer.isBuffer(await ticketOf(0)));
  });
});

describe('context: single-use contexts', function () {
  before(function () {
    if (builtin) this.skip(); // tlswrap's internals
  });

  // connect() shares one context between calls with equal options
  // (test/context-reuse.test.js); one it cannot share (here: the program
  // replaced createSecureContext) is the connection's alone.
  it('a context connect() does not share is freed when the socket is destroyed, not at GC', async function () {
    const server = tlswrap.createServer(serverOptions(), (s) => s.end('x'));
    const port = await listen(server);
    const original = tlswrap.createSecureContext;
    tlswrap.createSecureContext = (options) => original(options);
    try {
      const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca });
      tlswrap.createSecureContext = original;
      const context = client._singleUseContext;
      assert.ok(context, 'connect() marked its context single-use');
      await new Promise((resolve, reject) => {
        client.on('error', reject);
        client.on('secureConnect', resolve);
      });
      client.resume();
      client.destroy();
      assert.strictEqual(client._singleUseContext, null);
      // Its SSL_CTX is gone: using it is a clear error, not a crash.
      assert.throws(() => context.setOptions(0), { code: 'ERR_TLSWRAP_CONTEXT_CLOSED' });
      assert.throws(() => new tlswrap.TLSSocket(null, { secureContext: context }),
        { code: 'ERR_TLSWRAP_CONTEXT_CLOSED' });
    } finally {
      tlswrap.createSecureContext = original;
      await closeServer(server);
    }
  });

  it("a server's shared context is not single-use", async function () {
    const server = tlswrap.createServer(serverOptions());
    const accepted = new Promise((resolve) => server.once('secureConnection', resolve));
    const port = await listen(server);
    try {
      const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca });
      client.on('error', () => {});
      const sock = await accepted;
      assert.strictEqual(sock._singleUseContext, null);
      client.destroy();
      sock.destroy();
    } finally {
      await closeServer(server);
    }
  });
});
