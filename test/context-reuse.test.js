'use strict';

// connect() without a secureContext: calls with equal context options share
// one client context (tlswrap only: node:tls builds one per call), and what
// differs between connections still applies to each of them.

const assert = require('node:assert');
const { builtin, fixtures, tlswrap, serverOptions, listen, closeServer } = require('./common');

// One connection; what the client saw. Never throws for a TLS failure.
async function connectOnce(port, extra = {}) {
  const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, ...extra });
  const out = { context: client._tlsOptions && client._tlsOptions.secureContext };
  await new Promise((resolve) => {
    client.on('secureConnect', () => {
      out.authorized = client.authorized;
      out.authorizationError = client.authorizationError;
      out.protocol = client.getProtocol();
      out.cipher = client.getCipher().name;
      out.keyInfo = client.getEphemeralKeyInfo();
      out.reused = client.isSessionReused();
      client.end();
    });
    client.on('error', (err) => {
      out.error = err;
    });
    client.resume();
    client.on('close', resolve);
  });
  return out;
}

async function withServer(options, fn) {
  const server = tlswrap.createServer(options, (s) => s.end());
  server.on('tlsClientError', () => {});
  const port = await listen(server);
  try {
    return await fn(port);
  } finally {
    await closeServer(server);
  }
}

function assertAuthorized(out) {
  assert.ifError(out.error);
  assert.strictEqual(out.authorized, true);
}

// Sets tlswrap[name] for the duration of fn.
async function withDefault(name, value, fn) {
  const before = tlswrap[name];
  tlswrap[name] = value;
  try {
    return await fn();
  } finally {
    tlswrap[name] = before;
  }
}

// tls.setDefaultCACertificates, or (on a Node without it) tlswrap's own store.
function defaultCASetter() {
  if (typeof tlswrap.setDefaultCACertificates === 'function') {
    return { set: tlswrap.setDefaultCACertificates, get: () => tlswrap.getCACertificates('default') };
  }
  if (builtin) return null;
  const ca = require('../lib/ca');
  return { set: ca.setDefaultCACertificates, get: () => ca.getCACertificates('default') };
}

