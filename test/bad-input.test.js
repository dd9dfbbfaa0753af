'use strict';

// Bad input, on the wire and in options: every failure is an Error shaped the
// way node:tls shapes it (same `code`, same OpenSSL `library`/`reason`), it is
// reported where node reports it (sync throw, 'error', 'tlsClientError'), and a
// server keeps serving after a bad peer.

const assert = require('node:assert');
const crypto = require('node:crypto');
const net = require('node:net');
const { once } = require('node:events');
const tls = require('node:tls');
const { builtin, fixture, fixtures, tlswrap, serverOptions, clientOptions, listen, closeServer } = require('./common');

// Fixed "random" bytes, so the first byte (and so OpenSSL's verdict) never
// changes between runs.
const noise = Buffer.concat(Array.from({ length: 16 }, (_, i) =>
  crypto.createHash('sha512').update(`tlswrap noise ${i}`).digest()));

// Sends `bytes` over plain TCP and waits for the server to drop the connection.
async function sendRaw(port, bytes) {
  const sock = net.connect(port, '127.0.0.1');
  sock.on('error', () => {}); // a reset is fine: the server gave up on us
  await once(sock, 'connect');
  sock.write(bytes);
  sock.resume();
  await once(sock, 'close');
}

// A well-behaved client: proves the server still serves.
async function goodRoundTrip(port) {
  const client = tlswrap.connect(clientOptions(port));
  await once(client, 'secureConnect');
  assert.strictEqual(client.authorized, true);
  client.write('ping');
  const [data] = await once(client, 'data');
  assert.strictEqual(data.toString(), 'pong');
  client.end();
  await once(client, 'close');
}

describe('bad input on the wire', function () {
  let server, port;
  const clientErrors = [];

  beforeEach(async function () {
    clientErrors.length = 0;
    server = tlswrap.createServer(serverOptions());
    server.on('tlsClientError', (err, sock) => clientErrors.push({ err, sock }));
    server.on('secureConnection', (sock) => {
      sock.on('data', () => sock.write('pong'));
      sock.on('error', () => {});
    });
    port = await listen(server);
  });
  afterEach(async function () {
    await closeServer(server);
  });

  // Each case: bytes a non-TLS client sends, and the OpenSSL reason node reports.
  const cases = [
    ['fixed random bytes', () => noise, 'ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'],
    ['an HTTP GET request', () => 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', 'ERR_SSL_HTTP_REQUEST', 'http request'],
    ['an HTTP POST request', () => 'POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n',
      'ERR_SSL_HTTP_REQUEST', 'http request'],
    ['a line of text', () => 'hello, this is not TLS\r\n', 'ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'],
    ['zero bytes', () => Buffer.alloc(64), 'ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'],
    // A handshake record header whose body is not a ClientHello.
    ['a handshake record holding junk', () => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05]), Buffer.from('hello')]),
      'ERR_SSL_UNEXPECTED_MESSAGE', 'unexpected message'],
  ];

  for (const [what, bytes, code, reason] of cases) {
    it(`server: ${what} -> tlsClientError ${code}, then serves a good client`, async function () {
      await sendRaw(port, bytes());
      assert.strictEqual(clientErrors.length, 1);
      const { err, sock } = clientErrors[0];
      assert.ok(err instanceof Error);
      assert.strictEqual(err.code, code);
      assert.strictEqual(err.library, 'SSL routines');
      assert.strictEqual(err.reason, reason);
      assert.match(err.message, new RegExp(reason));
      assert.ok(sock instanceof tlswrap.TLSSocket);
      assert.strictEqual(sock.destroyed, true);
      await goodRoundTrip(port);
      assert.strictEqual(clientErrors.length, 1);
    });
  }

  it('server: many bad clients at once, then a good one', async function () {
    await Promise.all(Array.from({ length: 20 }, (_, i) => sendRaw(port, i % 2 ? noise : 'GET / HTTP/1.0\r\n\r\n')));
    assert.strictEqual(clientErrors.length, 20);
    const codes = clientErrors.map((e) => e.err.code).sort();
    assert.deepStrictEqual([...new Set(codes)], ['ERR_SSL_HTTP_REQUEST', 'ERR_SSL_WRONG_VERSION_NUMBER']);
    await goodRoundTrip(port);
  });
});

