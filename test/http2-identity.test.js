'use strict';

// The TLS identity under tlswrap/http2's sessions, as node:http2 over
// node:tls shows it: encrypted, ALPN h2, the origin set and the peer's
// certificate on client and server sessions, through createConnection and
// performServerHandshake(); and a client that refuses a server it cannot trust.

const assert = require('node:assert');
const { once } = require('node:events');
const { builtin, fixtures, tlswrap, serverOptions, listen, http2Peers, http2Fetch: fetch } = require('./common');

const http2 = builtin ? require('node:http2') : require('tlswrap/http2');


// The TLS identity a session, its socket proxy, or a request's socket shows.
function identity(session, socket) {
  const cert = socket.getPeerCertificate();
  const cipher = socket.getCipher();
  return {
    encrypted: session.encrypted,
    alpnProtocol: session.alpnProtocol,
    socketEncrypted: socket.encrypted,
    socketAlpn: socket.alpnProtocol,
    protocol: socket.getProtocol(),
    cipher: typeof cipher.name,
    peerCN: cert && cert.subject ? cert.subject.CN : null,
  };
}

describe('http2: TLS identity', function () {
  const { servers, sessions, start, client, release: releasePeers } = http2Peers(http2);
  afterEach(releasePeers);

  it('client and server sessions report the TLS identity: encrypted, h2, originSet, certificates', async function () {
    const seen = {};
    const { server, port } = await start({ requestCert: true, ca: fixtures.ca }, (req, res) => {
      const session = req.stream.session;
      seen.request = identity(session, req.socket);
      seen.stream = identity(session, session.socket);
      seen.reqSocketAuthorized = req.socket.authorized;
      seen.sameServer = session.server === server;
      seen.servername = req.socket.servername;
      res.end('ok');
    });
    const serverSession = once(server, 'session');
    const session = client(port, { key: fixtures.clientKey, cert: fixtures.clientCert });
    await once(session, 'connect');
    const clientIdentity = identity(session, session.socket);
    assert.deepStrictEqual(clientIdentity, {
      encrypted: true, alpnProtocol: 'h2', socketEncrypted: true, socketAlpn: 'h2',
      protocol: 'TLSv1.3', cipher: 'string', peerCN: 'localhost',
    });
    assert.deepStrictEqual(session.originSet, [`https://localhost:${port}`]);
    assert.strictEqual(session.socket.authorized, true);
    assert.strictEqual(session.socket.remotePort, port);
    assert.strictEqual(session.socket.remoteAddress, '127.0.0.1');
    assert.strictEqual(typeof session.socket.getSession, 'function');

    const { text } = await fetch(session);
    assert.strictEqual(text, 'ok');
    const expected = {
      encrypted: true, alpnProtocol: 'h2', socketEncrypted: true, socketAlpn: 'h2',
      protocol: 'TLSv1.3', cipher: 'string', peerCN: 'tlswrap client',
    };
    assert.deepStrictEqual(seen, {
      request: expected, stream: expected, reqSocketAuthorized: true, sameServer: true, servername: 'localhost',
    });
    const [s] = await serverSession;
    assert.strictEqual(s.encrypted, true);
    assert.strictEqual(s.alpnProtocol, 'h2');
  });

  it("connect() with a createConnection that returns the module's TLS socket keeps its TLS identity", async function () {
    const { port } = await start({}, (req, res) => res.end('ok'));
    const session = http2.connect(`https://localhost:${port}`, {
      createConnection: () => tlswrap.connect({
        host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, ALPNProtocols: ['h2'],
      }),
    });
    sessions.push(session);
    await once(session, 'connect');
    assert.deepStrictEqual(identity(session, session.socket), {
      encrypted: true, alpnProtocol: 'h2', socketEncrypted: true, socketAlpn: 'h2',
      protocol: 'TLSv1.3', cipher: 'string', peerCN: 'localhost',
    });
    assert.deepStrictEqual(session.originSet, [`https://localhost:${port}`]);
    const { text } = await fetch(session);
    assert.strictEqual(text, 'ok');
  });

  it('connect() with a createConnection that returns a destroyed TLS socket: the session closes, no error', async function () {
    // As node:http2 over a destroyed node:tls socket: nothing waits for a
    // handshake that will never come, and no ERR_SOCKET_CLOSED is thrown.
    const { port } = await start({}, (req, res) => res.end('ok'));
    const session = http2.connect(`https://localhost:${port}`, {
      createConnection: () => {
        const socket = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca });
        socket.destroy();
        return socket;
      },
    });
    const errors = [];
    session.on('error', (err) => errors.push(err.code));
    const req = session.request({ ':path': '/' });
    req.on('error', (err) => errors.push(err.code));
    req.resume();
    await once(session, 'close');
    assert.deepStrictEqual(errors, []);
  });

  it("performServerHandshake() over a TLS server's socket keeps its identity", async function () {
    const tlsServer = tlswrap.createServer(serverOptions({ ALPNProtocols: ['h2'] }), (socket) => {
      const session = http2.performServerHandshake(socket);
      session.on('stream', (stream) => {
        stream.respond({ ':status': 200 });
        stream.end(`${session.encrypted} ${session.alpnProtocol} ${typeof session.socket.getCipher().name}`);
      });
    });
    servers.push(tlsServer);
    const port = await listen(tlsServer);
    assert.strictEqual((await fetch(client(port))).text, 'true h2 string');
  });

  describe('the client rejects a server it cannot trust', function () {
    async function sessionError(port, extra) {
      const session = client(port, extra);
      const [err] = await once(session, 'error');
      return err;
    }

    it('a CA that did not sign the certificate: UNABLE_TO_VERIFY_LEAF_SIGNATURE', async function () {
      const { port } = await start({}, (req, res) => res.end('ok'));
      const err = await sessionError(port, { ca: fixtures.otherCert });
      assert.strictEqual(err.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    });

    it('a name the certificate does not hold: ERR_TLS_CERT_ALTNAME_INVALID', async function () {
      const { port } = await start({}, (req, res) => res.end('ok'));
      const err = await sessionError(port, { servername: 'wrong.example' });
      assert.strictEqual(err.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
    });
  });
});