describe('context reuse: which connects share a context', function () {
  // Observes tlswrap's internals: node:tls makes a context per connect.
  before(function () {
    if (builtin) this.skip();
  });

  let server;
  let port;
  before(async function () {
    if (builtin) return;
    server = tlswrap.createServer(serverOptions({ requestCert: true, rejectUnauthorized: false }), (s) => s.end());
    port = await listen(server);
  });
  after(async function () {
    if (server) await closeServer(server);
  });

  it('equal options share one context; connection-level options do not matter', async function () {
    const first = await connectOnce(port);
    assertAuthorized(first);
    assert.ok(first.context);
    const same = [
      {},
      { ca: Buffer.from(fixtures.ca) }, // another Buffer, the same bytes
      { servername: 'example.com', rejectUnauthorized: false },
      { ALPNProtocols: ['h2', 'http/1.1'] },
      { checkServerIdentity: () => undefined },
      { sessionCache: new tlswrap.SessionCache(), minDHSize: 2048, timeout: 5000 },
      { pskCallback: () => null },
    ];
    for (const extra of same) {
      const out = await connectOnce(port, extra);
      assert.strictEqual(out.context, first.context, `shared with ${Object.keys(extra)}`);
    }
    // The shared context outlives each connection: it is not single-use.
    assert.strictEqual(first.context.singleUse, undefined);
  });

  it('any differing context option gives another context', async function () {
    const base = (await connectOnce(port)).context;
    const differing = [
      { ca: [fixtures.ca, fixtures.otherCert] },
      { ca: fixtures.ca.toString() + '\n' },
      { cert: fixtures.clientCert, key: fixtures.clientKey },
      { ciphers: 'TLS_AES_128_GCM_SHA256' },
      { minVersion: 'TLSv1.3' },
      { maxVersion: 'TLSv1.2' },
      { ecdhCurve: 'P-256' },
      { secureOptions: require('node:crypto').constants.SSL_OP_NO_TICKET },
      { sigalgs: 'RSA-PSS+SHA256:ECDSA+SHA256' },
      { someFutureContextOption: 1 }, // not known to be connection-only
    ];
    const seen = new Set([base]);
    for (const extra of differing) {
      const out = await connectOnce(port, extra);
      assert.ok(out.context && !seen.has(out.context), `own context for ${JSON.stringify(Object.keys(extra))}`);
      seen.add(out.context);
    }
    // And the first one is still the one for the base options.
    assert.strictEqual((await connectOnce(port)).context, base);
  });

  it('a client certificate with another passphrase gives another context', async function () {
    const a = await connectOnce(port, { key: fixtures.serverKeyEncrypted, cert: fixtures.serverCert,
                                        passphrase: fixtures.passphrase });
    const b = await connectOnce(port, { key: [{ pem: fixtures.serverKeyEncrypted, passphrase: fixtures.passphrase }],
                                        cert: fixtures.serverCert });
    const wrong = await connectOnce(port, { key: fixtures.serverKeyEncrypted, cert: fixtures.serverCert,
                                            passphrase: 'wrong' }).catch((err) => ({ error: err }));
    assertAuthorized(a);
    assertAuthorized(b);
    assert.notStrictEqual(a.context, b.context);
    assert.ok(wrong.error, 'a wrong passphrase fails as it does without sharing');
  });

  it('module defaults changed between calls give another context', async function () {
    const base = (await connectOnce(port)).context;
    for (const [name, value] of [['DEFAULT_CIPHERS', 'TLS_AES_128_GCM_SHA256:AES128-GCM-SHA256'],
      ['DEFAULT_MIN_VERSION', 'TLSv1.3'], ['DEFAULT_MAX_VERSION', 'TLSv1.2'], ['DEFAULT_ECDH_CURVE', 'P-384']]) {
      const out = await withDefault(name, value, () => connectOnce(port));
      assertAuthorized(out);
      assert.notStrictEqual(out.context, base, name);
    }
    assert.strictEqual((await connectOnce(port)).context, base);
  });

  it('a value that cannot be keyed (an object of a class) is not shared, and is freed with its socket', async function () {
    class Pem {
      constructor(text) {
        this.pem = text;
      }
    }
    const options = { key: [new Pem(fixtures.clientKey)], cert: fixtures.clientCert };
    const a = await connectOnce(port, options);
    const b = await connectOnce(port, options);
    assertAuthorized(a);
    assert.notStrictEqual(a.context, b.context);
    assert.strictEqual(a.context.singleUse, true);
  });

  it('a replaced createSecureContext disables sharing (each socket frees its own context)', async function () {
    const original = tlswrap.createSecureContext;
    tlswrap.createSecureContext = (options) => original(options);
    try {
      const a = await connectOnce(port);
      const b = await connectOnce(port);
      assertAuthorized(a);
      assert.notStrictEqual(a.context, b.context);
      assert.strictEqual(a.context.singleUse, true);
    } finally {
      tlswrap.createSecureContext = original;
    }
  });

  it('the set of shared contexts is bounded (least recently used goes)', async function () {
    const { MAX_CONTEXTS } = require('../lib/context_cache');
    const first = (await connectOnce(port, { someFutureContextOption: -1 })).context;
    for (let i = 0; i < MAX_CONTEXTS; i++) {
      // Context creation alone: no connection needed.
      const client = tlswrap.connect({ port, host: '127.0.0.1', ca: fixtures.ca, someFutureContextOption: i });
      client.on('error', () => {});
      client.destroy();
    }
    const again = (await connectOnce(port, { someFutureContextOption: -1 })).context;
    assert.notStrictEqual(again, first);
    // The evicted one is closed; its connections keep their SSL_CTX.
    assert.throws(() => first.context.setOptions(0), { code: 'ERR_TLSWRAP_CONTEXT_CLOSED' });
  });
});