describe('client talking to a server that is not TLS', function () {
  let server, port;
  let reply;

  beforeEach(async function () {
    server = net.createServer((sock) => {
      sock.on('error', () => {});
      sock.resume();
      sock.end(reply);
    });
    port = await listen(server);
  });
  afterEach(async function () {
    await closeServer(server);
  });

  const replies = [
    ['fixed random bytes', noise],
    ['an HTTP response', 'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'],
    ['an SSH banner', 'SSH-2.0-OpenSSH_9.0\r\n'],
  ];
  for (const [what, bytes] of replies) {
    it(`${what} -> 'error' ERR_SSL_WRONG_VERSION_NUMBER, then 'close', no secureConnect`, async function () {
      reply = bytes;
      const client = tlswrap.connect(clientOptions(port));
      const events = [];
      client.on('secureConnect', () => events.push('secureConnect'));
      client.on('error', (err) => events.push(err));
      // Not once(): it would reject on the 'error' we expect.
      await new Promise((resolve) => client.once('close', resolve));
      const errors = events.filter((e) => e instanceof Error);
      assert.ok(!events.includes('secureConnect'));
      assert.strictEqual(errors.length, 1);
      assert.strictEqual(errors[0].code, 'ERR_SSL_WRONG_VERSION_NUMBER');
      assert.strictEqual(errors[0].library, 'SSL routines');
      assert.strictEqual(errors[0].reason, 'wrong version number');
      assert.strictEqual(client.destroyed, true);
    });
  }

  // What https.get() to a plain HTTP port meets: its request is written
  // before the handshake. node:tls fails that write and the socket with
  // 'write EPROTO', OpenSSL's line after it.
  it("with a write pending: the write and the socket fail with 'write EPROTO <OpenSSL's error>'", async function () {
    reply = 'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n';
    const client = tlswrap.connect(clientOptions(port));
    const writeDone = new Promise((resolve) => client.write('GET / HTTP/1.1\r\n\r\n', resolve));
    const errors = [];
    client.on('error', (err) => errors.push(err));
    await new Promise((resolve) => client.once('close', resolve));
    const writeError = await writeDone;
    assert.strictEqual(errors.length, 1);
    for (const err of [errors[0], writeError]) {
      assert.strictEqual(err.code, 'EPROTO');
      assert.strictEqual(err.syscall, 'write');
      assert.strictEqual(err.errno, -require('node:os').constants.errno.EPROTO);
      assert.match(err.message, /^write EPROTO [0-9A-F]+:error:0A00010B:SSL routines:[a-z_0-9]+:wrong version number:/);
    }
  });

  // OpenSSL's error queue is per thread and shared with node:crypto, some of
  // whose calls report the oldest entry: one left behind by tlswrap would be
  // reported as theirs.
  it("after the failure, node:crypto reports its own error code (OpenSSL's error queue left clean)", async function () {
    const cryptoCode = () => {
      try {
        crypto.createPrivateKey('not a key');
      } catch (err) {
        return err.code;
      }
      return 'no throw';
    };
    const clean = cryptoCode();
    assert.match(clean, /^ERR_OSSL_/);
    reply = noise;
    const client = tlswrap.connect(clientOptions(port));
    const seen = [];
    client.on('error', (err) => seen.push(err.code, cryptoCode()));
    await new Promise((resolve) => client.once('close', resolve));
    seen.push(cryptoCode());
    assert.deepStrictEqual(seen, ['ERR_SSL_WRONG_VERSION_NUMBER', clean, clean]);
  });

  it('peer closes without a word -> ECONNRESET "disconnected before secure TLS connection"', async function () {
    reply = '';
    const client = tlswrap.connect(clientOptions(port));
    let secure = false;
    client.on('secureConnect', () => { secure = true; });
    // As node:tls's, the socket reads the EOF as any other ('end'), and
    // fails from there.
    const events = [];
    client.on('end', () => events.push('end'));
    client.on('error', (e) => events.push(`error ${e.code}`));
    const [err] = await once(client, 'error');
    assert.deepStrictEqual(events, ['end', 'error ECONNRESET']);
    assert.strictEqual(secure, false);
    assert.strictEqual(err.code, 'ECONNRESET');
    assert.match(err.message, /Client network socket disconnected before secure TLS connection was established/);
    assert.strictEqual(err.host, '127.0.0.1');
    assert.strictEqual(err.port, port);
    if (!client.closed) await once(client, 'close');
  });

  // As node:tls's write request, a write waiting behind the handshake is
  // called back once the socket has failed: after 'error', before 'close'
  // (node 20 with no error, 22+ with ECANCELED), over TCP and over a Duplex.
  for (const over of ['tcp', 'duplex']) {
    it(`peer closes mid-handshake with a write pending (${over}): 'end', 'error', the write's callback, 'close'`, async function () {
      reply = '';
      let client;
      if (over === 'tcp') {
        client = tlswrap.connect(clientOptions(port));
      } else {
        const { Duplex } = require('node:stream');
        const duplex = new Duplex({
          read() {},
          write(chunk, encoding, callback) {
            callback();
            setImmediate(() => this.push(null));
          },
        });
        client = tlswrap.connect({ ...clientOptions(port), socket: duplex });
      }
      const events = [];
      client.write('early', (err) => events.push(`write ${err ? err.code : 'null'}`));
      client.on('end', () => events.push('end'));
      client.on('error', (e) => events.push(`error ${e.code}`));
      client.resume();
      await new Promise((resolve) => client.once('close', resolve));
      const nodeNoError = builtin && Number(process.versions.node.split('.')[0]) < 22;
      assert.deepStrictEqual(events, ['end', 'error ECONNRESET', nodeNoError ? 'write null' : 'write ECANCELED']);
    });
  }
});

