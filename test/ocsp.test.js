'use strict';

// OCSP stapling as node:tls has it: the server's 'OCSPRequest' (certificate,
// issuer, callback) inside the certificate callback's pause, after the
// SNICallback; the client's requestOCSP and 'OCSPResponse' (the staple, or
// null) before 'secureConnect'. Each scenario runs the same against node:tls
// (TLSWRAP_TEST_BUILTIN=1) and against openssl as a real peer.

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const { X509Certificate } = require('node:crypto');
const {
  tlswrap, fixtures, serverOptions, clientOptions, listen, closeServer, pattern, peerEnv,
} = require('./common');

const raw = (pem) => new X509Certificate(pem).raw;

// One connection with requestOCSP (unless told otherwise), logging what each
// side sees, in order. `onRequest(cb, log, ctx)` is the 'OCSPRequest'
// listener (none if absent); `onResponse(client, response)` runs in the
// client's 'OCSPResponse' listener. Resolves once the client has closed and
// the server has had its say.
async function scenario({ server: serverExtra, client: clientExtra, onRequest, onResponse, rawDestroy } = {}) {
  const log = [];
  const server = tlswrap.createServer(serverOptions(serverExtra), (s) => {
    log.push('secureConnection');
    s.end();
  });
  let rawSocket = null;
  server.on('connection', (s) => { rawSocket = s; });
  const seen = {};
  if (onRequest) {
    server.on('OCSPRequest', (certificate, issuer, cb) => {
      log.push('OCSPRequest');
      seen.certificate = certificate;
      seen.issuer = issuer;
      if (rawDestroy) rawSocket.destroy();
      onRequest(cb, log);
    });
  }
  const serverDone = new Promise((resolve) => {
    server.on('tlsClientError', (err) => {
      log.push(`tlsClientError ${err.code}`);
      seen.serverError = err;
      resolve();
    });
    server.on('secureConnection', (s) => s.on('close', resolve));
  });
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port, { requestOCSP: true, ...clientExtra }));
  client.on('OCSPResponse', (response) => {
    log.push('OCSPResponse');
    seen.response = response;
    if (onResponse) onResponse(client, response);
  });
  client.on('secureConnect', () => log.push('secureConnect'));
  client.on('error', (err) => log.push(`client error ${err.code}`));
  client.resume();
  // (once() would reject on the client's 'error', which some scenarios expect.)
  await new Promise((resolve) => client.on('close', resolve));
  await Promise.race([serverDone, new Promise((resolve) => setTimeout(resolve, 2000))]);
  await closeServer(server);
  return { log, seen };
}

// The client's view only: what it logged, in order.
const clientSide = (log) => log.filter((e) => !/^(tlsClientError|secureConnection|OCSPRequest)/.test(e));

