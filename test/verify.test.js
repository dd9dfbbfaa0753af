'use strict';

// Certificate verification, both directions: the error codes, where they are
// reported, `authorized`/`authorizationError`, hostname checks, client
// certificates, and the default trust store (NODE_EXTRA_CA_CERTS).

const assert = require('node:assert');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const tls = require('node:tls');
const { X509Certificate } = require('node:crypto');
const { execFile } = require('node:child_process');
const { once } = require('node:events');
const { fixture, fixtures, tlswrap, builtin, serverOptions, clientOptions, listen, closeServer } = require('./common');

// Runs `fn(server, port)` against a listening tlswrap server, then closes it.
async function withServer(opts, fn) {
  const server = tlswrap.createServer(opts);
  const port = await listen(server);
  try {
    return await fn(server, port);
  } finally {
    await closeServer(server);
  }
}

// Follows one client until 'close': what it saw, in order.
function follow(client) {
  return new Promise((resolve) => {
    const seen = { events: [], error: null, authorized: undefined, authorizationError: undefined };
    client.on('secureConnect', () => {
      seen.events.push('secureConnect');
      seen.authorized = client.authorized;
      seen.authorizationError = client.authorizationError;
      seen.protocol = client.getProtocol();
      client.end();
    });
    client.on('error', (err) => {
      seen.events.push('error');
      seen.error = err;
    });
    client.resume();
    client.on('close', () => resolve(seen));
  });
}

// The first of 'secureConnection' / 'tlsClientError' on a server.
function serverVerdict(server) {
  return new Promise((resolve) => {
    server.once('secureConnection', (sock) => {
      sock.on('error', () => {});
      resolve({
        secure: true, authorized: sock.authorized, authorizationError: sock.authorizationError,
        peer: sock.getPeerCertificate(), protocol: sock.getProtocol(),
      });
    });
    server.once('tlsClientError', (err) => resolve({ secure: false, error: err }));
  });
}

const selfSignedServer = () => ({ key: fixtures.selfSignedKey, cert: fixtures.selfSignedCert });

// Node 24's client appends this to the two chain errors a locally installed
// root would fix; Node 20's does not.
const systemCAHint = Number(process.versions.node.split('.')[0]) >= 24 ?
  '; if the root CA is installed locally, try running Node.js with --use-system-ca' : '';