// node:tls words a TLS error the way OpenSSL prints the first error of its
// queue: thread, code, library, function, reason, source file and line. The
// same bytes against node:tls and the implementation under test, in this
// process and on this thread, must give the same text. OpenSSL 3.2+ queues a
// second, generic "record layer failure" behind record layer errors (the
// empty records here), which node leaves out.
describe('the message of a TLS error is node:tls\'s, word for word', function () {
  const nodeTls = require('node:tls');
  const emptyRecords = Buffer.concat(Array(40).fill(Buffer.from([0x16, 0x03, 0x03, 0x00, 0x00])));
  const cases = [
    ['fixed random bytes', noise],
    ['an HTTP GET request', 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'],
    ['a handshake record holding junk', Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05]), Buffer.from('hello')])],
    ['40 empty handshake records', emptyRecords],
  ];

  // The tlsClientError of a server of `impl` that gets `bytes`.
  async function serverError(impl, bytes) {
    const server = impl.createServer(serverOptions());
    const errors = [];
    server.on('tlsClientError', (err, sock) => {
      errors.push(err);
      sock.destroy();
    });
    const port = await listen(server);
    try {
      await sendRaw(port, bytes);
      while (errors.length === 0) await new Promise((resolve) => setImmediate(resolve));
      return errors[0];
    } finally {
      await closeServer(server);
    }
  }

  // The 'error' of a client of `impl` whose server answers `bytes`.
  async function clientError(impl, bytes) {
    const server = net.createServer((sock) => {
      sock.on('error', () => {});
      sock.resume();
      sock.end(bytes);
    });
    const port = await listen(server);
    try {
      const client = impl.connect(clientOptions(port));
      const [err] = await once(client, 'error');
      client.destroy();
      return err;
    } finally {
      await closeServer(server);
    }
  }

  for (const [what, bytes] of cases) {
    it(`server: ${what}`, async function () {
      const expected = await serverError(nodeTls, bytes);
      const actual = await serverError(tlswrap, bytes);
      assert.match(expected.message, /:error:[0-9A-F]+:SSL routines:/);
      assert.strictEqual(actual.message, expected.message);
      assert.strictEqual(actual.code, expected.code);
    });
  }

  for (const [what, bytes] of cases) {
    it(`client: a server that answers ${what}`, async function () {
      const expected = await clientError(nodeTls, bytes);
      const actual = await clientError(tlswrap, bytes);
      assert.match(expected.message, /:error:[0-9A-F]+:SSL routines:/);
      assert.strictEqual(actual.message, expected.message);
      assert.strictEqual(actual.code, expected.code);
    });
  }
});

