'use strict';

// SNI (SNICallback, addContext, the client's servername, the server socket's
// servername) and ALPN (strings, wire-format buffers, ALPNCallback, no overlap).

const assert = require('node:assert');
const { once } = require('node:events');
const net = require('node:net');
const tls = require('node:tls');
const { builtin, captureClientHello, fixtures, tlswrap, serverOptions, listen, closeServer } = require('./common');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const otherOptions = { key: fixtures.otherKey, cert: fixtures.otherCert };

// Connects one client to a fresh server and reports both sides once closed.
async function handshake(serverOpts, clientOpts, setup) {
  const server = tlswrap.createServer(serverOpts);
  if (setup) setup(server);
  const result = { server: { events: [] }, client: { events: [] } };
  server.on('secureConnection', (sock) => {
    result.server.events.push('secureConnection');
    result.server.servername = sock.servername;
    result.server.alpnProtocol = sock.alpnProtocol;
    sock.on('error', () => {});
  });
  server.on('tlsClientError', (err) => {
    result.server.events.push('tlsClientError');
    result.server.error = err;
  });
  const port = await listen(server);
  try {
    const client = tlswrap.connect({ host: '127.0.0.1', port, ca: fixtures.ca, ...clientOpts });
    client.on('secureConnect', () => {
      result.client.events.push('secureConnect');
      result.client.authorized = client.authorized;
      result.client.authorizationError = client.authorizationError;
      result.client.cn = client.getPeerCertificate().subject.CN;
      result.client.alpnProtocol = client.alpnProtocol;
      client.end();
    });
    client.on('error', (err) => {
      result.client.events.push('error');
      result.client.error = err;
    });
    client.resume();
    await new Promise((resolve) => client.on('close', resolve));
    // The server side may report a beat after the client has gone.
    if (result.server.events.length === 0) {
      await Promise.race([once(server, 'secureConnection'), once(server, 'tlsClientError')]);
    }
    return result;
  } finally {
    await closeServer(server);
  }
}

