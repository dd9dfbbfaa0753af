'use strict';

// tlswrap/https: node:https's shape over tlswrap. The server is an HTTP server
// whose connections are TLS sockets (node:http's options, timeouts and
// connection tracking included); the Agent keeps sockets alive and resumes
// sessions; real clients (node's http client, curl) talk to it.

const assert = require('node:assert');
const { execFile, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const net = require('node:net');
const nodeTls = require('node:tls');
const path = require('node:path');
const { builtin, fixtures, tlswrap, serverOptions, listen, closeServer, peerEnv } = require('./common');

const https = builtin ? require('node:https') : require('tlswrap/https');
// Whether node:https's Agent gives a request with its own checkServerIdentity
// a socket of its own (24.22, 22.23 on).
const nodeSeparatesChecks = /kPerRequestCheckServerIdentity/.test(
  Function.prototype.toString.call(require('node:https').Agent.prototype.getName));

// A GET/POST through `https.request`, resolving with the response, its body
// as text, and the request (for req.socket / req.reusedSocket).
function fetch(port, extra = {}, body) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, path: '/', ...extra,
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ res, text, req }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// A raw TLS client that writes `request` and collects everything until the
// server closes; resolves with the text and how long the server took.
async function rawExchange(port, request) {
  const started = Date.now();
  const socket = tlswrap.connect({ host: '127.0.0.1', port, ca: fixtures.ca, servername: 'localhost' });
  await once(socket, 'secureConnect');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d) => { text += d; });
  socket.on('error', () => {});
  socket.write(request);
  await once(socket, 'close');
  return { text, elapsed: Date.now() - started };
}