describe('context reuse: each connection still gets its own settings', function () {
  it('a replaced createSecureContext is called on each connect', async function () {
    await withServer(serverOptions(), async (port) => {
      const original = tlswrap.createSecureContext;
      let calls = 0;
      tlswrap.createSecureContext = (options) => {
        calls++;
        return original(options);
      };
      try {
        assertAuthorized(await connectOnce(port));
        assertAuthorized(await connectOnce(port));
      } finally {
        tlswrap.createSecureContext = original;
      }
      assert.strictEqual(calls, 2);
    });
  });

  it('an untrusted server still fails after a trusted one with the same options', async function () {
    await withServer(serverOptions(), async (trusted) => {
      await withServer({ key: fixtures.selfSignedKey, cert: fixtures.selfSignedCert }, async (untrusted) => {
        assertAuthorized(await connectOnce(trusted));
        const out = await connectOnce(untrusted);
        assert.ok(out.error, 'the untrusted server is refused');
        assert.strictEqual(out.error.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
        assertAuthorized(await connectOnce(trusted));
      });
    });
  });

  it('rejectUnauthorized applies per connection whatever came before', async function () {
    await withServer({ key: fixtures.selfSignedKey, cert: fixtures.selfSignedCert }, async (port) => {
      const lax = await connectOnce(port, { rejectUnauthorized: false });
      assert.ifError(lax.error);
      assert.strictEqual(lax.authorized, false);
      assert.strictEqual(lax.authorizationError, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      const strict = await connectOnce(port);
      assert.strictEqual(strict.error && strict.error.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      const lax2 = await connectOnce(port, { rejectUnauthorized: false });
      assert.strictEqual(lax2.authorized, false);
    });
  });

  it('servername is per connection: the name checked is each connection\'s own', async function () {
    await withServer(serverOptions(), async (port) => {
      assertAuthorized(await connectOnce(port));
      const out = await connectOnce(port, { servername: 'not-the-server.example' });
      assert.strictEqual(out.error && out.error.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assertAuthorized(await connectOnce(port));
    });
  });

  // tlswrap installs OpenSSL's keylog callback on a context only once some
  // connection listens: the connections around this one share its context
  // and do not.
  for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
    it(`keylog (${maxVersion}) reaches the connection that listens, on a context others share, and matches the server's`, async function () {
      const serverLines = [];
      const sni = tlswrap.createSecureContext(serverOptions());
      const server = tlswrap.createServer(serverOptions({ SNICallback: (name, cb) => cb(null, sni) }), (s) => s.end());
      const port = await listen(server);
      try {
        assertAuthorized(await connectOnce(port, { maxVersion }));
        server.on('keylog', (line) => serverLines.push(line.toString()));
        const lines = [];
        const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, maxVersion });
        client.on('keylog', (line) => lines.push(line.toString()));
        client.resume();
        await new Promise((resolve, reject) => {
          client.on('error', reject);
          client.on('close', resolve);
        });
        assertAuthorized(await connectOnce(port, { maxVersion }));
        const labels = lines.map((line) => line.split(' ')[0]).sort();
        assert.deepStrictEqual(labels, maxVersion === 'TLSv1.2' ? ['CLIENT_RANDOM'] : [
          'CLIENT_HANDSHAKE_TRAFFIC_SECRET', 'CLIENT_TRAFFIC_SECRET_0', 'EXPORTER_SECRET',
          'SERVER_HANDSHAKE_TRAFFIC_SECRET', 'SERVER_TRAFFIC_SECRET_0',
        ]);
        assert.ok(lines.every((line) => /^[A-Z_0-9]+ [0-9a-f]{64} [0-9a-f]{64,}\n$/.test(line)), lines.join(''));
        // The server listened from the second connection on: its lines for
        // that one are the client's (the same secrets), the third adds as many.
        assert.strictEqual(serverLines.length, 2 * lines.length);
        assert.deepStrictEqual(serverLines.slice(0, lines.length).sort(), lines.slice().sort());
      } finally {
        await closeServer(server);
      }
    });
  }

  it('a large ca Buffer rewritten in place between connects trusts what it holds now', async function () {
    await withServer(serverOptions(), async (port) => {
      // Large enough for any digest memo to matter.
      const size = 64 * 1024;
      const ca = Buffer.alloc(size, '\n');
      fixtures.ca.copy(ca);
      assertAuthorized(await connectOnce(port, { ca }));
      ca.fill('\n');
      fixtures.selfSignedCert.copy(ca);
      const out = await connectOnce(port, { ca });
      assert.strictEqual(out.error && out.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      ca.fill('\n');
      fixtures.ca.copy(ca, size - fixtures.ca.length);
      assertAuthorized(await connectOnce(port, { ca }));
    });
  });

  it('DEFAULT_MIN_VERSION and DEFAULT_ECDH_CURVE changed between calls apply to the next connect', async function () {
    await withServer(serverOptions({ maxVersion: 'TLSv1.2' }), async (port) => {
      const before = await connectOnce(port);
      assertAuthorized(before);
      assert.strictEqual(before.protocol, 'TLSv1.2');
      const refused = await withDefault('DEFAULT_MIN_VERSION', 'TLSv1.3', () => connectOnce(port));
      assert.ok(refused.error, 'a TLS 1.3 minimum cannot reach a TLS 1.2 server');
      const p384 = await withDefault('DEFAULT_ECDH_CURVE', 'P-384', () => connectOnce(port));
      assertAuthorized(p384);
      assert.strictEqual(p384.keyInfo.name, 'secp384r1');
      assertAuthorized(await connectOnce(port));
    });
  });

  it('a default CA store set between calls is the one the next connect trusts', async function () {
    const setter = defaultCASetter();
    if (setter === null) this.skip(); // node:tls before setDefaultCACertificates
    await withServer(serverOptions(), async (port) => {
      const saved = setter.get();
      const before = await connectOnce(port, { ca: undefined });
      assert.strictEqual(before.error && before.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      try {
        setter.set([fixtures.ca.toString()]);
        assertAuthorized(await connectOnce(port, { ca: undefined }));
        setter.set([fixtures.selfSignedCert.toString()]);
        const after = await connectOnce(port, { ca: undefined });
        assert.strictEqual(after.error && after.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      } finally {
        setter.set(saved);
      }
    });
  });

  it('no session crosses connections on its own: without `session` each one is a full handshake', async function () {
    await withServer(serverOptions(), async (port) => {
      for (const maxVersion of ['TLSv1.2', 'TLSv1.3']) {
        const first = await connectOnce(port, { maxVersion });
        const second = await connectOnce(port, { maxVersion });
        assertAuthorized(first);
        assertAuthorized(second);
        assert.strictEqual(second.reused, false, maxVersion);
      }
    });
  });

  it('sessions do not cross CA sets even where contexts are shared', async function () {
    if (builtin) this.skip(); // connect({ sessionCache }) is tlswrap's
    await withServer(serverOptions(), async (port) => {
      const sessionCache = new tlswrap.SessionCache();
      const first = await connectOnce(port, { sessionCache, maxVersion: 'TLSv1.2' });
      assertAuthorized(first);
      const resumed = await connectOnce(port, { sessionCache, maxVersion: 'TLSv1.2' });
      assert.strictEqual(resumed.reused, true);
      const other = await connectOnce(port, { sessionCache, maxVersion: 'TLSv1.2',
                                              ca: [fixtures.selfSignedCert] });
      // A resumed session would carry the first chain's verdict (trusted).
      assert.strictEqual(other.error && other.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    });
  });
});