describe('SNI', function () {
  it('SNICallback answering synchronously picks other.example\'s context', async function () {
    const calls = [];
    const other = tlswrap.createSecureContext(otherOptions);
    const r = await handshake(serverOptions({
      SNICallback: (name, cb) => { calls.push(name); cb(null, other); },
    }), { servername: 'other.example' });
    assert.deepStrictEqual(calls, ['other.example']);
    assert.deepStrictEqual(r.client.events, ['secureConnect']);
    assert.strictEqual(r.client.authorized, true);
    assert.strictEqual(r.client.cn, 'other.example');
    assert.strictEqual(r.server.servername, 'other.example');
  });

  it('SNICallback answering later (async) works the same', async function () {
    const other = tlswrap.createSecureContext(otherOptions);
    const r = await handshake(serverOptions({
      SNICallback: (name, cb) => setTimeout(() => cb(null, name === 'other.example' ? other : null), 20),
    }), { servername: 'other.example' });
    assert.deepStrictEqual(r.client.events, ['secureConnect']);
    assert.strictEqual(r.client.cn, 'other.example');
    assert.strictEqual(r.server.servername, 'other.example');
  });

  it('SNICallback answering no context keeps the default certificate', async function () {
    const r = await handshake(serverOptions({ SNICallback: (name, cb) => cb(null) }), { servername: 'localhost' });
    assert.deepStrictEqual(r.client.events, ['secureConnect']);
    assert.strictEqual(r.client.cn, 'localhost');
    assert.strictEqual(r.client.authorized, true);
  });

  it('SNICallback answering a context with no certificate keeps the default certificate', async function () {
    const empty = tlswrap.createSecureContext();
    const r = await handshake(serverOptions({ SNICallback: (name, cb) => cb(null, empty) }), { servername: 'localhost' });
    assert.deepStrictEqual(r.client.events, ['secureConnect']);
    assert.strictEqual(r.client.cn, 'localhost');
    assert.strictEqual(r.client.authorized, true);
  });

  it('SNICallback error: server tlsClientError with that very error, client ECONNRESET', async function () {
    const boom = new Error('boom');
    const r = await handshake(serverOptions({ SNICallback: (name, cb) => cb(boom) }), { servername: 'other.example' });
    assert.deepStrictEqual(r.server.events, ['tlsClientError']);
    assert.strictEqual(r.server.error, boom);
    assert.deepStrictEqual(r.client.events, ['error']);
    assert.strictEqual(r.client.error.code, 'ECONNRESET');
  });

  it("SNICallback answering an object that is not a SecureContext: TypeError('Invalid SNI context')", async function () {
    // node:tls's own SecureContext is such an object for tlswrap; a plain
    // object is one for both.
    for (const bad of [{}, { context: {} }]) {
      const r = await handshake(serverOptions({ SNICallback: (name, cb) => cb(null, bad) }), { servername: 'other.example' });
      assert.deepStrictEqual(r.server.events, ['tlsClientError']);
      assert.ok(r.server.error instanceof TypeError);
      assert.strictEqual(r.server.error.message, 'Invalid SNI context');
      assert.strictEqual(r.server.error.code, undefined);
      assert.deepStrictEqual(r.client.events, ['error']);
      assert.strictEqual(r.client.error.code, 'ECONNRESET');
    }
  });

  // A context that only looks like one (its prototype is a native
  // context's) gets node:tls's uncoded TypeError.
  it('SNICallback answering an Object.create() of a native context: TypeError(\'Invalid SNI context\'), no crash', async function () {
    const fake = Object.create(tlswrap.createSecureContext(otherOptions).context);
    const r = await handshake(serverOptions({ SNICallback: (name, cb) => cb(null, fake) }), { servername: 'other.example' });
    assert.deepStrictEqual(r.server.events, ['tlsClientError']);
    assert.ok(r.server.error instanceof TypeError);
    assert.strictEqual(r.server.error.message, 'Invalid SNI context');
    assert.strictEqual(r.server.error.code, undefined);
  });

  // tlswrap's own message: node:tls's SecureContext, which node:tls takes
  // and tlswrap cannot use.
  it('SNICallback answering node:tls\'s SecureContext: a TypeError that says what to use, no crash', async function () {
    if (builtin) this.skip();
    const nodeContext = tls.createSecureContext(otherOptions);
    const r = await handshake(serverOptions({ SNICallback: (name, cb) => cb(null, nodeContext) }), { servername: 'other.example' });
    assert.deepStrictEqual(r.server.events, ['tlsClientError']);
    assert.ok(r.server.error instanceof TypeError);
    assert.match(r.server.error.message, /^Invalid SNI context: .*node:tls's createSecureContext/);
  });

  // node:tls: a second answer fails the connection, during the handshake or
  // after it.
  it('SNICallback answering twice: ERR_MULTIPLE_CALLBACK, as tlsClientError or on the established socket', async function () {
    let r = await handshake(serverOptions({ SNICallback: (name, cb) => { cb(null, null); cb(null, null); } }),
      { servername: 'localhost' });
    assert.deepStrictEqual(r.server.events, ['tlsClientError']);
    assert.strictEqual(r.server.error.code, 'ERR_MULTIPLE_CALLBACK');
    assert.strictEqual(r.server.error.message, 'Callback called multiple times');
    let answer = null;
    const server = tlswrap.createServer(serverOptions({ SNICallback: (name, cb) => { answer = cb; cb(null, null); } }));
    const failed = new Promise((resolve) => {
      server.on('secureConnection', (sock) => {
        sock.on('error', resolve);
        answer(null, null);
      });
    });
    const port = await listen(server);
    try {
      const client = tlswrap.connect({ host: '127.0.0.1', port, ca: fixtures.ca, servername: 'localhost' });
      client.on('error', () => {});
      const err = await failed;
      assert.strictEqual(err.code, 'ERR_MULTIPLE_CALLBACK');
      client.destroy();
    } finally {
      await closeServer(server);
    }
  });

  it('SNICallback answering a primitive keeps the default certificate, as no context does', async function () {
    for (const bad of ['nope', 42, true]) {
      const r = await handshake(serverOptions({ SNICallback: (name, cb) => cb(null, bad) }), { servername: 'localhost' });
      assert.deepStrictEqual(r.client.events, ['secureConnect'], String(bad));
      assert.strictEqual(r.client.cn, 'localhost');
    }
  });

  it('SNICallback that throws: server tlsClientError with that error, client ECONNRESET, no crash', async function () {
    const boom = new Error('thrown in SNICallback');
    const r = await handshake(serverOptions({ SNICallback: () => { throw boom; } }), { servername: 'other.example' });
    assert.deepStrictEqual(r.server.events, ['tlsClientError']);
    assert.strictEqual(r.server.error, boom);
    assert.deepStrictEqual(r.client.events, ['error']);
    assert.strictEqual(r.client.error.code, 'ECONNRESET');
  });

  it('no SNI sent (IP host, no servername): SNICallback not called, server servername is false', async function () {
    let called = 0;
    const r = await handshake(serverOptions({ SNICallback: (name, cb) => { called++; cb(null); } }), {});
    assert.strictEqual(called, 0);
    assert.deepStrictEqual(r.client.events, ['secureConnect']);
    assert.strictEqual(r.client.authorized, true); // 127.0.0.1 is an IP SAN
    assert.strictEqual(r.server.servername, false);
  });

  it("servername '' sends no SNI either", async function () {
    const r = await handshake(serverOptions(), { servername: '' });
    assert.strictEqual(r.server.servername, false);
  });

  describe('a ClientHello whose server_name is not one host name', function () {
    // node:tls 22 and 24 read the name in their ClientHello callback and
    // fail the handshake (decode_error) for anything but one host_name of 1
    // to 255 bytes without a NUL; node 20 and 26 leave it to OpenSSL, which
    // takes an empty name (and answers the rest with ERR_SSL_BAD_EXTENSION).
    // tlswrap does what node:tls 22 and 24 do, on every Node.
    before(function () {
      if (builtin && ![22, 24].includes(Number(process.versions.node.split('.')[0]))) this.skip();
    });

    // A node:tls client's ClientHello for `localhost`, captured once.
    let hello;
    before(async function () {
      hello = await captureClientHello();
    });

    // `hello` with its server_name extension's body replaced by `body`.
    function withServerName(body) {
      let p = 5 + 4 + 2 + 32;
      p += 1 + hello[p]; // session id
      p += 2 + hello.readUInt16BE(p); // cipher suites
      p += 1 + hello[p]; // compression methods
      const extsAt = p;
      let q = p + 2;
      while (hello.readUInt16BE(q) !== 0) q += 4 + hello.readUInt16BE(q + 2);
      const oldLen = hello.readUInt16BE(q + 2);
      const head = Buffer.alloc(4);
      head.writeUInt16BE(body.length, 2);
      const out = Buffer.concat([hello.subarray(0, q), head, body, hello.subarray(q + 4 + oldLen)]);
      out.writeUInt16BE(out.readUInt16BE(extsAt) + body.length - oldLen, extsAt);
      out.writeUInt16BE(out.length - 5, 3);
      out.writeUIntBE(out.length - 9, 6, 3);
      return out;
    }
    function hostName(name, { type = 0, listDelta = 0, nameDelta = 0 } = {}) {
      const body = Buffer.alloc(5 + name.length);
      body.writeUInt16BE(3 + name.length + listDelta, 0);
      body[2] = type;
      body.writeUInt16BE(name.length + nameDelta, 3);
      name.copy(body, 5);
      return body;
    }

    // What the server says to `body`: its SNICallback's names, its
    // tlsClientError codes, and the first record it answers (22 for a
    // ServerHello, or the alert's description).
    async function serve(body) {
      const names = [];
      const errors = [];
      const server = tlswrap.createServer(serverOptions({
        SNICallback: (name, cb) => { names.push(name); cb(null); },
      }));
      server.on('tlsClientError', (err) => errors.push(err.code));
      const port = await listen(server);
      const sock = net.connect(port, '127.0.0.1', () => sock.write(withServerName(body)));
      sock.on('error', () => {});
      let reply = Buffer.alloc(0);
      sock.on('data', (d) => { reply = Buffer.concat([reply, d]); });
      try {
        const deadline = Date.now() + 5000;
        while (reply.length < 7 && !sock.destroyed && Date.now() < deadline) await sleep(10);
        await sleep(20);
        return { names: [...names], errors: [...errors], reply: reply[0] === 21 ? `alert ${reply[6]}` : reply[0] };
      } finally {
        sock.destroy();
        await closeServer(server);
      }
    }

    const refused = { names: [], errors: ['ERR_SSL_CALLBACK_FAILED'], reply: 'alert 50' };
    for (const [what, body] of [
      ['an empty name', hostName(Buffer.alloc(0))],
      ['a name with a NUL', hostName(Buffer.from('a\0b.example'))],
      ['a name of 256 bytes', hostName(Buffer.alloc(256, 0x61))],
      ['a name type other than host_name', hostName(Buffer.from('a.example'), { type: 1 })],
      ['a list length that is not the rest', hostName(Buffer.from('a.example'), { listDelta: 1 })],
      ['a name length that is not the rest', hostName(Buffer.from('a.example'), { nameDelta: -2 })],
      ['a second entry', Buffer.concat([hostName(Buffer.from('a.example'), { listDelta: 4 }), Buffer.from([1, 0, 1, 0x62])])],
      ['no list at all', Buffer.from([0, 0])],
    ]) {
      it(`${what}: decode_error, tlsClientError ERR_SSL_CALLBACK_FAILED`, async function () {
        assert.deepStrictEqual(await serve(body), refused);
      });
    }

    it('names of 1 and 255 bytes, and bytes above 0x7f, are served', async function () {
      assert.deepStrictEqual(await serve(hostName(Buffer.from('.'))), { names: ['.'], errors: [], reply: 22 });
      const long = 'a'.repeat(255);
      assert.deepStrictEqual(await serve(hostName(Buffer.from(long))), { names: [long], errors: [], reply: 22 });
      assert.deepStrictEqual(await serve(hostName(Buffer.from([0x68, 0xe9, 0x2e, 0x63, 0x6f]))),
        { names: ['h\u00e9.co'], errors: [], reply: 22 });
    });
  });

  describe('server.addContext', function () {
    let server, port;
    before(async function () {
      server = tlswrap.createServer(serverOptions());
      server.on('secureConnection', (sock) => sock.end(sock.servername || '-'));
      // Options object form and SecureContext form.
      server.addContext('other.example', otherOptions);
      server.addContext('*.wild.example', tlswrap.createSecureContext(otherOptions));
      port = await listen(server);
    });
    after(async function () {
      await closeServer(server);
    });

    async function certFor(servername) {
      const client = tlswrap.connect({ host: '127.0.0.1', port, servername, ca: fixtures.ca, rejectUnauthorized: false });
      await once(client, 'secureConnect');
      const cn = client.getPeerCertificate().subject.CN;
      const [echo] = await once(client, 'data');
      client.destroy();
      return { cn, echo: echo.toString(), authorizationError: client.authorizationError };
    }

    it('the matching name gets the added context', async function () {
      assert.deepStrictEqual(await certFor('other.example'),
        { cn: 'other.example', echo: 'other.example', authorizationError: null });
    });

    it('a wildcard matches one label', async function () {
      const r = await certFor('a.wild.example');
      assert.strictEqual(r.cn, 'other.example');
      assert.strictEqual(r.echo, 'a.wild.example');
      // Served other.example's cert, so the name does not match it.
      assert.strictEqual(r.authorizationError, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assert.strictEqual((await certFor('b.a.wild.example')).cn, 'localhost');
    });

    it('other names get the default context', async function () {
      assert.deepStrictEqual(await certFor('localhost'), { cn: 'localhost', echo: 'localhost', authorizationError: null });
    });

    it('the most recently added matching context wins', async function () {
      const localhostOptions = serverOptions();
      const r = await handshake(serverOptions(), { servername: 'x.late.example', rejectUnauthorized: false }, (s) => {
        s.addContext('x.late.example', otherOptions);
        s.addContext('*.late.example', localhostOptions);
      });
      assert.strictEqual(r.client.cn, 'localhost');
      const r2 = await handshake(serverOptions(), { servername: 'x.late.example', rejectUnauthorized: false }, (s) => {
        s.addContext('*.late.example', localhostOptions);
        s.addContext('x.late.example', otherOptions);
      });
      assert.strictEqual(r2.client.cn, 'other.example');
    });

    it('addContext with a non-object context throws ERR_INVALID_ARG_TYPE', function () {
      assert.throws(() => server.addContext('x.example', 5), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    });

    // Read as options, it would be a context with no certificate, and the
    // default one would serve the name without a word.
    it("addContext with node:tls's SecureContext throws ERR_TLS_INVALID_CONTEXT", function () {
      if (builtin) this.skip();
      assert.throws(() => server.addContext('x.example', tls.createSecureContext(otherOptions)),
        { name: 'TypeError', code: 'ERR_TLS_INVALID_CONTEXT', message: /not node:tls's/ });
    });
  });
});

describe('SNI: an IP address as the servername', function () {
  // RFC 6066 forbids it. node:tls sent it anyway with a warning once per
  // process (DEP0123), until Node 26 refused it.
  const nodeRefuses = Function.prototype.toString.call(require('node:tls').connect)
    .includes('Setting the TLS ServerName to an IP address is not permitted.');

  it('refused by connect() as node:tls refuses it, where it does', function () {
    if (!nodeRefuses) this.skip();
    const thrown = (impl) => {
      try {
        impl.connect({ port: 1, host: '127.0.0.1', servername: '127.0.0.1' }).destroy();
      } catch (err) {
        return { name: err.name, code: err.code, message: err.message };
      }
      return 'no throw';
    };
    const expected = thrown(require('node:tls'));
    assert.strictEqual(expected.code, 'ERR_INVALID_ARG_VALUE');
    assert.deepStrictEqual(thrown(tlswrap), expected);
  });

  // In a child, for the once.
  it('is sent, with one DEP0123 warning per process, where node:tls sends it', async function () {
    if (nodeRefuses) this.skip();
    const { runChild, describeExit } = require('./run-child');
    const run = await runChild('ip-servername.js');
    assert.ok(run.code === 0 && run.result, describeExit(run));
    assert.deepStrictEqual(run.result.seen, ['127.0.0.1', '127.0.0.1', '::1', 'localhost']);
    const dep = run.result.warnings.filter((w) => w.code === 'DEP0123');
    assert.strictEqual(dep.length, 1, JSON.stringify(run.result.warnings));
    assert.strictEqual(dep[0].name, 'DeprecationWarning');
    assert.match(dep[0].message, /^Setting the TLS ServerName to an IP address is not permitted by RFC 6066\./);
  });
});

describe('ALPN', function () {
  const wire = (...names) => Buffer.concat(names.map((n) => Buffer.concat([Buffer.from([n.length]), Buffer.from(n)])));

  // node:tls 24 refuses these in node's words; before, its handle aborts the
  // process on them (so under builtin this runs only where node checks).
  it('a malformed list throws ERR_INVALID_ARG_VALUE: empty name, zero-length or truncated wire entry', function () {
    const nodeChecks = /validateALPNBuffer/.test(Function.prototype.toString.call(tls.convertALPNProtocols));
    if (builtin && !nodeChecks) this.skip();
    const cases = [
      [['', 'h2'], "The argument 'protocols[0]' must be a non-empty string. Received ''"],
      [Buffer.from('x'), "The argument 'ALPNProtocols' contains truncated protocol. Received <Buffer 78>"],
      [new Uint8Array([2, 104, 50, 0]), "The argument 'ALPNProtocols' must not contain zero-length protocol. " +
        'Received <Buffer 02 68 32 00>'],
      [new DataView(new ArrayBuffer(1)), "The argument 'ALPNProtocols' must not contain zero-length protocol. " +
        'Received <Buffer 00>'],
    ];
    for (const [ALPNProtocols, message] of cases) {
      const expected = { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message };
      assert.throws(() => tlswrap.connect({ port: 1, host: '127.0.0.1', ALPNProtocols }), expected);
      assert.throws(() => tlswrap.createServer(serverOptions({ ALPNProtocols })), expected);
    }
  });

  it('arrays of strings: the server picks its first match among the client\'s offers', async function () {
    const r = await handshake(serverOptions({ ALPNProtocols: ['h2', 'http/1.1'] }),
      { servername: 'localhost', ALPNProtocols: ['http/1.1', 'h2'] });
    assert.strictEqual(r.client.alpnProtocol, 'h2');
    assert.strictEqual(r.server.alpnProtocol, 'h2');
  });

  it('wire-format Buffer on both sides', async function () {
    const r = await handshake(serverOptions({ ALPNProtocols: wire('h2', 'http/1.1') }),
      { servername: 'localhost', ALPNProtocols: wire('http/1.1') });
    assert.strictEqual(r.client.alpnProtocol, 'http/1.1');
    assert.strictEqual(r.server.alpnProtocol, 'http/1.1');
  });

  it('Uint8Array form', async function () {
    const r = await handshake(serverOptions({ ALPNProtocols: new Uint8Array(wire('x', 'h2')) }),
      { servername: 'localhost', ALPNProtocols: new Uint8Array(wire('h2')) });
    assert.strictEqual(r.client.alpnProtocol, 'h2');
    assert.strictEqual(r.server.alpnProtocol, 'h2');
  });

  it('only one side has ALPN: alpnProtocol is false on both', async function () {
    const a = await handshake(serverOptions({ ALPNProtocols: ['h2'] }), { servername: 'localhost' });
    assert.strictEqual(a.client.alpnProtocol, false);
    assert.strictEqual(a.server.alpnProtocol, false);
    const b = await handshake(serverOptions(), { servername: 'localhost', ALPNProtocols: ['h2'] });
    assert.strictEqual(b.client.alpnProtocol, false);
    assert.strictEqual(b.server.alpnProtocol, false);
  });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`no overlap, ${version}: server ERR_SSL_NO_APPLICATION_PROTOCOL, client gets the alert`, async function () {
      const r = await handshake(serverOptions({ ALPNProtocols: ['h2'], maxVersion: version }),
        { servername: 'localhost', ALPNProtocols: ['http/1.1'] });
      assert.deepStrictEqual(r.server.events, ['tlsClientError']);
      assert.strictEqual(r.server.error.code, 'ERR_SSL_NO_APPLICATION_PROTOCOL');
      assert.strictEqual(r.server.error.reason, 'no application protocol');
      assert.deepStrictEqual(r.client.events, ['error']);
      assert.strictEqual(r.client.error.code, 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL');
      assert.strictEqual(r.client.error.reason, 'tlsv1 alert no application protocol');
    });
  }

  describe('ALPNCallback', function () {
    it('gets {servername, protocols} and its answer is the protocol', async function () {
      const calls = [];
      const r = await handshake(serverOptions({
        ALPNCallback: (arg) => { calls.push(arg); return arg.protocols[1]; },
      }), { servername: 'localhost', ALPNProtocols: ['a', 'b'] });
      assert.deepStrictEqual(calls, [{ servername: 'localhost', protocols: ['a', 'b'] }]);
      assert.strictEqual(r.client.alpnProtocol, 'b');
      assert.strictEqual(r.server.alpnProtocol, 'b');
    });

    it('the server socket\'s servername is already the client\'s in the callback', async function () {
      const seen = [];
      await handshake(serverOptions({
        ALPNCallback() { seen.push(this.servername); return 'a'; },
      }), { servername: 'localhost', ALPNProtocols: ['a'] });
      assert.deepStrictEqual(seen, ['localhost']);
    });

    it('without SNI, servername is false', async function () {
      const calls = [];
      await handshake(serverOptions({ ALPNCallback: (arg) => { calls.push(arg); return arg.protocols[0]; } }),
        { ALPNProtocols: ['a'] });
      assert.deepStrictEqual(calls, [{ servername: false, protocols: ['a'] }]);
    });

    it('names that are not ASCII reach JS one character per byte, as node:tls reads them', async function () {
      // The client sends the servername as UTF-8 and the protocol as the
      // bytes given. node:tls reads the servername and the negotiated
      // protocol as latin1 and the offer ALPNCallback sees as 'ascii' (the
      // high bit dropped); decoding as UTF-8 instead would make distinct
      // names on the wire equal in JS (invalid sequences become U+FFFD).
      const calls = [];
      const sni = [];
      const r = await handshake(serverOptions({
        SNICallback: (name, cb) => { sni.push(name); cb(null); },
        ALPNCallback: (arg) => { calls.push(arg); return arg.protocols[1]; },
      }), {
        servername: 'caf\u00e9.example', rejectUnauthorized: false,
        ALPNProtocols: Buffer.from([2, 0xc3, 0xa9, 1, 0xff]),
      });
      assert.deepStrictEqual(sni, ['caf\u00c3\u00a9.example']);
      assert.strictEqual(r.server.servername, 'caf\u00c3\u00a9.example');
      assert.deepStrictEqual(calls, [{ servername: 'caf\u00c3\u00a9.example', protocols: ['C)', '\u007f'] }]);
      assert.strictEqual(r.server.alpnProtocol, '\u00ff');
      assert.strictEqual(r.client.alpnProtocol, '\u00ff');
    });

    it('answering undefined refuses: no_application_protocol', async function () {
      const r = await handshake(serverOptions({ ALPNCallback: () => undefined }),
        { servername: 'localhost', ALPNProtocols: ['a'] });
      assert.strictEqual(r.server.error.code, 'ERR_SSL_NO_APPLICATION_PROTOCOL');
      assert.strictEqual(r.client.error.code, 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL');
    });

    it('answering a protocol not offered: tlsClientError ERR_TLS_ALPN_CALLBACK_INVALID_RESULT', async function () {
      const r = await handshake(serverOptions({ ALPNCallback: () => 'zz' }),
        { servername: 'localhost', ALPNProtocols: ['a', 'b'] });
      assert.deepStrictEqual(r.server.events, ['tlsClientError']);
      assert.strictEqual(r.server.error.name, 'TypeError');
      assert.strictEqual(r.server.error.code, 'ERR_TLS_ALPN_CALLBACK_INVALID_RESULT');
      assert.deepStrictEqual(r.client.events, ['error']);
      assert.strictEqual(r.client.error.code, 'ECONNRESET');
    });

    it('throwing fails that connection (tlsClientError with the error), and the server serves the next', async function () {
      const boom = new Error('unsupported ALPN offer');
      const opts = serverOptions({
        ALPNCallback: ({ protocols }) => {
          if (!protocols.includes('h2')) throw boom;
          return 'h2';
        },
      });
      const r = await handshake(opts, { servername: 'localhost', ALPNProtocols: ['evil'] });
      assert.deepStrictEqual(r.server.events, ['tlsClientError']);
      assert.strictEqual(r.server.error, boom);
      assert.deepStrictEqual(r.client.events, ['error']);
      const ok = await handshake(opts, { servername: 'localhost', ALPNProtocols: ['h2'] });
      assert.strictEqual(ok.client.alpnProtocol, 'h2');
    });

    it('answering a Symbol: tlsClientError with the TypeError of making its message, no crash', async function () {
      const r = await handshake(serverOptions({ ALPNCallback: () => Symbol('h2') }),
        { servername: 'localhost', ALPNProtocols: ['h2'] });
      assert.deepStrictEqual(r.server.events, ['tlsClientError']);
      assert.strictEqual(r.server.error.name, 'TypeError');
      assert.match(r.server.error.message, /Symbol/);
    });

    it('with ALPNProtocols too: throws ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS', function () {
      assert.throws(() => tlswrap.createServer(serverOptions({ ALPNCallback: () => 'a', ALPNProtocols: ['a'] })),
        { name: 'TypeError', code: 'ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS' });
    });
  });
});