describe('https', function () {
  const servers = [];
  const agents = [];
  async function start(options, handler) {
    const server = https.createServer(serverOptions(options), handler);
    servers.push(server);
    const port = await listen(server);
    return { server, port };
  }
  function agent(options) {
    const a = new https.Agent(options);
    agents.push(a);
    return a;
  }
  afterEach(async function () {
    for (const a of agents.splice(0)) a.destroy();
    for (const s of servers.splice(0)) {
      if (s.listening) {
        s.closeAllConnections();
        await closeServer(s);
      }
    }
  });

  it('exports what node:https exports', function () {
    assert.deepStrictEqual(Object.keys(https).sort(), Object.keys(require('node:https')).sort());
    assert.ok(https.globalAgent instanceof https.Agent);
    assert.ok(https.globalAgent instanceof require('node:http').Agent);
    if (!builtin) {
      assert.strictEqual(require('tlswrap/https'), require('../lib/https'));
      assert.ok(https.globalAgent instanceof require('node:https').Agent);
    }
  });

  it('Agent and Server are callable without new; an old-style Agent subclass works', async function () {
    const util = require('node:util');
    const agent = https.Agent({ keepAlive: true, maxCachedSessions: 3 });
    assert.ok(agent instanceof https.Agent);
    assert.strictEqual(agent.maxCachedSessions, 3);
    // Proxy agents of the pre-class era: a function that calls Agent on
    // its own object, with util.inherits.
    function OldStyleAgent(options) {
      https.Agent.call(this, options);
      this.oldStyle = true;
    }
    util.inherits(OldStyleAgent, https.Agent);
    const old = new OldStyleAgent({ keepAlive: true });
    assert.ok(old instanceof https.Agent);
    const server = https.Server(serverOptions(), (req, res) => res.end('ok'));
    assert.ok(server instanceof https.Server);
    const port = await listen(server);
    try {
      const body = await new Promise((resolve, reject) => {
        https.get({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, agent: old }, (res) => {
          let text = '';
          res.on('data', (d) => { text += d; });
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      assert.strictEqual(body, 'ok');
    } finally {
      old.destroy();
      await closeServer(server);
    }
    assert.throws(() => new https.Server([]), { code: 'ERR_INVALID_ARG_TYPE' });
  });

  it('createServer(options, handler) serves requests whose socket is the TLS socket', async function () {
    const seen = [];
    const { server, port } = await start({ requestCert: true, ca: fixtures.ca }, (req, res) => {
      const s = req.socket;
      seen.push({
        tls: s instanceof tlswrap.TLSSocket,
        encrypted: s.encrypted,
        authorized: s.authorized,
        peerCN: s.getPeerCertificate().subject.CN,
        alpn: s.alpnProtocol,
        method: req.method,
        url: req.url,
      });
      res.setHeader('content-type', 'text/plain');
      res.end(`hello ${req.url}`);
    });
    assert.ok(server instanceof tlswrap.Server);
    const secureConnections = [];
    server.on('secureConnection', (s) => secureConnections.push(s));
    const { res, text } = await fetch(port, {
      path: '/a?b=1', key: fixtures.clientKey, cert: fixtures.clientCert, ALPNProtocols: ['http/1.1'],
    });
    assert.strictEqual(res.statusCode, 200);
    assert.strictEqual(res.headers['content-type'], 'text/plain');
    assert.strictEqual(text, 'hello /a?b=1');
    assert.deepStrictEqual(seen, [{
      tls: true, encrypted: true, authorized: true, peerCN: 'tlswrap client', alpn: 'http/1.1', method: 'GET', url: '/a?b=1',
    }]);
    assert.strictEqual(secureConnections.length, 1);
    assert.deepStrictEqual(server.address(), { address: '127.0.0.1', family: 'IPv4', port });
  });

  it('a keep-alive Agent sends several requests over one reused socket', async function () {
    let connections = 0;
    const { server, port } = await start({}, (req, res) => res.end(req.url));
    server.on('secureConnection', () => connections++);
    const keepAlive = agent({ keepAlive: true, maxSockets: 1 });
    const sockets = [];
    for (let i = 0; i < 4; i++) {
      const { res, text, req } = await fetch(port, { agent: keepAlive, path: `/${i}` });
      assert.strictEqual(res.statusCode, 200);
      assert.strictEqual(text, `/${i}`);
      assert.strictEqual(req.reusedSocket, i > 0);
      sockets.push(req.socket);
      // The socket goes back to the pool on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.strictEqual(new Set(sockets).size, 1);
    assert.strictEqual(connections, 1);
    const handle = sockets[0]._handle;
    assert.strictEqual(typeof handle.getAsyncId(), 'number');
    assert.ok(handle.getAsyncId() > 0);
  });

  it("a socket's handle reports the async id of its TLSWRAP resource", async function () {
    const asyncHooks = require('node:async_hooks');
    const types = new Map();
    const hook = asyncHooks.createHook({ init(id, type) { types.set(id, type); } }).enable();
    let socket;
    try {
      const { port } = await start({}, (req, res) => res.end('x'));
      ({ req: { socket } } = await fetch(port, { agent: agent({ keepAlive: true }) }));
    } finally {
      hook.disable();
    }
    assert.strictEqual(types.get(socket._handle.getAsyncId()), 'TLSWRAP');
  });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`a new connection resumes the Agent's cached session, ${version}`, async function () {
      const { port } = await start({ minVersion: version, maxVersion: version }, (req, res) => res.end('ok'));
      const fresh = agent({ keepAlive: false });
      const first = await fetch(port, { agent: fresh });
      assert.strictEqual(first.req.socket.isSessionReused(), false);
      const second = await fetch(port, { agent: fresh });
      assert.notStrictEqual(second.req.socket, first.req.socket);
      assert.strictEqual(second.req.reusedSocket, false);
      assert.strictEqual(second.req.socket.isSessionReused(), true);
      assert.strictEqual(fresh._sessionCache.list.length, 1);

      const noCache = agent({ keepAlive: false, maxCachedSessions: 0 });
      await fetch(port, { agent: noCache });
      const uncached = await fetch(port, { agent: noCache });
      assert.strictEqual(uncached.req.socket.isSessionReused(), false);
      assert.strictEqual(noCache._sessionCache.list.length, 0);
    });
  }

  it('maxCachedSessions bounds the session cache, oldest out first', async function () {
    const { port } = await start({}, (req, res) => res.end('ok'));
    const small = agent({ keepAlive: false, maxCachedSessions: 1 });
    // Two agent keys for one server: the servername is part of the key.
    await fetch(port, { agent: small, servername: 'localhost' });
    const [firstKey] = small._sessionCache.list;
    await fetch(port, { agent: small, servername: 'localhost', rejectUnauthorized: false, path: '/other' });
    assert.strictEqual(small._sessionCache.list.length, 1);
    assert.notStrictEqual(small._sessionCache.list[0], firstKey);
    const again = await fetch(port, { agent: small, servername: 'localhost' });
    assert.strictEqual(again.req.socket.isSessionReused(), false);
  });

  // The Agent's sessions follow the session cache's rules (README, "Client
  // session cache"): keyed by everything that must match, verified
  // connections only. Where node:https does the same, builtin runs them too.
  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    describe(`Agent sessions never cross settings, ${version}`, function () {
      const cases = [
        ['CA sets', { ca: [fixtures.ca] }, { ca: [fixtures.ca, fixtures.selfSignedCert] }],
        ['server names', { servername: 'localhost' }, { servername: '' }],
        ['client certificates', {}, { cert: fixtures.clientCert, key: fixtures.clientKey }],
        // node:https's Agent keys its sessions by the agent name, which
        // leaves the ALPN offer out.
        ['ALPN offers', { ALPNProtocols: ['http/1.1'] }, { ALPNProtocols: ['x-other', 'http/1.1'] }, true],
      ];
      for (const [what, a, b, tlswrapOnly] of cases) {
        it(`different ${what}: full handshake; the first settings still resume`, async function () {
          if (builtin && tlswrapOnly) this.skip();
          const { port } = await start({ minVersion: version, maxVersion: version }, (req, res) => res.end('ok'));
          const fresh = agent({ keepAlive: false });
          assert.strictEqual((await fetch(port, { agent: fresh, ...a })).req.socket.isSessionReused(), false);
          const other = await fetch(port, { agent: fresh, ...b });
          assert.strictEqual(other.text, 'ok');
          assert.strictEqual(other.req.socket.isSessionReused(), false);
          assert.strictEqual((await fetch(port, { agent: fresh, ...a })).req.socket.isSessionReused(), true);
        });
      }

      it('a session from a connection that failed checkServerIdentity is never reused', async function () {
        const { port } = await start({ minVersion: version, maxVersion: version }, (req, res) => res.end('ok'));
        let fail = true;
        const checkServerIdentity = (name, cert) => (fail ? new Error('not this time') : nodeTls.checkServerIdentity(name, cert));
        const checked = agent({ keepAlive: false, checkServerIdentity });
        await assert.rejects(fetch(port, { agent: checked }), { message: 'not this time' });
        fail = false;
        assert.strictEqual((await fetch(port, { agent: checked })).req.socket.isSessionReused(), false);
        assert.strictEqual((await fetch(port, { agent: checked })).req.socket.isSessionReused(), true);
      });

      it('rejectUnauthorized: false: an unauthorized connection leaves no session to reuse', async function () {
        if (builtin) this.skip(); // node:https caches it, and resumes it as authorized: false
        const { port } = await start({ minVersion: version, maxVersion: version }, (req, res) => res.end('ok'));
        const lax = agent({ keepAlive: false, rejectUnauthorized: false });
        const first = await fetch(port, { agent: lax, ca: fixtures.selfSignedCert });
        assert.strictEqual(first.req.socket.authorized, false);
        assert.strictEqual((await fetch(port, { agent: lax, ca: fixtures.selfSignedCert })).req.socket.isSessionReused(),
          false);
        assert.strictEqual(lax._sessionCache.list.length, 0);
      });
    });
  }

  it('_sessionCache has node\'s shape; assigning an empty one clears it', async function () {
    const { port } = await start({}, (req, res) => res.end('ok'));
    const fresh = agent({ keepAlive: false });
    await fetch(port, { agent: fresh });
    const { map, list } = fresh._sessionCache;
    assert.strictEqual(list.length, 1);
    assert.deepStrictEqual(Object.keys(map), list);
    assert.ok(Buffer.isBuffer(map[list[0]]));
    fresh._sessionCache = { map: {}, list: [] };
    assert.strictEqual(fresh._sessionCache.list.length, 0);
    assert.strictEqual((await fetch(port, { agent: fresh })).req.socket.isSessionReused(), false);
  });

  it('a request with its own checkServerIdentity gets a socket of its own', async function () {
    if (builtin && !nodeSeparatesChecks) this.skip(); // older node:https shares the pooled socket
    const { port } = await start({}, (req, res) => res.end('ok'));
    const keepAlive = agent({ keepAlive: true, maxSockets: 1 });
    const first = await fetch(port, { agent: keepAlive });
    await new Promise((resolve) => setImmediate(resolve));
    let checked = 0;
    const second = await fetch(port, {
      agent: keepAlive,
      checkServerIdentity: () => { checked++; },
    });
    assert.strictEqual(second.req.reusedSocket, false);
    assert.notStrictEqual(second.req.socket, first.req.socket);
    assert.strictEqual(checked, 1);
  });

  // A pinning check is usually one function for the whole program: its
  // requests share keep-alive sockets and resume sessions, apart from
  // requests checked by any other function.
  it('requests with the same checkServerIdentity function share the pooled socket and the sessions', async function () {
    // node:https from 24.22 and 22.23 gives each such request a socket of its
    // own, even for the same function (before, it pools them with every
    // other).
    if (builtin && nodeSeparatesChecks) this.skip();
    const { port } = await start({}, (req, res) => res.end('ok'));
    const keepAlive = agent({ keepAlive: true, maxSockets: 1 });
    let checked = 0;
    const pinned = (name, cert) => {
      checked++;
      return nodeTls.checkServerIdentity(name, cert);
    };
    const first = await fetch(port, { agent: keepAlive, checkServerIdentity: pinned });
    await new Promise((resolve) => setImmediate(resolve));
    const second = await fetch(port, { agent: keepAlive, checkServerIdentity: pinned });
    assert.strictEqual(second.req.reusedSocket, true);
    assert.strictEqual(second.req.socket, first.req.socket);
    assert.strictEqual(checked, 1);
    if (builtin) return; // node:https's Agent resumes only by agent name
    const closing = agent({ keepAlive: false });
    await fetch(port, { agent: closing, checkServerIdentity: pinned });
    const resumed = await fetch(port, { agent: closing, checkServerIdentity: pinned });
    assert.strictEqual(resumed.req.socket.isSessionReused(), true);
    const other = await fetch(port, { agent: closing, checkServerIdentity: (name, cert) => nodeTls.checkServerIdentity(name, cert) });
    assert.strictEqual(other.req.socket.isSessionReused(), false);
  });

  it('emits the TLS server events: secureConnection, keylog, tlsClientError (and clientError)', async function () {
    const { server, port } = await start({}, (req, res) => res.end('ok'));
    const keylog = [];
    server.on('keylog', (line, socket) => keylog.push([line, socket]));
    const secure = once(server, 'secureConnection');
    await fetch(port, { agent: false });
    const [secureSocket] = await secure;
    assert.ok(keylog.length > 0);
    assert.ok(keylog.every(([line, s]) => Buffer.isBuffer(line) && s === secureSocket));

    const tlsClientError = once(server, 'tlsClientError');
    const clientError = once(server, 'clientError');
    const raw = net.connect(port, '127.0.0.1');
    raw.on('error', () => {});
    raw.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const [[err], [err2]] = await Promise.all([tlsClientError, clientError]);
    assert.ok(err instanceof Error);
    assert.strictEqual(err2, err);
    raw.destroy();
  });

  describe('http options', function () {
    it('keepAliveTimeout closes an idle keep-alive connection', async function () {
      const { port } = await start({ keepAliveTimeout: 300 }, (req, res) => res.end('ok'));
      const { text, elapsed } = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(text, /\r\nKeep-Alive: timeout=0\r\n/i);
      assert.ok(elapsed >= 250 && elapsed < 3000, `closed after ${elapsed} ms`);
    });

    it('headersTimeout answers 408 to a request whose headers never end', async function () {
      const { port } = await start({ headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 50 },
                                   (req, res) => res.end('ok'));
      const { text, elapsed } = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: localhost\r\n');
      assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.ok(elapsed < 3000, `answered after ${elapsed} ms`);
    });

    it('requestTimeout answers 408 to a body that never completes', async function () {
      const { port } = await start({ headersTimeout: 100, requestTimeout: 300, connectionsCheckingInterval: 50 },
                                   (req, res) => { req.resume(); req.on('end', () => res.end('ok')); });
      const { text, elapsed } = await rawExchange(
        port, 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\npartial');
      assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.ok(elapsed >= 250 && elapsed < 3000, `answered after ${elapsed} ms`);
    });

    // node:http writes the 431 and destroys the socket from its 'data' handler.
    it('maxHeaderSize answers 431 to headers over the limit', async function () {
      const { port } = await start({ maxHeaderSize: 1024 }, (req, res) => res.end('ok'));
      const { text } = await rawExchange(
        port, `GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(2048)}\r\n\r\n`);
      assert.match(text, /^HTTP\/1\.1 431 /);
    });

    it('closeIdleConnections() closes idle keep-alive sockets, close() calls back', async function () {
      const { server, port } = await start({}, (req, res) => res.end('ok'));
      assert.strictEqual(server.keepAliveTimeout, 5000);
      assert.strictEqual(server.requestTimeout, 300000);
      const { req } = await fetch(port, { agent: agent({ keepAlive: true }) });
      const closed = once(req.socket, 'close');
      server.closeIdleConnections();
      await closed;
      await closeServer(server);
      assert.strictEqual(server.listening, false);
    });

    it('closeAllConnections() ends a request in flight; setTimeout() times out idle sockets', async function () {
      const { server, port } = await start({}, () => {});
      const timeouts = [];
      server.setTimeout(200, (socket) => { timeouts.push(socket); socket.destroy(); });
      assert.strictEqual(server.timeout, 200);
      await assert.rejects(fetch(port, { agent: false }), { code: 'ECONNRESET' });
      assert.strictEqual(timeouts.length, 1);

      server.setTimeout(0);
      const pending = fetch(port, { agent: false });
      await once(server, 'request');
      server.closeAllConnections();
      await assert.rejects(pending, { code: 'ECONNRESET' });
    });

    // A download a slow client keeps reading is activity: server.setTimeout()
    // must not cut it off while its bytes keep moving (net.Socket compares
    // the write queue between checks).
    it('setTimeout() does not fire during a large response a slow client keeps reading', async function () {
      // node:https means to (the reference for the rule), but its check
      // reads the queue of the TLS handle, which the TLS layer drains into
      // TCP's in bursts: it fired in 2 runs of 6 on Node 20.
      if (builtin) this.skip();
      const size = 48 * 1024 * 1024;
      const timeouts = [];
      const { server, port } = await start({}, (req, res) => res.end(Buffer.alloc(size, 'x')));
      server.setTimeout(500, (socket) => { timeouts.push(Date.now()); socket.destroy(); });
      const client = nodeTls.connect({ port, host: '127.0.0.1', ca: fixtures.ca, servername: 'localhost' });
      try {
        await once(client, 'secureConnect');
        client.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
        // Reads for 10 ms every 100 ms: the response takes well over 500 ms,
        // its bytes moving all along.
        let got = 0;
        let closed = false;
        client.on('data', (d) => { got += d.length; });
        client.once('close', () => { closed = true; });
        client.pause();
        const start = Date.now();
        while (!closed) {
          client.resume();
          await new Promise((resolve) => setTimeout(resolve, 10));
          client.pause();
          await new Promise((resolve) => setTimeout(resolve, 90));
        }
        assert.deepStrictEqual(timeouts, [], `'timeout' after ${timeouts.map((t) => t - start)} ms`);
        assert.ok(got > size, `the client got ${got} bytes of a ${size}-byte body`);
        // Long enough for the check to mean something.
        assert.ok(Date.now() - start > 600, `the download took only ${Date.now() - start} ms`);
      } finally {
        client.destroy();
      }
    });

    // node:tls runs the handshake timeout as the socket's own (setTimeout(),
    // then setTimeout(0)): a request's socket reads 'timeout' 0.
    it("a request's socket has timeout 0 once its handshake is over", async function () {
      const seen = [];
      const { port } = await start({}, (req, res) => {
        seen.push(req.socket.timeout);
        res.end();
      });
      await fetch(port, { agent: false });
      assert.deepStrictEqual(seen, [0]);
    });
  });

  it('an Express-style (req, res) app: routes, JSON bodies, streamed responses', async function () {
    const big = Buffer.alloc(1 << 20, 'z');
    const routes = {
      'GET /json': (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ secure: req.socket.encrypted === true }));
      },
      'POST /echo': (req, res) => {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks));
          res.statusCode = 201;
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ got: body }));
        });
      },
      'GET /big': (req, res) => {
        res.setHeader('content-length', big.length);
        const { Readable } = require('node:stream');
        Readable.from([big.subarray(0, 300000), big.subarray(300000)]).pipe(res);
      },
    };
    const app = (req, res) => {
      res.setHeader('x-powered-by', 'tlswrap-test');
      const route = routes[`${req.method} ${req.url}`];
      if (route) return route(req, res);
      res.statusCode = 404;
      return res.end('not found');
    };
    const { port } = await start({}, app);
    const keepAlive = agent({ keepAlive: true });
    const json = await fetch(port, { agent: keepAlive, path: '/json' });
    assert.deepStrictEqual(JSON.parse(json.text), { secure: true });
    assert.strictEqual(json.res.headers['x-powered-by'], 'tlswrap-test');
    const echo = await fetch(port, {
      agent: keepAlive, path: '/echo', method: 'POST', headers: { 'content-type': 'application/json' },
    }, JSON.stringify({ a: [1, 2, 3] }));
    assert.strictEqual(echo.res.statusCode, 201);
    assert.deepStrictEqual(JSON.parse(echo.text), { got: { a: [1, 2, 3] } });
    const large = await fetch(port, { agent: keepAlive, path: '/big' });
    assert.strictEqual(large.text, big.toString());
    const missing = await fetch(port, { agent: keepAlive, path: '/nope' });
    assert.strictEqual(missing.res.statusCode, 404);
  });

  it("an Upgrade request hands the TLS socket to 'upgrade'", async function () {
    const { server, port } = await start({}, (req, res) => res.end('no upgrade'));
    server.on('upgrade', (req, socket, head) => {
      assert.ok(socket instanceof tlswrap.TLSSocket);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.write(head);
      socket.pipe(socket);
    });
    const req = https.request({
      host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, agent: false,
      headers: { Connection: 'Upgrade', Upgrade: 'echo' },
    });
    req.end();
    const [res, socket] = await once(req, 'upgrade');
    assert.strictEqual(res.statusCode, 101);
    socket.setEncoding('utf8');
    socket.write('ping');
    const [echoed] = await once(socket, 'data');
    assert.strictEqual(echoed, 'ping');
    socket.destroy();
  });

  it('https.get() takes a URL string and options', async function () {
    const { port } = await start({}, (req, res) => res.end(`${req.method} ${req.url}`));
    const text = await new Promise((resolve, reject) => {
      https.get(`https://127.0.0.1:${port}/p?q=1`, { ca: fixtures.ca, servername: 'localhost', agent: false }, (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { t += d; });
        res.on('end', () => resolve(t));
      }).on('error', reject);
    });
    assert.strictEqual(text, 'GET /p?q=1');
  });

  // node's socket closes from its handle's close callback, after the
  // immediates of that turn of the loop: a response the client destroys
  // mid-body closes before the request does.
  it("the client destroys a response mid-body: the response's 'close', then the request's", async function () {
    const body = Buffer.alloc(64 * 1024, 1);
    const { port } = await start({}, (req, res) => {
      res.on('error', () => {});
      res.writeHead(200, { 'content-length': 64 * body.length });
      let sent = 0;
      const pump = () => {
        while (sent < 64) {
          sent++;
          if (!res.write(body)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const events = [];
    const done = new Promise((resolve) => {
      const req = https.get({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, agent: false }, (res) => {
        let got = 0;
        res.on('data', (d) => {
          got += d.length;
          if (got > 256 * 1024 && !res.destroyed) res.destroy();
        });
        res.on('close', () => events.push('res close'));
      });
      req.on('error', () => {});
      req.on('close', () => {
        events.push('req close');
        setImmediate(resolve);
      });
    });
    await done;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepStrictEqual(events, ['res close', 'req close']);
  });

  it("res.end() then socket.destroy() in the handler: the response's 'finish' and 'close', then the socket's 'close'", async function () {
    // As node:https: the write destroy() sends completes first, and what its
    // callback sets off (the response's 'close') comes before the socket's.
    const events = [];
    const served = new Promise((resolve) => {
      start({}, (req, res) => {
        res.on('finish', () => events.push('res finish'));
        res.on('close', () => events.push('res close'));
        req.socket.on('close', () => {
          events.push('socket close');
          resolve();
        });
        res.end('hello');
        req.socket.destroy();
      }).then(({ port }) => {
        https.get({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, agent: false }, (res) => res.resume())
          .on('error', () => {});
      });
    });
    await served;
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepStrictEqual(events, ['res finish', 'res close', 'socket close']);
  });

  it("a request whose connection is refused emits 'error' and 'close', never 'finish'", async function () {
    // node:http skips 'finish' once the socket has failed: the write must
    // fail after the socket's 'error', as net.Socket's does.
    const server = net.createServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    await new Promise((resolve) => server.close(resolve));
    const events = [];
    const req = https.request({ host: '127.0.0.1', port, ca: fixtures.ca, agent: false });
    for (const name of ['finish', 'error', 'close']) req.on(name, () => events.push(name));
    req.end();
    await new Promise((resolve) => req.on('close', () => setImmediate(resolve)));
    assert.deepStrictEqual(events, ['error', 'close']);
  });

  describe('the client rejects a server it cannot trust', function () {
    it('a CA that did not sign the certificate: UNABLE_TO_VERIFY_LEAF_SIGNATURE', async function () {
      const { port } = await start({}, (req, res) => res.end('ok'));
      await assert.rejects(fetch(port, { agent: false, ca: fixtures.otherCert }),
                           { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    });

    it('a name the certificate does not hold: ERR_TLS_CERT_ALTNAME_INVALID', async function () {
      const { port } = await start({}, (req, res) => res.end('ok'));
      await assert.rejects(fetch(port, { agent: false, servername: 'wrong.example' }),
                           { code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    });
  });

  describe('curl', function () {
    const curl = spawnSync('curl', ['--version'], { encoding: 'utf8', env: peerEnv, timeout: 10000 });
    const usable = curl.status === 0 && /^Protocols:.*\bhttps\b/m.test(curl.stdout);
    before(function () {
      if (!usable) this.skip();
    });

    function runCurl(port, extra) {
      return new Promise((resolve, reject) => {
        execFile('curl', [
          '--silent', '--show-error', '--max-time', '10',
          '--resolve', `localhost:${port}:127.0.0.1`,
          '--cacert', path.join(__dirname, 'fixtures', 'ca-cert.pem'),
          '--write-out', '\n%{http_code} %{http_version}',
          ...extra, `https://localhost:${port}/hi`,
        ], { timeout: 15000, env: peerEnv }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`)) : resolve(stdout)));
      });
    }

    for (const flags of [['--http1.1'], []]) {
      it(`curl ${flags.join(' ') || '(default ALPN)'} GET and POST`, async function () {
        const { port } = await start({}, (req, res) => {
          let body = '';
          req.setEncoding('utf8');
          req.on('data', (d) => { body += d; });
          req.on('end', () => res.end(`${req.method} ${req.url} ${req.socket.alpnProtocol} [${body}]`));
        });
        assert.strictEqual(await runCurl(port, flags), 'GET /hi http/1.1 []\n200 1.1');
        assert.strictEqual(await runCurl(port, [...flags, '--data', 'x=1']), 'POST /hi http/1.1 [x=1]\n200 1.1');
      });
    }
  });
});