describe('bad certificates and keys in options', function () {
  const garbage = 'this is not PEM';
  const armoredJunk = (label) => `-----BEGIN ${label}-----\nAAAA\n-----END ${label}-----\n`;

  // What node:tls throws for each (OpenSSL 3 decoder / PEM errors).
  const badKey = { name: 'Error', code: 'ERR_OSSL_UNSUPPORTED', library: 'DECODER routines', reason: 'unsupported' };
  const badCert = { name: 'Error', code: 'ERR_OSSL_PEM_NO_START_LINE', library: 'PEM routines', reason: 'no start line' };
  const mismatch = {
    name: 'Error', code: 'ERR_OSSL_X509_KEY_VALUES_MISMATCH',
    library: 'x509 certificate routines', reason: 'key values mismatch',
  };

  it('createSecureContext: key that is not PEM throws ERR_OSSL_UNSUPPORTED', function () {
    assert.throws(() => tlswrap.createSecureContext({ key: garbage, cert: fixtures.serverCert }), badKey);
  });

  it('createSecureContext: PEM armor around junk key throws ERR_OSSL_UNSUPPORTED', function () {
    assert.throws(() => tlswrap.createSecureContext({ key: armoredJunk('PRIVATE KEY'), cert: fixtures.serverCert }), badKey);
  });

  it('createSecureContext: cert that is not PEM throws ERR_OSSL_PEM_NO_START_LINE', function () {
    assert.throws(() => tlswrap.createSecureContext({ key: fixtures.serverKey, cert: garbage }), badCert);
  });

  it('createSecureContext: PEM armor around junk cert throws ERR_OSSL_ASN1_WRONG_TAG', function () {
    assert.throws(() => tlswrap.createSecureContext({ key: fixtures.serverKey, cert: armoredJunk('CERTIFICATE') }),
      { name: 'Error', code: 'ERR_OSSL_ASN1_WRONG_TAG', library: 'asn1 encoding routines', reason: 'wrong tag' });
  });

  it('createSecureContext: key, cert, ca of the wrong type throw ERR_INVALID_ARG_TYPE', function () {
    for (const opt of ['key', 'cert', 'ca']) {
      assert.throws(() => tlswrap.createSecureContext({ [opt]: 42 }),
        { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: new RegExp(`"options\\.${opt}" property`) });
    }
  });

  it("options of the wrong type: node:tls's TypeError, word for word", function () {
    const tls = require('node:tls');
    const { serverKey: key, serverCert: cert } = fixtures;
    const cases = [
      ['createServer', 'this is not valid'],
      ['createServer', { key: true, cert }],
      ['createServer', { key, cert: true }],
      ['createServer', { key, cert, ca: 1 }],
      ['createServer', { key, cert, ca: {} }],
      ['createServer', { key, cert, ca: [fixtures.ca, true] }],
      // Only an array's entries may be { pem, passphrase }.
      ['createServer', { key: { pem: key }, cert }],
      ['createServer', { key: [{ passphrase: 'x' }], cert }],
      ['createSecureContext', { ciphers: 1 }],
      ['createSecureContext', { ecdhCurve: 5 }],
      ['createSecureContext', { sessionIdContext: 123 }],
      ['createServer', { key, cert, sessionIdContext: Buffer.from('tenant-a') }],
      ['createServer', { key, cert, SNICallback: 'x' }],
      ['connect', { port: 1, host: '127.0.0.1', signal: {} }],
    ];
    const thrown = (impl, fn, arg) => {
      try {
        const made = impl[fn](arg);
        if (made && typeof made.destroy === 'function') made.destroy();
        if (made && typeof made.close === 'function') made.close();
      } catch (err) {
        return `${err.name} ${err.code}: ${err.message}`;
      }
      return 'no throw';
    };
    for (const [fn, arg] of cases) {
      const expected = thrown(tls, fn, arg);
      assert.match(expected, /^TypeError ERR_INVALID_ARG_TYPE: /, `${fn}(${JSON.stringify(arg)})`);
      assert.strictEqual(thrown(tlswrap, fn, arg), expected, `${fn}(${JSON.stringify(arg)})`);
    }
  });

  it('createServer: bad key / bad cert throw synchronously, as createSecureContext does', function () {
    assert.throws(() => tlswrap.createServer({ key: garbage, cert: fixtures.serverCert }), badKey);
    assert.throws(() => tlswrap.createServer({ key: fixtures.serverKey, cert: garbage }), badCert);
  });

  it('connect: bad client key / cert throw synchronously', function () {
    // Port 1 is never reached: the throw comes before any socket is made.
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', key: garbage, cert: fixtures.clientCert }), badKey);
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', key: fixtures.clientKey, cert: garbage }), badCert);
  });

  it('key/cert mismatch throws ERR_OSSL_X509_KEY_VALUES_MISMATCH (context, server, connect)', function () {
    assert.throws(() => tlswrap.createSecureContext({ key: fixtures.otherKey, cert: fixtures.serverCert }), mismatch);
    assert.throws(() => tlswrap.createServer({ key: fixtures.otherKey, cert: fixtures.serverCert }), mismatch);
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', key: fixtures.otherKey, cert: fixtures.clientCert }),
      mismatch);
  });

  it('encrypted key with a wrong or missing passphrase throws ERR_OSSL_BAD_DECRYPT', function () {
    const badDecrypt = { name: 'Error', code: 'ERR_OSSL_BAD_DECRYPT', reason: 'bad decrypt' };
    assert.throws(() => tlswrap.createSecureContext({
      key: fixtures.serverKeyEncrypted, cert: fixtures.serverCert, passphrase: 'wrong',
    }), badDecrypt);
    assert.throws(() => tlswrap.createSecureContext({ key: fixtures.serverKeyEncrypted, cert: fixtures.serverCert }),
      badDecrypt);
  });

  it('pfx with a wrong or missing passphrase throws Error "mac verify failure" (no code, as node)', function () {
    for (const passphrase of ['wrong', undefined]) {
      assert.throws(() => tlswrap.createSecureContext({ pfx: fixtures.serverPfx, passphrase }), (err) => {
        assert.ok(err instanceof Error);
        assert.strictEqual(err.message, 'mac verify failure');
        assert.strictEqual(err.code, undefined);
        return true;
      });
    }
  });

  it('pfx that is not PKCS#12 throws Error "not enough data"', function () {
    assert.throws(() => tlswrap.createSecureContext({ pfx: Buffer.from('garbage') }),
      { name: 'Error', message: 'not enough data' });
  });

  it('a ca that is not PEM is ignored, as node does: no throw, and nothing is trusted', async function () {
    // node skips what it cannot parse in `ca`; the damage shows only at verify time.
    assert.doesNotThrow(() => tlswrap.createSecureContext({ ca: garbage }));
    assert.doesNotThrow(() => tlswrap.createSecureContext({ ca: armoredJunk('CERTIFICATE') }));
    const server = tlswrap.createServer(serverOptions());
    server.on('tlsClientError', () => {});
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port, { ca: garbage }));
      const [err] = await once(client, 'error');
      assert.strictEqual(err.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      if (!client.closed) await once(client, 'close');
    } finally {
      await closeServer(server);
    }
  });
});