describe('verify: client checks the server', function () {
  it('CA not given -> error UNABLE_TO_VERIFY_LEAF_SIGNATURE, server sees ECONNRESET', async function () {
    await withServer(serverOptions(), async (server, port) => {
      const verdict = serverVerdict(server);
      const seen = await follow(tlswrap.connect(clientOptions(port, { ca: undefined })));
      assert.deepStrictEqual(seen.events, ['error']);
      assert.ok(seen.error instanceof Error);
      assert.strictEqual(seen.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      assert.strictEqual(seen.error.message, `unable to verify the first certificate${systemCAHint}`);
      // The client drops the TCP connection mid-handshake.
      const v = await verdict;
      assert.strictEqual(v.secure, false);
      assert.strictEqual(v.error.code, 'ECONNRESET');
      assert.strictEqual(v.error.message, 'socket hang up');
    });
  });

  it('self-signed server -> error DEPTH_ZERO_SELF_SIGNED_CERT', async function () {
    await withServer(selfSignedServer(), async (server, port) => {
      server.on('tlsClientError', () => {});
      const seen = await follow(tlswrap.connect(clientOptions(port, { ca: undefined })));
      assert.deepStrictEqual(seen.events, ['error']);
      assert.strictEqual(seen.error.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      assert.strictEqual(seen.error.message, `self-signed certificate${systemCAHint}`);
    });
  });

  // Only false turns verification off. An explicit undefined spread over the
  // default, a null or a 0 from a config file must still reject.
  for (const value of [undefined, null, 0, '']) {
    it(`rejectUnauthorized: ${JSON.stringify(value) ?? 'undefined'} still rejects a self-signed server`, async function () {
      await withServer(selfSignedServer(), async (server, port) => {
        server.on('tlsClientError', () => {});
        const seen = await follow(tlswrap.connect(clientOptions(port, { ca: undefined, rejectUnauthorized: value })));
        assert.deepStrictEqual(seen.events, ['error']);
        assert.strictEqual(seen.error.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      });
    });
  }

  it('rejectUnauthorized: undefined through https.request still rejects', async function () {
    const https = builtin ? require('node:https') : require('tlswrap/https');
    const server = https.createServer(selfSignedServer(), (req, res) => res.end('secret'));
    const port = await listen(server);
    try {
      const outcome = await new Promise((resolve) => {
        const req = https.request({
          host: '127.0.0.1', port, servername: 'localhost', agent: false, rejectUnauthorized: undefined,
        }, (res) => {
          res.resume();
          resolve(`response ${res.statusCode}`);
        });
        req.on('error', (err) => resolve(`error ${err.code}`));
        req.end();
      });
      assert.strictEqual(outcome, 'error DEPTH_ZERO_SELF_SIGNED_CERT');
    } finally {
      server.closeAllConnections();
      await closeServer(server);
    }
  });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`data written before the handshake never reaches a server the client rejects, ${version}`, async function () {
      const received = [];
      await withServer(serverOptions({ minVersion: version, maxVersion: version }), async (server, port) => {
        const closed = [];
        server.on('secureConnection', (socket) => {
          socket.on('data', (d) => received.push(String(d)));
          socket.on('error', () => {});
          closed.push(new Promise((resolve) => socket.on('close', resolve)));
        });
        server.on('tlsClientError', () => {});
        const client = tlswrap.connect(clientOptions(port, { ca: undefined }));
        client.write('secret');
        const seen = await follow(client);
        assert.strictEqual(seen.error && seen.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
        await Promise.all(closed);
      });
      assert.deepStrictEqual(received, []);
    });
  }

  it('the fixture CA is not trusted by default; giving it as `ca` is', async function () {
    await withServer(serverOptions(), async (server, port) => {
      server.on('tlsClientError', () => {});
      const without = await follow(tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost' }));
      assert.strictEqual(without.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      const withCa = await follow(tlswrap.connect(clientOptions(port)));
      assert.deepStrictEqual(withCa.events, ['secureConnect']);
      assert.strictEqual(withCa.authorized, true);
      assert.strictEqual(withCa.authorizationError, null);
    });
  });

  for (const [what, serverOpts, code] of [
    ['unknown CA', serverOptions(), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    ['self-signed', selfSignedServer(), 'DEPTH_ZERO_SELF_SIGNED_CERT'],
  ]) {
    it(`${what} with rejectUnauthorized:false -> secureConnect, authorized false, authorizationError ${code}`,
      async function () {
        await withServer(serverOpts, async (server, port) => {
          const verdict = serverVerdict(server);
          const seen = await follow(tlswrap.connect(clientOptions(port, { ca: undefined, rejectUnauthorized: false })));
          assert.deepStrictEqual(seen.events, ['secureConnect']);
          assert.strictEqual(seen.authorized, false);
          assert.strictEqual(seen.authorizationError, code);
          const v = await verdict;
          assert.strictEqual(v.secure, true);
        });
      });
  }

  it('a leaf naming as issuer a trusted certificate that may not sign: refused, and its chain stays short',
    async function () {
      // The trusted certificate is self-signed but its keyUsage forbids
      // signing certificates, so OpenSSL does not take it for self-issued,
      // yet its store offers it as its own issuer. Following that made the
      // detailed chain repeat it up to the depth limit (101 objects).
      const trusted = fixture('nokeycertsign-cert.pem');
      const server = tlswrap.createServer({ key: fixture('misissued-key.pem'), cert: fixture('misissued-cert.pem') },
        (sock) => sock.end());
      const port = await listen(server);
      try {
        const client = tlswrap.connect(clientOptions(port, { ca: trusted, rejectUnauthorized: false }));
        await once(client, 'secureConnect');
        assert.strictEqual(client.authorized, false);
        assert.strictEqual(client.authorizationError, 'CERT_SIGNATURE_FAILURE');
        const chain = [];
        for (let c = client.getPeerCertificate(true); c && c.subject && chain.length < 200; c = c.issuerCertificate) {
          chain.push(c);
          if (c.issuerCertificate === c) break;
        }
        assert.strictEqual(chain[0].subject.O, 'tlswrap misissued');
        assert.ok(chain[1].raw.equals(new X509Certificate(trusted).raw));
        // node:tls lists the trusted certificate twice (3 objects); never more.
        assert.ok(chain.length <= 3, `${chain.length} certificates in the chain`);
        client.destroy();
      } finally {
        await closeServer(server);
      }
    });

  it('ca given -> authorized true (TLS 1.2 and 1.3)', async function () {
    await withServer(serverOptions(), async (server, port) => {
      for (const version of ['TLSv1.2', 'TLSv1.3']) {
        const seen = await follow(tlswrap.connect(clientOptions(port, { maxVersion: version, minVersion: version })));
        assert.deepStrictEqual(seen.events, ['secureConnect']);
        assert.strictEqual(seen.protocol, version);
        assert.strictEqual(seen.authorized, true);
        assert.strictEqual(seen.authorizationError, null);
      }
    });
  });

  it('ca as an array, among other CAs, is enough', async function () {
    await withServer(serverOptions(), async (server, port) => {
      const seen = await follow(tlswrap.connect(clientOptions(port, { ca: [fixtures.selfSignedCert, fixtures.ca] })));
      assert.strictEqual(seen.authorized, true);
    });
  });

  // tlswrap decodes a `ca` certificate only once verification asks for it
  // (src/engine/root_store.h); these pin what that must not change.
  it('ca of every bundled root plus the test CA: trusted, twice in a row', async function () {
    await withServer(serverOptions(), async (server, port) => {
      for (let i = 0; i < 2; i++) {
        const seen = await follow(tlswrap.connect(clientOptions(port, { ca: [...tls.rootCertificates, fixtures.ca] })));
        assert.deepStrictEqual(seen.events, ['secureConnect']);
        assert.strictEqual(seen.authorized, true);
      }
    });
  });

  it('two CAs with one name in one ca text: a server under either is trusted', async function () {
    const twins = fixture('twin-cas.pem');
    for (const [key, cert] of [['server-key.pem', 'server-cert.pem'], ['twin-leaf-key.pem', 'twin-leaf-cert.pem']]) {
      await withServer({ key: fixture(key), cert: fixture(cert) }, async (server, port) => {
        const seen = await follow(tlswrap.connect(clientOptions(port, { ca: twins })));
        assert.deepStrictEqual(seen.events, ['secureConnect'], `server ${cert}`);
        assert.strictEqual(seen.authorized, true);
      });
    }
  });

  // A CA added to a context that has already verified (so holds a CA of
  // that name): trusted from then on, as node:tls's addCACert() does.
  it('addCACert() after a verification: a second CA of a name already used is trusted', async function () {
    const leaf = { key: fixture('twin-leaf-key.pem'), cert: fixture('twin-leaf-cert.pem') };
    await withServer(leaf, async (server, port) => {
      server.on('tlsClientError', () => {});
      const secureContext = tlswrap.createSecureContext({ ca: fixtures.ca });
      const before = await follow(tlswrap.connect(clientOptions(port, { ca: undefined, secureContext })));
      assert.deepStrictEqual(before.events, ['error']);
      assert.strictEqual(before.error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      secureContext.context.addCACert(fixture('twin-ca-cert.pem'));
      const after = await follow(tlswrap.connect(clientOptions(port, { ca: undefined, secureContext })));
      assert.deepStrictEqual(after.events, ['secureConnect']);
      assert.strictEqual(after.authorized, true);
    });
  });

  it('a TRUSTED CERTIFICATE block in ca keeps its trust settings: rejected for servers -> INVALID_PURPOSE',
    async function () {
      await withServer(serverOptions(), async (server, port) => {
        server.on('tlsClientError', () => {});
        const ca = [fixtures.selfSignedCert, fixture('ca-trusted-form.pem')];
        const seen = await follow(tlswrap.connect(clientOptions(port, { ca })));
        assert.deepStrictEqual(seen.events, ['error']);
        assert.strictEqual(seen.error.code, 'INVALID_PURPOSE');
      });
    });
});

describe('verify: hostname', function () {
  const altnames = "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1";

  it("servername 'wrong.example' -> ERR_TLS_CERT_ALTNAME_INVALID with reason, host, cert", async function () {
    await withServer(serverOptions(), async (server, port) => {
      server.on('tlsClientError', () => {});
      const seen = await follow(tlswrap.connect(clientOptions(port, { servername: 'wrong.example' })));
      assert.deepStrictEqual(seen.events, ['error']);
      const err = seen.error;
      assert.strictEqual(err.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assert.strictEqual(err.reason, `Host: wrong.example. is not in the cert's altnames: ${altnames}`);
      assert.strictEqual(err.message, `Hostname/IP does not match certificate's altnames: ${err.reason}`);
      assert.strictEqual(err.host, 'wrong.example');
      assert.strictEqual(err.cert.subject.CN, 'localhost');
      assert.strictEqual(err.cert.subjectaltname, altnames);
    });
  });

  // node:tls's connect() reads tls.checkServerIdentity when it is called.
  it("the module's checkServerIdentity, replaced by the program, is the one connect() uses", async function () {
    await withServer(serverOptions(), async (server, port) => {
      const original = tlswrap.checkServerIdentity;
      const calls = [];
      tlswrap.checkServerIdentity = (host, cert) => {
        calls.push([host, cert.subject.CN]);
        return undefined;
      };
      try {
        const seen = await follow(tlswrap.connect(clientOptions(port, { servername: 'wrong.example' })));
        assert.deepStrictEqual(seen.events, ['secureConnect']);
        assert.strictEqual(seen.authorized, true);
        assert.deepStrictEqual(calls, [['wrong.example', 'localhost']]);
      } finally {
        tlswrap.checkServerIdentity = original;
      }
    });
  });

  it("a name mismatch's err.cert is the detailed chain, a copy the program owns", async function () {
    await withServer(serverOptions(), async (server, port) => {
      server.on('tlsClientError', () => {});
      const first = (await follow(tlswrap.connect(clientOptions(port, { servername: 'wrong.example' })))).error;
      assert.strictEqual(first.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assert.strictEqual(first.cert.issuerCertificate.subject.CN, 'tlswrap test CA');
      assert.match(first.cert.fingerprint256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      // Changing it changes nothing that later connections see.
      first.cert.subject.CN = 'changed';
      first.cert.subjectaltname = 'DNS:wrong.example';
      const second = (await follow(tlswrap.connect(clientOptions(port, { servername: 'wrong.example' })))).error;
      assert.strictEqual(second.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assert.notStrictEqual(second.cert, first.cert);
      assert.strictEqual(second.cert.subject.CN, 'localhost');
      assert.strictEqual(second.cert.subjectaltname, altnames);
      const ok = await follow(tlswrap.connect(clientOptions(port)));
      assert.deepStrictEqual(ok.events, ['secureConnect']);
      assert.strictEqual(ok.authorized, true);
    });
  });

  it('a wrapper put in place of tls.checkServerIdentity before loading gets a detailed certificate of its own',
    function (done) {
      const script = path.join(__dirname, 'child', 'patched-identity-check.js');
      execFile(process.execPath, [script], { timeout: 10000 }, (err, stdout, stderr) => {
        if (err) return done(new Error(`child failed: ${err.message}\n${stderr}`));
        const { results, seen } = JSON.parse(stdout.trim());
        try {
          assert.deepStrictEqual(results, [{ authorized: true, error: null }, { authorized: true, error: null }]);
          assert.deepStrictEqual(seen, [{ altnames, chain: true }, { altnames, chain: true }]);
          done();
        } catch (e) {
          done(e);
        }
      });
    });

  it('wrong hostname with rejectUnauthorized:false -> authorizationError is the code', async function () {
    await withServer(serverOptions(), async (server, port) => {
      const seen = await follow(tlswrap.connect(clientOptions(port, { servername: 'wrong.example', rejectUnauthorized: false })));
      assert.deepStrictEqual(seen.events, ['secureConnect']);
      assert.strictEqual(seen.authorized, false);
      assert.strictEqual(seen.authorizationError, 'ERR_TLS_CERT_ALTNAME_INVALID');
    });
  });

  it('no servername: the IP in `host` is checked against IP SANs', async function () {
    await withServer(serverOptions(), async (server, port) => {
      const calls = [];
      const seen = await follow(tlswrap.connect({
        host: '127.0.0.1', port, ca: fixtures.ca,
        checkServerIdentity: (host, cert) => { calls.push(host); return tls.checkServerIdentity(host, cert); },
      }));
      assert.deepStrictEqual(calls, ['127.0.0.1']);
      assert.strictEqual(seen.authorized, true);
    });
  });

  // connect({ socket }) with neither servername nor host: node:tls checks the
  // name the socket was opened to (its _host). The lookup pins the address,
  // so 'other.example' reaches the loopback server too.
  describe('connect({ socket }) without servername: the name the socket was opened to', function () {
    const lookup = (host, opts, cb) => (opts && opts.all ?
      cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4));

    async function outcome(impl, name, certOptions) {
      return withServer(certOptions, async (server, port) => {
        server.on('tlsClientError', () => {});
        const socket = net.connect({ host: name, port, lookup });
        const seen = await follow(impl.connect({ socket, ca: fixtures.ca }));
        return { events: seen.events, code: seen.error && seen.error.code, host: seen.error && seen.error.host };
      });
    }

    const otherCert = { key: fixtures.otherKey, cert: fixtures.otherCert };
    const cases = [
      ['localhost', otherCert, { events: ['error'], code: 'ERR_TLS_CERT_ALTNAME_INVALID', host: 'localhost' }],
      ['other.example', otherCert, { events: ['secureConnect'], code: null, host: null }],
      ['other.example', serverOptions(), { events: ['error'], code: 'ERR_TLS_CERT_ALTNAME_INVALID', host: 'other.example' }],
    ];
    for (const [name, certOptions, expected] of cases) {
      it(`socket opened to '${name}', certificate for ${certOptions === otherCert ? 'other.example' : 'localhost'}: ` +
         `${expected.code || 'authorized'}, as node:tls`, async function () {
        assert.deepStrictEqual(await outcome(tlswrap, name, certOptions), expected);
        assert.deepStrictEqual(await outcome(tls, name, certOptions), expected);
      });
    }
  });

  it('custom checkServerIdentity gets (hostname, cert); its Error is the one emitted', async function () {
    await withServer(serverOptions(), async (server, port) => {
      server.on('tlsClientError', () => {});
      const calls = [];
      const mine = new Error('not my server');
      mine.code = 'MY_CHECK';
      const seen = await follow(tlswrap.connect(clientOptions(port, {
        checkServerIdentity: (...args) => { calls.push(args); return mine; },
      })));
      assert.strictEqual(calls.length, 1);
      const [host, cert] = calls[0];
      assert.strictEqual(host, 'localhost');
      assert.strictEqual(cert.subject.CN, 'localhost');
      assert.strictEqual(cert.issuer.CN, 'tlswrap test CA');
      assert.ok(Buffer.isBuffer(cert.raw));
      assert.deepStrictEqual(seen.events, ['error']);
      assert.strictEqual(seen.error, mine);
    });
  });

  it('custom checkServerIdentity returning an Error, rejectUnauthorized:false -> authorizationError = its code', async function () {
    await withServer(serverOptions(), async (server, port) => {
      const mine = Object.assign(new Error('nope'), { code: 'MY_CHECK' });
      const seen = await follow(tlswrap.connect(clientOptions(port, {
        rejectUnauthorized: false, checkServerIdentity: () => mine,
      })));
      assert.deepStrictEqual(seen.events, ['secureConnect']);
      assert.strictEqual(seen.authorized, false);
      assert.strictEqual(seen.authorizationError, 'MY_CHECK');
    });
  });

  it('custom checkServerIdentity returning undefined accepts, even for a wrong name', async function () {
    await withServer(serverOptions(), async (server, port) => {
      let called = 0;
      const seen = await follow(tlswrap.connect(clientOptions(port, {
        servername: 'wrong.example', checkServerIdentity: () => { called++; return undefined; },
      })));
      assert.strictEqual(called, 1);
      assert.deepStrictEqual(seen.events, ['secureConnect']);
      assert.strictEqual(seen.authorized, true);
    });
  });

  it('checkServerIdentity is not called when the chain does not verify', async function () {
    await withServer(selfSignedServer(), async (server, port) => {
      server.on('tlsClientError', () => {});
      let called = 0;
      const seen = await follow(tlswrap.connect(clientOptions(port, { checkServerIdentity: () => { called++; } })));
      assert.strictEqual(called, 0);
      assert.strictEqual(seen.error.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
    });
  });

  it('tlswrap.checkServerIdentity is exported and behaves as node\'s', function () {
    assert.strictEqual(typeof tlswrap.checkServerIdentity, 'function');
    const cert = new X509Certificate(fixtures.serverCert).toLegacyObject();
    assert.strictEqual(tlswrap.checkServerIdentity('localhost', cert), undefined);
    assert.strictEqual(tlswrap.checkServerIdentity('127.0.0.1', cert), undefined);
    assert.strictEqual(tlswrap.checkServerIdentity('::1', cert), undefined);
    const err = tlswrap.checkServerIdentity('wrong.example', cert);
    assert.ok(err instanceof Error);
    assert.strictEqual(err.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    assert.strictEqual(err.host, 'wrong.example');
    assert.strictEqual(err.cert, cert);
    const ipErr = tlswrap.checkServerIdentity('10.0.0.1', cert);
    assert.strictEqual(ipErr.reason, "IP: 10.0.0.1 is not in the cert's list: 127.0.0.1, ::1");
  });

  it('tlswrap.rootCertificates is node\'s frozen bundled list, without the test CA', function () {
    assert.ok(Object.isFrozen(tlswrap.rootCertificates));
    assert.deepStrictEqual(tlswrap.rootCertificates, tls.rootCertificates);
    const testCa = fixtures.ca.toString().trim();
    assert.ok(!tlswrap.rootCertificates.some((pem) => pem.trim() === testCa));
  });
});

// embedded-pem-cert.pem is the test CA's certificate for embedded.example,
// and its DER carries server-cert.pem's PEM text (localhost) in an
// extension. What tlswrap reports, and checks the name against, must be the
// certificate OpenSSL verified, as with node:tls.
describe('verify: a certificate carrying another certificate as PEM text', function () {
  const embeddedCert = fixture('embedded-pem-cert.pem');
  const embedded = new X509Certificate(embeddedCert);
  const embeddedOptions = () => ({ key: fixture('embedded-pem-key.pem'), cert: embeddedCert });

  it('the fixture: DER read as PEM gives the other certificate', function () {
    // Guards the tests below: without this, they could not fail.
    assert.strictEqual(new X509Certificate(embedded.raw).subject, new X509Certificate(fixtures.serverCert).subject);
    assert.notStrictEqual(embedded.subject, new X509Certificate(fixtures.serverCert).subject);
  });

  it("servername 'localhost': ERR_TLS_CERT_ALTNAME_INVALID, the error's cert is embedded.example", async function () {
    await withServer(embeddedOptions(), async (server, port) => {
      server.on('tlsClientError', () => {});
      const seen = await follow(tlswrap.connect(clientOptions(port)));
      assert.deepStrictEqual(seen.events, ['error']);
      assert.strictEqual(seen.error.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assert.strictEqual(seen.error.cert.subject.CN, 'embedded.example');
      assert.strictEqual(seen.error.cert.subjectaltname, 'DNS:embedded.example');
    });
  });

  it('the client sees the certificate sent: subject, fingerprint, raw, X509Certificate, chain', async function () {
    await withServer(embeddedOptions(), async (server, port) => {
      const client = tlswrap.connect(clientOptions(port, { servername: 'embedded.example' }));
      try {
        await once(client, 'secureConnect');
        assert.strictEqual(client.authorized, true);
        const cert = client.getPeerCertificate(true);
        assert.strictEqual(cert.subject.CN, 'embedded.example');
        assert.strictEqual(cert.fingerprint256, embedded.fingerprint256);
        assert.ok(cert.raw.equals(embedded.raw));
        assert.strictEqual(cert.issuerCertificate.subject.CN, 'tlswrap test CA');
        const x509 = client.getPeerX509Certificate();
        assert.strictEqual(x509.fingerprint256, embedded.fingerprint256);
        assert.strictEqual(x509.subject, embedded.subject);
      } finally {
        client.destroy();
      }
    });
  });

  it('the server sees the client certificate sent, and its own', async function () {
    const opts = { ...embeddedOptions(), requestCert: true, rejectUnauthorized: true, ca: fixtures.ca };
    await withServer(opts, async (server, port) => {
      const seenByServer = once(server, 'secureConnection');
      const client = tlswrap.connect(clientOptions(port, {
        servername: 'embedded.example', key: fixture('embedded-pem-key.pem'), cert: embeddedCert,
      }));
      const clientReady = once(client, 'secureConnect');
      try {
        const [sock] = await seenByServer;
        assert.strictEqual(sock.authorized, true);
        assert.strictEqual(sock.getPeerCertificate().subject.CN, 'embedded.example');
        assert.strictEqual(sock.getPeerCertificate().fingerprint256, embedded.fingerprint256);
        assert.strictEqual(sock.getPeerX509Certificate().fingerprint256, embedded.fingerprint256);
        assert.strictEqual(sock.getCertificate().subject.CN, 'embedded.example');
        assert.strictEqual(sock.getX509Certificate().fingerprint256, embedded.fingerprint256);
        await clientReady;
        assert.strictEqual(client.getCertificate().fingerprint256, embedded.fingerprint256);
      } finally {
        client.destroy();
      }
    });
  });
});

describe('verify: server checks the client', function () {
  it("the server names its ca certificates as acceptable client CAs, in order (openssl s_client's list)",
    async function () {
      const ca = [
        fixtures.selfSignedCert,
        Buffer.concat([fixture('ca-trusted-form.pem'), fixtures.otherCert]),
        fixture('twin-ca-cert.pem'),
      ];
      await withServer(serverOptions({ requestCert: true, rejectUnauthorized: false, ca }), async (server, port) => {
        const out = await new Promise((resolve, reject) => {
          const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost'],
                                 { timeout: 10000 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
          child.stdin.end();
        });
        const list = /Acceptable client certificate CA names\n([^]*?)\n(?:Requested|Client Certificate Types)/.exec(out);
        assert.ok(list, out);
        assert.deepStrictEqual(list[1].split('\n'), [
          'CN = localhost, O = selfsigned',
          'CN = tlswrap test CA, O = tlswrap', // the TRUSTED CERTIFICATE block
          'CN = other.example, O = tlswrap',
          'CN = tlswrap test CA, O = tlswrap', // its twin
        ]);
      });
    });

  const strict = (version) => serverOptions({
    requestCert: true, rejectUnauthorized: true, ca: fixtures.ca, minVersion: version, maxVersion: version,
  });
  const lenient = (version) => serverOptions({
    requestCert: true, rejectUnauthorized: false, ca: fixtures.ca, minVersion: version, maxVersion: version,
  });
  const withClientCert = { key: fixtures.clientKey, cert: fixtures.clientCert };
  const withSelfSigned = { key: fixtures.selfSignedKey, cert: fixtures.selfSignedCert };

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    describe(version, function () {
      it('client cert signed by the CA -> authorized on the server, peer subject CN', async function () {
        await withServer(strict(version), async (server, port) => {
          const verdict = serverVerdict(server);
          const seen = await follow(tlswrap.connect(clientOptions(port, withClientCert)));
          assert.deepStrictEqual(seen.events, ['secureConnect']);
          const v = await verdict;
          assert.strictEqual(v.secure, true);
          assert.strictEqual(v.protocol, version);
          assert.strictEqual(v.authorized, true);
          assert.strictEqual(v.authorizationError, null);
          assert.strictEqual(v.peer.subject.CN, 'tlswrap client');
          assert.strictEqual(v.peer.subjectaltname, 'email:client@tlswrap.invalid');
        });
      });

      it('no client cert -> server tlsClientError ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE', async function () {
        await withServer(strict(version), async (server, port) => {
          const verdict = serverVerdict(server);
          const client = tlswrap.connect(clientOptions(port));
          const seen = await follow(client);
          const v = await verdict;
          assert.strictEqual(v.secure, false);
          assert.strictEqual(v.error.code, 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE');
          assert.strictEqual(v.error.reason, 'peer did not return a certificate');
          if (version === 'TLSv1.2') {
            // The server refuses inside the handshake: a handshake_failure alert.
            assert.deepStrictEqual(seen.events, ['error']);
            // OpenSSL 3.5 renamed the alert's reason ("ssl/tls alert ...").
            assert.match(seen.error.code, /^ERR_SSL_(SSLV3|SSL\/TLS)_ALERT_HANDSHAKE_FAILURE$/);
          } else {
            // TLS 1.3: the client is done with the handshake before the server
            // reads its (empty) Certificate, then gets certificate_required.
            assert.deepStrictEqual(seen.events, ['secureConnect', 'error']);
            assert.strictEqual(seen.error.code, 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
          }
        });
      });

      it('client cert from an unknown issuer -> server drops it: tlsClientError ECONNRESET', async function () {
        await withServer(strict(version), async (server, port) => {
          const verdict = serverVerdict(server);
          const seen = await follow(tlswrap.connect(clientOptions(port, withSelfSigned)));
          const v = await verdict;
          assert.strictEqual(v.secure, false);
          assert.strictEqual(v.error.code, 'ECONNRESET');
          if (version === 'TLSv1.2') {
            // The client still waits for the server's Finished: the hang-up is an error.
            assert.deepStrictEqual(seen.events, ['error']);
            assert.strictEqual(seen.error.code, 'ECONNRESET');
          } else {
            // TLS 1.3: the client finished first; the hang-up is an end, or a
            // reset if its own bytes were still unread on the server.
            assert.deepStrictEqual(seen.events, seen.error ? ['secureConnect', 'error'] : ['secureConnect']);
            assert.ok(!seen.error || seen.error.code === 'ECONNRESET', `error ${seen.error && seen.error.code}`);
          }
        });
      });

      it('rejectUnauthorized:false, no client cert -> secureConnection, authorized false, UNABLE_TO_GET_ISSUER_CERT',
        async function () {
          await withServer(lenient(version), async (server, port) => {
            const verdict = serverVerdict(server);
            const seen = await follow(tlswrap.connect(clientOptions(port)));
            assert.deepStrictEqual(seen.events, ['secureConnect']);
            const v = await verdict;
            assert.strictEqual(v.secure, true);
            assert.strictEqual(v.authorized, false);
            assert.strictEqual(v.authorizationError, 'UNABLE_TO_GET_ISSUER_CERT');
            // No certificate: an empty object, as node gives.
            assert.deepStrictEqual(v.peer, {});
          });
        });

      it('rejectUnauthorized:false, self-signed client cert -> authorizationError DEPTH_ZERO_SELF_SIGNED_CERT',
        async function () {
          await withServer(lenient(version), async (server, port) => {
            const verdict = serverVerdict(server);
            await follow(tlswrap.connect(clientOptions(port, withSelfSigned)));
            const v = await verdict;
            assert.strictEqual(v.authorized, false);
            assert.strictEqual(v.authorizationError, 'DEPTH_ZERO_SELF_SIGNED_CERT');
            assert.strictEqual(v.peer.subject.O, 'selfsigned');
          });
        });
    });
  }
});

// test/child/default-trust.js's verdict, without its sameDefaults.
const trustVerdict = ({ authorized, error }) => ({ authorized, error });

describe('verify: default trust store', function () {
  // A child process, because NODE_EXTRA_CA_CERTS is read once at startup.
  const script = path.join(__dirname, 'child', 'default-trust.js');
  const runChild = (extraEnv) => new Promise((resolve, reject) => {
    const env = { ...process.env, ...extraEnv };
    if (!extraEnv.NODE_EXTRA_CA_CERTS) delete env.NODE_EXTRA_CA_CERTS;
    execFile(process.execPath, [script], { env, timeout: 10000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`child failed: ${err.message}\n${stderr}`));
      resolve(trustVerdict(JSON.parse(stdout.trim())));
    });
  });

  it('without NODE_EXTRA_CA_CERTS the fixture server is not trusted', async function () {
    assert.deepStrictEqual(await runChild({}), { authorized: false, error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  it('with NODE_EXTRA_CA_CERTS=test/fixtures/ca-cert.pem it is', async function () {
    const result = await runChild({ NODE_EXTRA_CA_CERTS: path.join(__dirname, 'fixtures', 'ca-cert.pem') });
    assert.deepStrictEqual(result, { authorized: true, error: null });
  });

  // The store decodes a root only when verification asks for its name: it
  // must then offer every root of that name, and a context that makes a
  // store of its own (allowPartialTrustChain, crl) must keep them all.
  it('two roots with one name in NODE_EXTRA_CA_CERTS: a server under either is trusted', async function () {
    const twins = path.join(__dirname, 'fixtures', 'twin-cas.pem');
    for (const leaf of ['server', 'twin-leaf']) {
      const result = await runChild({ NODE_EXTRA_CA_CERTS: twins, TLSWRAP_TEST_LEAF: leaf });
      assert.deepStrictEqual(result, { authorized: true, error: null }, leaf);
    }
  });

  it('a context with a store of its own still trusts the default roots', async function () {
    // node:tls 20 builds such a store from its bundled roots alone, without
    // NODE_EXTRA_CA_CERTS; later Nodes keep them, as tlswrap does.
    if (builtin && Number(process.versions.node.split('.')[0]) < 22) this.skip();
    const extra = { NODE_EXTRA_CA_CERTS: path.join(__dirname, 'fixtures', 'twin-cas.pem') };
    const partial = await runChild({ ...extra, TLSWRAP_TEST_CLIENT: JSON.stringify({ allowPartialTrustChain: true }) });
    assert.deepStrictEqual(partial, { authorized: true, error: null });
    // Still only the default roots: the twin's leaf, a CA not among them.
    const untrusted = await runChild({
      ...extra, TLSWRAP_TEST_LEAF: 'inter-leaf', TLSWRAP_TEST_CLIENT: JSON.stringify({ allowPartialTrustChain: true }),
    });
    assert.deepStrictEqual(untrusted, { authorized: false, error: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY' });
  });

  // As node, the module reads the startup value: Node 22.15+ lists it
  // (tls.getCACertificates('extra')); before, only the value at load is
  // known, which a program that changes its environment first has lost.
  it('NODE_EXTRA_CA_CERTS deleted by the program before it loads the module: still trusted', async function () {
    if (typeof tls.getCACertificates !== 'function') this.skip();
    const result = await runChild({
      NODE_EXTRA_CA_CERTS: path.join(__dirname, 'fixtures', 'ca-cert.pem'), TLSWRAP_TEST_UNSET_EXTRA: '1',
    });
    assert.deepStrictEqual(result, { authorized: true, error: null });
  });

  it('a TRUSTED CERTIFICATE block in NODE_EXTRA_CA_CERTS is not read (its rejected uses would be lost)', async function () {
    // The test CA, marked rejected for server authentication.
    const result = await runChild({ NODE_EXTRA_CA_CERTS: path.join(__dirname, 'fixtures', 'ca-trusted-form.pem') });
    assert.deepStrictEqual(result, { authorized: false, error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0: the untrusted server is let through, unauthorized', async function () {
    const result = await runChild({ NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    assert.deepStrictEqual(result, { authorized: false, error: null });
  });
});

// node's trust-store flags, in a child each: the store follows them as
// node:tls's does. The parent's SSL_CERT_FILE / SSL_CERT_DIR (and any
// NODE_EXTRA_CA_CERTS) are replaced, so only the test CA can vouch.
describe('verify: --use-openssl-ca, --use-system-ca, NODE_USE_SYSTEM_CA', function () {
  const os = require('node:os');
  const { spawnSync } = require('node:child_process');
  const script = path.join(__dirname, 'child', 'default-trust.js');
  const caFile = path.join(__dirname, 'fixtures', 'ca-cert.pem');
  const nodeHas = (flag) => process.allowedNodeEnvironmentFlags.has(flag);
  let emptyDir;
  before(function () {
    emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-ca-'));
  });
  after(function () {
    fs.rmSync(emptyDir, { recursive: true, force: true });
  });

  const runChild = (nodeArgs, extraEnv = {}) => new Promise((resolve, reject) => {
    const env = { ...process.env, SSL_CERT_FILE: caFile, SSL_CERT_DIR: emptyDir };
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.NODE_USE_SYSTEM_CA;
    delete env.NODE_OPTIONS;
    Object.assign(env, extraEnv);
    execFile(process.execPath, [...nodeArgs, script], { env, timeout: 10000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`child failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim()));
    });
  });
  const trusted = { authorized: true, error: null };
  const untrusted = { authorized: false, error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' };

  it('without a flag, a CA only in SSL_CERT_FILE is not trusted', async function () {
    const r = await runChild([]);
    assert.deepStrictEqual(trustVerdict(r), untrusted);
    if (r.sameDefaults !== null) assert.strictEqual(r.sameDefaults, true);
  });

  it('--use-openssl-ca: the CA in SSL_CERT_FILE is trusted, the bundled roots are not used', async function () {
    if (!nodeHas('--use-openssl-ca')) this.skip(); // a Node built without it
    const r = await runChild(['--use-openssl-ca']);
    assert.deepStrictEqual(trustVerdict(r), trusted);
    if (r.sameDefaults !== null) assert.strictEqual(r.sameDefaults, true);
    // Given through NODE_OPTIONS, the same.
    assert.deepStrictEqual(trustVerdict(await runChild([], { NODE_OPTIONS: '--use-openssl-ca' })), trusted);
  });

  it('--use-openssl-ca: a hashed SSL_CERT_DIR is looked up too', async function () {
    if (!nodeHas('--use-openssl-ca')) this.skip();
    const hash = spawnSync('openssl', ['x509', '-hash', '-noout', '-in', caFile], { encoding: 'utf8' });
    if (hash.status !== 0) this.skip(); // the openssl command names the file
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-cadir-'));
    try {
      fs.copyFileSync(caFile, path.join(dir, `${hash.stdout.trim()}.0`));
      const r = await runChild(['--use-openssl-ca'], { SSL_CERT_FILE: path.join(dir, 'none.pem'), SSL_CERT_DIR: dir });
      assert.deepStrictEqual(trustVerdict(r), trusted);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--use-system-ca (Node 22.15+, 23.8+): the system store (on Linux, SSL_CERT_FILE) is trusted too', async function () {
    // Node reads the system store from OpenSSL's paths only on Linux & co.
    if (!nodeHas('--use-system-ca') || process.platform === 'win32' || process.platform === 'darwin') this.skip();
    const r = await runChild(['--use-system-ca']);
    assert.deepStrictEqual(trustVerdict(r), trusted);
    assert.strictEqual(r.sameDefaults, true);
  });

  it('NODE_USE_SYSTEM_CA=1 where node:tls follows it (Node 22.19+, 24.6+)', async function () {
    if (!nodeHas('--use-system-ca') || process.platform === 'win32' || process.platform === 'darwin') this.skip();
    const builtin = await runChild([], { NODE_USE_SYSTEM_CA: '1', TLSWRAP_TEST_BUILTIN: '1' });
    if (!builtin.authorized) this.skip(); // this Node ignores the variable
    const r = await runChild([], { NODE_USE_SYSTEM_CA: '1' });
    assert.deepStrictEqual(trustVerdict(r), trusted);
    assert.strictEqual(r.sameDefaults, true);
  });
});

// tls.getCACertificates() / setDefaultCACertificates(), on the Nodes that have
// them (22.15+ / 24.5+): the default store is tlswrap's own, read and replaced
// as node:tls's is.
describe('verify: getCACertificates() and setDefaultCACertificates()', function () {
  before(function () {
    if (typeof tls.setDefaultCACertificates !== 'function') this.skip();
  });

  // Connects without a `ca` option to a server whose chain ends at the test
  // CA: resolves with the verify error code, or null if authorized.
  async function verifyWithDefaults() {
    const server = tlswrap.createServer(serverOptions());
    server.on('secureConnection', (sock) => sock.end());
    server.on('tlsClientError', () => {});
    const port = await listen(server);
    try {
      const client = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost' });
      return await new Promise((resolve) => {
        client.on('secureConnect', () => resolve(client.authorized ? null : client.authorizationError));
        client.on('error', (err) => resolve(err.code));
      }).finally(() => client.destroy());
    } finally {
      await closeServer(server);
    }
  }

  it("getCACertificates(type): node's lists, one PEM string per certificate", function () {
    for (const type of ['bundled', 'extra']) {
      assert.deepStrictEqual(tlswrap.getCACertificates(type), tls.getCACertificates(type), type);
    }
    // The default store as a set of certificates: a test file that ran
    // before may have set tlswrap's store and put the same certificates back,
    // which then reads in its own order and PEM form, without node's
    // duplicates (bundled roots that are also extra).
    const asSet = (list) => [...new Set(list.map((pem) => new X509Certificate(pem).toString()))].sort();
    assert.deepStrictEqual(asSet(tlswrap.getCACertificates('default')), asSet(tls.getCACertificates('default')));
    assert.deepStrictEqual(asSet(tlswrap.getCACertificates()), asSet(tls.getCACertificates()));
    assert.throws(() => tlswrap.getCACertificates('nope'), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' });
    assert.throws(() => tlswrap.getCACertificates(1), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('setDefaultCACertificates(): later connections without `ca` trust exactly the given list', async function () {
    const saved = tlswrap.getCACertificates('default');
    try {
      assert.strictEqual(await verifyWithDefaults(), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      tlswrap.setDefaultCACertificates([fixtures.ca, Buffer.from(fixtures.ca)]);
      assert.deepStrictEqual(tlswrap.getCACertificates(), [new X509Certificate(fixtures.ca).toString()]);
      assert.strictEqual(await verifyWithDefaults(), null);
      tlswrap.setDefaultCACertificates([Buffer.from(fixtures.clientCert)]);
      assert.strictEqual(await verifyWithDefaults(), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      // A bundle in one entry: every certificate in it counts.
      tlswrap.setDefaultCACertificates([`${fixtures.selfSignedCert}${fixtures.ca}`]);
      assert.strictEqual(tlswrap.getCACertificates().length, 2);
      assert.strictEqual(await verifyWithDefaults(), null);
    } finally {
      tlswrap.setDefaultCACertificates(saved);
    }
    assert.strictEqual(await verifyWithDefaults(), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    // The same certificates; node gives them back in its own order and form,
    // duplicates once.
    const normalized = (list) => [...new Set(list.map((pem) => new X509Certificate(pem).toString()))].sort();
    assert.deepStrictEqual(normalized(tlswrap.getCACertificates()), normalized(saved));
  });

  it("setDefaultCACertificates(): node's argument checks", function () {
    assert.throws(() => tlswrap.setDefaultCACertificates('x'),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /"certs" argument must be an instance of Array/ });
    assert.throws(() => tlswrap.setDefaultCACertificates([1]),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /"certs\[0\]" argument/ });
    assert.throws(() => tlswrap.setDefaultCACertificates(['not a certificate']),
      { code: 'ERR_CRYPTO_OPERATION_FAILED' });
    // A certificate block that does not parse, alone, in a bundle or next
    // to a good entry: the whole list is refused, the store kept.
    const before = tlswrap.getCACertificates('default');
    const bad = '-----BEGIN CERTIFICATE-----\nTUlJQm9ndXM=\n-----END CERTIFICATE-----\n';
    for (const certs of [[bad], [`${bad}${fixtures.ca}`], [`${fixtures.ca}${bad}`], [fixtures.ca.toString(), bad]]) {
      assert.throws(() => tlswrap.setDefaultCACertificates(certs), { code: 'ERR_OSSL_PEM_ASN1_LIB' });
    }
    assert.deepStrictEqual(tlswrap.getCACertificates('default'), before);
  });
});