describe('OCSP stapling', function () {
  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    describe(version, function () {
      const server = { maxVersion: version, minVersion: version };

      it('a stapled response reaches the client byte-exact, before secureConnect', async function () {
        const staple = pattern(3000, 7);
        const { log, seen } = await scenario({ server, onRequest: (cb) => cb(null, staple) });
        assert.deepStrictEqual(clientSide(log), ['OCSPResponse', 'secureConnect']);
        assert.ok(log.indexOf('OCSPRequest') < log.indexOf('OCSPResponse'));
        assert.ok(Buffer.isBuffer(seen.response));
        assert.ok(seen.response.equals(staple));
        // The server's certificate as DER; no issuer: neither chain nor CA given.
        assert.ok(Buffer.isBuffer(seen.certificate));
        assert.ok(seen.certificate.equals(raw(fixtures.serverCert)));
        assert.strictEqual(seen.issuer, null);
      });

      it('the issuer comes from the chain or the ca option', async function () {
        const fromCa = await scenario({ server: { ...server, ca: fixtures.ca }, onRequest: (cb) => cb(null, null) });
        assert.ok(fromCa.seen.issuer.equals(raw(fixtures.ca)));
        const chain = Buffer.concat([fixtures.serverCert, fixtures.ca]);
        const fromChain = await scenario({ server: { ...server, cert: chain }, onRequest: (cb) => cb(null, null) });
        assert.ok(fromChain.seen.issuer.equals(raw(fixtures.ca)));
        assert.ok(fromChain.seen.certificate.equals(raw(fixtures.serverCert)));
      });

      it('callback(null, null) staples nothing: OCSPResponse is null', async function () {
        const { log, seen } = await scenario({ server, onRequest: (cb) => cb(null, null) });
        assert.deepStrictEqual(clientSide(log), ['OCSPResponse', 'secureConnect']);
        assert.strictEqual(seen.response, null);
      });

      it('callback(null, <empty Buffer>) staples nothing either: the handshake completes', async function () {
        // An empty CertificateStatus would be refused by the client (OpenSSL
        // fails the handshake), and browsers ask for stapling on every one.
        const { log, seen } = await scenario({ server, onRequest: (cb) => cb(null, Buffer.alloc(0)) });
        assert.deepStrictEqual(clientSide(log), ['OCSPResponse', 'secureConnect']);
        assert.strictEqual(seen.response, null);
      });

      it('no OCSPRequest listener: nothing stapled, OCSPResponse is null', async function () {
        const { log, seen } = await scenario({ server });
        assert.deepStrictEqual(clientSide(log), ['OCSPResponse', 'secureConnect']);
        assert.strictEqual(seen.response, null);
      });

      it('a client that does not ask gets no OCSPResponse and causes no OCSPRequest', async function () {
        const { log } = await scenario({
          server, client: { requestOCSP: false }, onRequest: (cb) => cb(null, Buffer.from('unused')),
        });
        assert.ok(!log.includes('OCSPRequest'), log.join());
        assert.deepStrictEqual(clientSide(log), ['secureConnect']);
      });

      it('callback(err) destroys the socket with that error', async function () {
        const boom = new Error('no staple today');
        const { log, seen } = await scenario({ server, onRequest: (cb) => cb(boom) });
        assert.strictEqual(seen.serverError, boom);
        assert.ok(!log.includes('secureConnect') && !log.includes('secureConnection'), log.join());
        assert.ok(log.includes('client error ECONNRESET'), log.join());
      });

      it('an async callback (setTimeout) still staples', async function () {
        const staple = pattern(100, 3);
        const { log, seen } = await scenario({
          server, onRequest: (cb) => setTimeout(() => cb(null, staple), 20),
        });
        assert.deepStrictEqual(clientSide(log), ['OCSPResponse', 'secureConnect']);
        assert.ok(seen.response.equals(staple));
      });

      it('a second callback is ERR_MULTIPLE_CALLBACK', async function () {
        const { log, seen } = await scenario({
          server, onRequest: (cb) => { cb(null, Buffer.from('a')); cb(null, Buffer.from('b')); },
        });
        // (Whether the server's flight left before the destroy differs
        // between Node 20 and 24's node:tls: the client's fate is not pinned.)
        assert.strictEqual(seen.serverError.code, 'ERR_MULTIPLE_CALLBACK');
        assert.ok(!log.includes('secureConnection'), log.join());
      });

      it('a response that is not a buffer throws ERR_INVALID_ARG_TYPE', async function () {
        let thrown;
        const { seen } = await scenario({
          server,
          onRequest: (cb) => {
            try {
              cb(null, 'not a buffer');
            } catch (err) {
              thrown = err;
            }
            cb(null, null); // the first call counted: this one destroys
          },
        });
        assert.strictEqual(thrown.code, 'ERR_INVALID_ARG_TYPE');
        assert.ok(thrown instanceof TypeError);
        assert.strictEqual(seen.serverError.code, 'ERR_MULTIPLE_CALLBACK');
      });

      it('the connection destroyed inside OCSPRequest: no handshake, both sides see the end', async function () {
        for (const onRequest of [(cb) => cb(null, Buffer.from('x')),
          (cb) => setTimeout(() => cb(null, Buffer.from('x')), 20)]) {
          const { log } = await scenario({ server, rawDestroy: true, onRequest });
          assert.deepStrictEqual(log, ['OCSPRequest', 'tlsClientError ECONNRESET', 'client error ECONNRESET']);
        }
      });

      it('destroy() inside OCSPResponse: no secureConnect, nothing after it', async function () {
        const { log } = await scenario({
          server, onRequest: (cb) => cb(null, Buffer.from('x')), onResponse: (client) => client.destroy(),
        });
        assert.deepStrictEqual(clientSide(log), ['OCSPResponse']);
        const withError = await scenario({
          server,
          onRequest: (cb) => cb(null, Buffer.from('x')),
          onResponse: (client) => client.destroy(Object.assign(new Error('bad staple'), { code: 'BAD' })),
        });
        assert.deepStrictEqual(clientSide(withError.log), ['OCSPResponse', 'client error BAD']);
      });

      it('a resumed session: no OCSPRequest; OCSPResponse as OpenSSL reports it', async function () {
        const log = [];
        const srv = tlswrap.createServer(serverOptions(server), (s) => s.end('x'));
        srv.on('OCSPRequest', (certificate, issuer, cb) => {
          log.push('OCSPRequest');
          cb(null, Buffer.from('staple'));
        });
        const port = await listen(srv);
        let session;
        for (let i = 0; i < 2; i++) {
          const client = tlswrap.connect(clientOptions(port, { requestOCSP: true, session }));
          client.on('session', (s) => { session = s; });
          client.on('OCSPResponse', (r) => log.push(`${i} OCSPResponse ${r}`));
          client.on('secureConnect', () => log.push(`${i} secureConnect reused=${client.isSessionReused()}`));
          client.resume();
          await new Promise((resolve) => client.on('close', resolve));
        }
        await closeServer(srv);
        // No certificate is sent on resumption: TLS 1.2 has no status at
        // all, TLS 1.3 reports an empty one (node:tls alike).
        const resumed = version === 'TLSv1.2' ? [] : ['1 OCSPResponse null'];
        assert.deepStrictEqual(log, ['OCSPRequest', '0 OCSPResponse staple', '0 secureConnect reused=false',
          ...resumed, '1 secureConnect reused=true']);
      });

      it('the SNICallback runs first; OCSPRequest describes the context it chose', async function () {
        const other = tlswrap.createSecureContext({ key: fixtures.otherKey, cert: fixtures.otherCert, ca: fixtures.ca });
        const order = [];
        const staple = pattern(64, 9);
        const { log, seen } = await scenario({
          server: {
            ...server,
            SNICallback: (name, cb) => {
              order.push(`SNI ${name}`);
              setTimeout(() => cb(null, name === 'other.example' ? other : null), 10);
            },
          },
          client: { servername: 'other.example' },
          onRequest: (cb) => {
            order.push('OCSPRequest');
            cb(null, staple);
          },
        });
        assert.deepStrictEqual(order, ['SNI other.example', 'OCSPRequest']);
        assert.ok(seen.certificate.equals(raw(fixtures.otherCert)));
        assert.ok(seen.issuer.equals(raw(fixtures.ca)));
        assert.deepStrictEqual(clientSide(log), ['OCSPResponse', 'secureConnect']);
        assert.ok(seen.response.equals(staple));
      });
    });
  }

  describe('with openssl as the peer', function () {
    const hasOpenssl = spawnSync('openssl', ['version'], { env: peerEnv }).status === 0;
    let dir;
    let response; // a real OCSP response (DER) for the server certificate

    before(function () {
      if (!hasOpenssl) this.skip();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-ocsp-'));
      const fx = (name) => path.join(__dirname, 'fixtures', name);
      const run = (args) => {
        const r = spawnSync('openssl', args, { cwd: dir, env: peerEnv, encoding: 'utf8' });
        assert.strictEqual(r.status, 0, r.stderr);
      };
      fs.writeFileSync(path.join(dir, 'index.txt'), '');
      run(['ocsp', '-issuer', fx('ca-cert.pem'), '-cert', fx('server-cert.pem'), '-no_nonce', '-reqout', 'req.der']);
      run(['ocsp', '-index', 'index.txt', '-rsigner', fx('ca-cert.pem'), '-rkey', fx('ca-key.pem'),
        '-CA', fx('ca-cert.pem'), '-reqin', 'req.der', '-respout', 'resp.der', '-ndays', '1']);
      response = fs.readFileSync(path.join(dir, 'resp.der'));
    });

    after(function () {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('s_client -status receives what the OCSPRequest callback staples', async function () {
      const server = tlswrap.createServer(serverOptions(), (s) => s.end());
      let requests = 0;
      server.on('OCSPRequest', (certificate, issuer, cb) => {
        requests++;
        cb(null, response);
      });
      server.on('tlsClientError', () => {});
      const port = await listen(server);
      try {
        const proc = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost',
          '-status', '-CAfile', path.join(__dirname, 'fixtures', 'ca-cert.pem')],
        { env: peerEnv, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        proc.stdout.setEncoding('utf8');
        proc.stdout.on('data', (t) => { out += t; });
        proc.stderr.resume();
        const timer = setTimeout(() => proc.kill('SIGKILL'), 15000);
        await once(proc, 'close');
        clearTimeout(timer);
        assert.strictEqual(requests, 1);
        assert.match(out, /OCSP Response Status: successful/);
        assert.match(out, /Cert Status: unknown/);
      } finally {
        await closeServer(server);
      }
    });

    it('requestOCSP against s_server -status_file gets the file byte-exact', async function () {
      const net = require('node:net');
      const probe = net.createServer();
      const port = await listen(probe);
      await closeServer(probe);
      const proc = spawn('openssl', ['s_server', '-accept', `127.0.0.1:${port}`, '-naccept', '1',
        '-cert', path.join(__dirname, 'fixtures', 'server-cert.pem'),
        '-key', path.join(__dirname, 'fixtures', 'server-key.pem'),
        '-status_file', path.join(dir, 'resp.der')],
      { env: peerEnv, stdio: ['pipe', 'pipe', 'pipe'] });
      proc.stdout.resume();
      proc.stderr.resume();
      try {
        let client;
        for (let i = 0; i < 100 && !client; i++) {
          // s_server takes a moment to listen.
          const c = tlswrap.connect(clientOptions(port, { requestOCSP: true }));
          const result = await new Promise((resolve) => {
            const seen = [];
            c.on('OCSPResponse', (r) => seen.push(r));
            c.once('secureConnect', () => resolve(seen));
            c.once('error', () => resolve(null));
          });
          if (result) {
            client = c;
            assert.strictEqual(result.length, 1);
            assert.ok(result[0].equals(response));
          } else {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
        assert.ok(client, 'could not connect to s_server');
        client.destroy();
      } finally {
        proc.kill();
        await once(proc, 'close');
      }
    });
  });
});