describe('impossible options', function () {
  it("minVersion / maxVersion 'TLSv9' throw ERR_TLS_INVALID_PROTOCOL_VERSION", function () {
    const invalid = (which) => ({
      name: 'TypeError', code: 'ERR_TLS_INVALID_PROTOCOL_VERSION',
      message: `"TLSv9" is not a valid ${which} TLS protocol version`,
    });
    assert.throws(() => tlswrap.createSecureContext({ minVersion: 'TLSv9' }), invalid('minimum'));
    assert.throws(() => tlswrap.createSecureContext({ maxVersion: 'TLSv9' }), invalid('maximum'));
    assert.throws(() => tlswrap.createServer(serverOptions({ minVersion: 'TLSv9' })), invalid('minimum'));
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', minVersion: 'TLSv9' }), invalid('minimum'));
  });

  it('unknown secureProtocol throws ERR_TLS_INVALID_PROTOCOL_METHOD', function () {
    assert.throws(() => tlswrap.createSecureContext({ secureProtocol: 'NopeMethod' }),
      { name: 'TypeError', code: 'ERR_TLS_INVALID_PROTOCOL_METHOD', message: 'Unknown method: NopeMethod' });
  });

  it('minVersion > maxVersion does not throw; the handshake fails with ERR_SSL_NO_PROTOCOLS_AVAILABLE', async function () {
    const impossible = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.2' };
    assert.doesNotThrow(() => tlswrap.createSecureContext(impossible));

    // Impossible server: it reports no protocols, the client hears protocol_version.
    const server = tlswrap.createServer(serverOptions(impossible));
    const serverErr = once(server, 'tlsClientError');
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port));
      const [err] = await once(client, 'error');
      assert.strictEqual(err.code, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
      const [sErr] = await serverErr;
      assert.strictEqual(sErr.code, 'ERR_SSL_NO_PROTOCOLS_AVAILABLE');
      assert.strictEqual(sErr.reason, 'no protocols available');
      if (!client.closed) await once(client, 'close');
    } finally {
      await closeServer(server);
    }

    // Impossible client: it fails before a byte of handshake, asynchronously.
    const server2 = tlswrap.createServer(serverOptions());
    server2.on('tlsClientError', () => {});
    const port2 = await listen(server2);
    try {
      const client = tlswrap.connect(clientOptions(port2, impossible));
      let secure = false;
      client.on('secureConnect', () => { secure = true; });
      const [err] = await once(client, 'error');
      assert.strictEqual(secure, false);
      assert.strictEqual(err.code, 'ERR_SSL_NO_PROTOCOLS_AVAILABLE');
      if (!client.closed) await once(client, 'close');
    } finally {
      await closeServer(server2);
    }
  });

  // A write made while connecting reaches node:tls's SSL_write after the
  // start has failed: the socket reports the TLS error, the write only
  // 'write EPROTO' (what https.get() with impossible versions meets).
  it('minVersion > maxVersion with a write pending: the socket fails with ERR_SSL_NO_PROTOCOLS_AVAILABLE, the write with write EPROTO', async function () {
    const server = tlswrap.createServer(serverOptions());
    server.on('tlsClientError', () => {});
    const port = await listen(server);
    try {
      const client = tlswrap.connect(clientOptions(port, { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.2' }));
      const order = [];
      const written = new Promise((resolve) => client.write('GET / HTTP/1.1\r\n\r\n', (err) => {
        order.push('write');
        resolve(err);
      }));
      const [err] = await once(client, 'error');
      order.push('error');
      const writeErr = await written;
      assert.strictEqual(err.code, 'ERR_SSL_NO_PROTOCOLS_AVAILABLE');
      assert.strictEqual(writeErr.code, 'EPROTO');
      assert.strictEqual(writeErr.syscall, 'write');
      assert.strictEqual(writeErr.message, 'write EPROTO');
      assert.deepStrictEqual(order, ['write', 'error']);
      if (!client.closed) await once(client, 'close');
    } finally {
      await closeServer(server);
    }
  });

  // node:tls reads a falsy value of most options as no value, checks the
  // rest with the errors below; config-driven programs pass null and ''.
  it("falsy options are no options, and the version and secureOptions checks are node:tls's, word for word", function () {
    const net = require('node:net');
    const { key, cert } = serverOptions();
    const outcome = (make) => {
      try {
        const made = make();
        if (made && typeof made.destroy === 'function') {
          made.on('error', () => {});
          made.destroy();
        } else if (made instanceof net.Server) {
          made.close();
        }
        return 'ok';
      } catch (err) {
        return `${err.name} ${err.code} ${err.message}`;
      }
    };
    const cases = {
      'createSecureContext(false)': (t) => t.createSecureContext(false),
      "createSecureContext('')": (t) => t.createSecureContext(''),
      'minVersion null': (t) => t.createSecureContext({ minVersion: null, maxVersion: null }),
      'minVersion -1': (t) => t.createSecureContext({ minVersion: -1 }),
      'maxVersion {}': (t) => t.createSecureContext({ maxVersion: {} }),
      "minVersion 'TLSv9'": (t) => t.createSecureContext({ minVersion: 'TLSv9' }),
      'secureProtocol null': (t) => t.createSecureContext({ secureProtocol: null }),
      'secureProtocol {}': (t) => t.createSecureContext({ secureProtocol: {} }),
      "secureProtocol ''": (t) => t.createSecureContext({ secureProtocol: '' }),
      'secureProtocol and minVersion': (t) => t.createSecureContext({ secureProtocol: 'TLSv1_2_method', minVersion: 'TLSv1.2' }),
      'secureOptions 1.5': (t) => t.createSecureContext({ secureOptions: 1.5 }),
      'secureOptions 2**53': (t) => t.createSecureContext({ secureOptions: 2 ** 53 }),
      "secureOptions 'x'": (t) => t.createSecureContext({ secureOptions: 'x' }),
      "secureOptions 'x', honorCipherOrder": (t) => t.createSecureContext({ secureOptions: 'x', honorCipherOrder: true }),
      'crl [null]': (t) => t.createSecureContext({ crl: [null] }),
      'createSecureContext([])': (t) => t.createSecureContext([]),
      'crl false': (t) => t.createSecureContext({ crl: false }),
      'pfx false': (t) => t.createSecureContext({ pfx: false }),
      "sigalgs ''": (t) => t.createSecureContext({ sigalgs: '' }),
      'connect, session true': (t) => t.connect({ port: 1, host: '127.0.0.1', session: true }),
      'connect, minDHSize -1': (t) => t.connect({ port: 1, host: '127.0.0.1', minDHSize: -1 }),
      'pfx true': (t) => t.createSecureContext({ pfx: true }),
      'pfx [{ buf: 1 }]': (t) => t.createSecureContext({ pfx: [{ buf: 1 }] }),
      'pfx, passphrase 1': (t) => t.createSecureContext({ pfx: fixtures.serverPfx, passphrase: 1 }),
      'crl 5': (t) => t.createSecureContext({ crl: 5 }),
      'server, falsy options': (t) => t.createServer({
        key, cert, ciphers: false, minVersion: 0, maxVersion: '', secureProtocol: '', crl: 0, ca: '', dhparam: null,
        SNICallback: null, handshakeTimeout: null, ALPNCallback: null, secureOptions: NaN,
      }),
      'connect, falsy signal and ALPNProtocols': (t) => t.connect({
        port: 1, host: '127.0.0.1', signal: null, ALPNProtocols: false, minVersion: null,
      }),
      'TLSSocket options 5': (t) => new t.TLSSocket(new net.Socket(), 5),
    };
    for (const [name, make] of Object.entries(cases)) {
      assert.strictEqual(outcome(() => make(tlswrap)), outcome(() => make(tls)), name);
    }
  });

  it("setTimeout(): node:tls's checks of the duration and the callback, word for word", function () {
    const outcome = (impl, msecs, callback) => {
      const socket = impl.connect({ port: 1, host: '127.0.0.1' });
      socket.on('error', () => {});
      try {
        socket.setTimeout(msecs, callback);
        return 'ok';
      } catch (err) {
        return `${err.name} ${err.code} ${err.message}`;
      } finally {
        socket.destroy();
      }
    };
    for (const msecs of [-1, Infinity, NaN, '5', 100]) {
      for (const callback of [undefined, 'x']) {
        assert.strictEqual(outcome(tlswrap, msecs, callback), outcome(tls, msecs, callback), `${msecs} ${callback}`);
      }
    }
  });

  it('connect() with a bad timeout throws before it connects (no connection left to fail unheard)', async function () {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    await new Promise((resolve) => server.close(resolve));
    const outcome = async (impl, timeout) => {
      const connects = [];
      const onConnect = (...args) => connects.push(args);
      const original = net.Socket.prototype.connect;
      net.Socket.prototype.connect = function (...args) {
        onConnect(...args);
        return Reflect.apply(original, this, args);
      };
      let thrown;
      try {
        impl.connect({ host: '127.0.0.1', port, timeout });
      } catch (err) {
        thrown = `${err.name} ${err.code}`;
      } finally {
        net.Socket.prototype.connect = original;
      }
      return `${thrown} connects=${connects.length}`;
    };
    for (const timeout of ['x', -1, {}]) {
      assert.strictEqual(await outcome(tlswrap, timeout), await outcome(tls, timeout), String(timeout));
    }
  });

  // A string first argument is a port when it reads as a number, as net's.
  it("connect(port string, host): read as node:tls reads it; a fresh socket's getCipher() and setSession()", async function () {
    const outcome = async (impl, args) => {
      let socket;
      try {
        socket = impl.connect(...args);
      } catch (err) {
        return `${err.name} ${err.code}`;
      }
      const [err] = await once(socket, 'error');
      socket.destroy();
      return `${err.code} ${err.port}`;
    };
    for (const args of [['', '127.0.0.1'], [' 1 ', '127.0.0.1'], ['0x1', '127.0.0.1']]) {
      assert.strictEqual(await outcome(tlswrap, args), await outcome(tls, args), JSON.stringify(args));
    }
    const fresh = (impl) => {
      const socket = impl.connect({ port: 1, host: '127.0.0.1' });
      socket.on('error', () => {});
      let set;
      try {
        socket.setSession(undefined);
        set = 'ok';
      } catch (err) {
        set = err.code;
      }
      const seen = { cipher: socket.getCipher(), set };
      socket.destroy();
      return seen;
    };
    assert.deepStrictEqual(fresh(tlswrap), fresh(tls));
  });

  // OpenSSL offers TLS 1.2 instead of 1.3 from a server whose certificate
  // TLS 1.3 cannot sign with, unless it has a certificate callback: node:tls's
  // servers always have one, so they pick TLS 1.3 and fail there.
  it('server sigalgs its certificate cannot sign with in TLS 1.3: the handshake fails as on node:tls, SNICallback or not', async function () {
    const ecKey = fixture('server-ec-key.pem');
    const ecCert = fixture('server-ec-cert.pem');
    for (const extra of [{}, { SNICallback: (name, cb) => cb(null) }]) {
      // ECDSA+SHA384 is ecdsa_secp384r1_sha384 in TLS 1.3: not for a P-256 key.
      const server = tlswrap.createServer({ key: ecKey, cert: ecCert, sigalgs: 'ECDSA+SHA384', ...extra });
      server.on('secureConnection', (socket) => socket.end());
      const serverError = once(server, 'tlsClientError');
      const port = await listen(server);
      const client = tlswrap.connect(clientOptions(port, { rejectUnauthorized: false }));
      const secure = once(client, 'secureConnect').then(() => client.getProtocol());
      const [clientErr] = await Promise.race([once(client, 'error'), secure.then((p) => [{ code: `connected over ${p}` }])]);
      assert.match(clientErr.code, /^ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_HANDSHAKE_FAILURE$/);
      const [err] = await serverError;
      assert.strictEqual(err.code, 'ERR_SSL_NO_SUITABLE_SIGNATURE_ALGORITHM');
      await closeServer(server);
    }
  });

  it('unknown cipher list throws ERR_SSL_NO_CIPHER_MATCH', function () {
    const noMatch = { name: 'Error', code: 'ERR_SSL_NO_CIPHER_MATCH', library: 'SSL routines', reason: 'no cipher match' };
    assert.throws(() => tlswrap.createSecureContext({ ciphers: 'NOT-A-CIPHER' }), noMatch);
    assert.throws(() => tlswrap.createServer(serverOptions({ ciphers: 'NOT-A-CIPHER' })), noMatch);
    assert.throws(() => tlswrap.createSecureContext({ ciphers: 1 }),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /"options\.ciphers" property must be of type string/ });
  });

  it('bad ecdhCurve throws ERR_CRYPTO_OPERATION_FAILED "Failed to set ECDH curve"', function () {
    const failed = { name: 'Error', code: 'ERR_CRYPTO_OPERATION_FAILED', message: 'Failed to set ECDH curve' };
    assert.throws(() => tlswrap.createSecureContext({ ecdhCurve: 'no-such-curve' }), failed);
    assert.throws(() => tlswrap.createSecureContext({ ecdhCurve: 'P-256:no-such-curve' }), failed);
    assert.throws(() => tlswrap.createServer(serverOptions({ ecdhCurve: 'no-such-curve' })), failed);
    assert.doesNotThrow(() => tlswrap.createSecureContext({ ecdhCurve: 'auto' }));
  });

  it('ALPNProtocols of the wrong type', function () {
    const argType = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
    assert.throws(() => tlswrap.createServer(serverOptions({ ALPNProtocols: [1, 2] })), argType);
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', ALPNProtocols: [1, 2] }), argType);
    // A protocol name longer than 255 bytes cannot be encoded.
    const tooLong = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
    assert.throws(() => tlswrap.createServer(serverOptions({ ALPNProtocols: ['a'.repeat(300)] })), tooLong);
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', ALPNProtocols: ['a'.repeat(300)] }), tooLong);
    // A bare string on the client side is a TypeError too (node's native check).
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', ALPNProtocols: 'h2' }), { name: 'TypeError' });
  });

  // OpenSSL takes at most 32 bytes: cut short, two contexts that differ only
  // after them would share sessions. node:tls throws a TypeError whose
  // message is OpenSSL's error as printed, with no code.
  it('sessionIdContext over 32 bytes (UTF-8) throws node:tls\'s TypeError, word for word', function () {
    const tls = require('node:tls');
    const thrown = (impl, fn, arg) => {
      try {
        impl[fn](arg);
      } catch (err) {
        return { name: err.name, code: err.code, message: err.message };
      }
      return 'no throw';
    };
    const tooLong = ['x'.repeat(33), 'é'.repeat(17)];
    for (const sessionIdContext of tooLong) {
      for (const [fn, arg] of [['createSecureContext', { sessionIdContext }],
        ['createServer', serverOptions({ sessionIdContext })]]) {
        const expected = thrown(tls, fn, arg);
        assert.strictEqual(expected.name, 'TypeError');
        assert.match(expected.message, /ssl session id context too long/);
        assert.deepStrictEqual(thrown(tlswrap, fn, arg), expected, `${fn} ${sessionIdContext}`);
      }
    }
    // 32 bytes, or none, are fine.
    tlswrap.createSecureContext({ sessionIdContext: 'x'.repeat(32) });
    tlswrap.createSecureContext({ sessionIdContext: 'é'.repeat(16) });
    tlswrap.createSecureContext({ sessionIdContext: '' });
  });

  it('other option types node checks: ticketKeys length, handshakeTimeout, SNICallback', function () {
    assert.throws(() => tlswrap.createServer(serverOptions({ ticketKeys: Buffer.alloc(10) })),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: /must be exactly 48 bytes/ });
    assert.throws(() => tlswrap.createServer(serverOptions({ handshakeTimeout: 'x' })),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => tlswrap.createServer(serverOptions({ SNICallback: 42 })),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  });

  it("connect: session of the wrong type throws; bytes that are no session give a full handshake", async function () {
    assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', session: 42 }),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }, 'session 42');
    // A string: node:tls 24.22 on reads it as latin1 bytes, before it throws.
    const outcome = (impl) => {
      try {
        const socket = impl.connect({ port: 1, host: '127.0.0.1', session: 'x' });
        socket.on('error', () => {});
        socket.destroy();
        return 'taken';
      } catch (err) {
        return `${err.name} ${err.code}`;
      }
    };
    assert.match(outcome(tls), /^(taken|TypeError ERR_INVALID_ARG_TYPE)$/);
    assert.strictEqual(outcome(tlswrap), outcome(tls), 'session x');
    const server = tlswrap.createServer(serverOptions(), (socket) => socket.end('x'));
    const port = await listen(server);
    try {
      for (const session of [Buffer.from('junk'), new Uint8Array(5)]) {
        const client = tlswrap.connect(clientOptions(port, { session }));
        const errors = [];
        client.on('error', (err) => errors.push(err));
        await once(client, 'secureConnect');
        assert.strictEqual(client.isSessionReused(), false);
        client.resume();
        await once(client, 'close');
        // node:tls then emits the decoder's error from OpenSSL's queue as
        // well, after the connection worked; tlswrap leaves it out.
        if (!builtin) assert.deepStrictEqual(errors, []);
      }
    } finally {
      await closeServer(server);
    }
  });

  it("connect: a secureContext that is not one throws node:tls's ERR_TLS_INVALID_CONTEXT", function () {
    for (const secureContext of [{}, 'x', 42]) {
      assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', secureContext }),
        { name: 'TypeError', code: 'ERR_TLS_INVALID_CONTEXT', message: 'context must be a SecureContext' });
      // With a session cache (as tlswrap/https's Agent has), before the
      // cache keys on it.
      if (!builtin) {
        assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', secureContext, sessionCache: true }),
          { name: 'TypeError', code: 'ERR_TLS_INVALID_CONTEXT', message: 'context must be a SecureContext' });
      }
    }
    // tlswrap cannot use node:tls's own: the same code, and what to use.
    if (!builtin) {
      assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', secureContext: tls.createSecureContext() }),
        { name: 'TypeError', code: 'ERR_TLS_INVALID_CONTEXT', message: /tlswrap's createSecureContext/ });
    }
  });

  // secureContext.context is public (node:tls has it too, and aborts the
  // process on a non-Buffer here). tlswrap's native methods throw coded
  // TypeErrors instead.
  it('the native context and handle: a non-Buffer argument is ERR_INVALID_ARG_TYPE, not a crash', function () {
    if (builtin) this.skip();
    const { context } = tlswrap.createSecureContext();
    for (const keys of [undefined, 'x'.repeat(48), 5, {}]) {
      assert.throws(() => context.setTicketKeys(keys),
        { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'The "keys" argument must be an instance of Buffer' });
    }
    for (const keys of [Buffer.alloc(0), Buffer.alloc(47), Buffer.alloc(49)]) {
      assert.throws(() => context.setTicketKeys(keys), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
    }
    context.setTicketKeys(Buffer.alloc(96, 7));
    assert.deepStrictEqual(context.getTicketKeys(), Buffer.alloc(48, 7));
    const socket = new tlswrap.TLSSocket(null);
    for (const [method, name] of [['setSession', 'session'], ['setALPNProtocols', 'protocols'], ['receive', 'chunk']]) {
      assert.throws(() => socket._handle[method](42),
        { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: `The "${name}" argument must be an instance of Buffer` }, method);
    }
    socket.destroy();
  });

  // node:tls asserts these in connect(), before any connection is made. A
  // check that is not a function must not wait for the handshake to throw
  // (from its listener, where nothing catches it and the process ends).
  // Node 20 asserts them; Node 21 on validates them as arguments, with
  // node's messages.
  it('connect: checkServerIdentity that is not a function, minDHSize not a positive number: thrown at once', function () {
    const asserts = Number(process.versions.node.split('.')[0]) < 21;
    for (const checkServerIdentity of [undefined, null, 'x', 42]) {
      assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', checkServerIdentity }),
        asserts ? { name: 'Error', code: 'ERR_INTERNAL_ASSERTION' } : {
          name: 'TypeError',
          code: 'ERR_INVALID_ARG_TYPE',
          message: /^The "options\.checkServerIdentity" property must be of type function\. Received /,
        }, `checkServerIdentity ${checkServerIdentity}`);
    }
    for (const [minDHSize, received] of [['x', "type string ('x')"], [0, '0'], [-1, '-1'], [NaN, 'NaN']]) {
      let expected = { name: 'Error', code: 'ERR_INTERNAL_ASSERTION', message: /^options\.minDHSize is not/ };
      if (!asserts && typeof minDHSize !== 'number') {
        expected = {
          name: 'TypeError',
          code: 'ERR_INVALID_ARG_TYPE',
          message: `The "options.minDHSize" property must be of type number. Received ${received}`,
        };
      } else if (!asserts) {
        expected = {
          name: 'RangeError',
          code: 'ERR_OUT_OF_RANGE',
          message: `The value of "options.minDHSize" is out of range. It must be >= 1. Received ${received}`,
        };
      }
      assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', minDHSize }), expected, `minDHSize ${minDHSize}`);
    }
  });
});
