'use strict';

// tlswrap/http2: node:http2's shape over tlswrap. Requests and bodies, input
// and output pacing, sessions closed mid-body; allowHTTP1 serves HTTP/1.1 on
// the same port; real clients (node:https, curl) talk to it. The TLS identity
// under a session is in http2-identity.test.js.

const assert = require('node:assert');
const { execFile, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const path = require('node:path');
const { promisify } = require('node:util');
const {
  builtin, fixtures, tlswrap, serverOptions, listen, closeServer, peerEnv, pattern, startRecordProxy, RecordType,
  http2Peers, http2Fetch: fetch, h2Frame: frame,
} = require('./common');
const { runChild, describeExit } = require('./run-child');

const http2 = builtin ? require('node:http2') : require('tlswrap/http2');

describe('http2', function () {
  const { servers, sessions, start, client, release: releasePeers } = http2Peers(http2);
  afterEach(releasePeers);

  it('exports what node:http2 exports', function () {
    const nodeHttp2 = require('node:http2');
    assert.deepStrictEqual(Object.keys(http2).sort(), Object.keys(nodeHttp2).sort());
    for (const name of ['constants', 'getDefaultSettings', 'getPackedSettings', 'getUnpackedSettings',
      'sensitiveHeaders', 'Http2ServerRequest', 'Http2ServerResponse', 'createServer']) {
      assert.strictEqual(http2[name], nodeHttp2[name], name);
    }
    if (!builtin) {
      assert.strictEqual(require('tlswrap/http2'), require('../lib/http2'));
      assert.ok(http2.createSecureServer({ ...serverOptions() }) instanceof tlswrap.Server);
    }
  });

  it('createSecureServer() refuses options that are not an object (a listener in their place too), as node', function () {
    for (const bad of [() => {}, null, 'x', 42]) {
      const expected = (() => {
        try {
          require('node:http2').createSecureServer(bad);
        } catch (err) {
          return err;
        }
        return null;
      })();
      assert.ok(expected, `node:http2 accepted ${typeof bad}`);
      assert.throws(() => http2.createSecureServer(bad), { code: expected.code, message: expected.message });
    }
  });

  it('GET and POST with bodies, on the stream API and the request/response API', async function () {
    const { server, port } = await start({}, (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        res.setHeader('content-type', 'text/plain');
        res.end(`${req.method} ${req.url} ${req.httpVersion} [${body}]`);
      });
    });
    const session = client(port);
    const get = await fetch(session, { ':path': '/a?b=1' });
    assert.strictEqual(get.headers[':status'], 200);
    assert.strictEqual(get.headers['content-type'], 'text/plain');
    assert.strictEqual(get.text, 'GET /a?b=1 2.0 []');
    const big = 'x'.repeat(300000);
    const post = await fetch(session, { ':method': 'POST', ':path': '/up' }, big);
    assert.strictEqual(post.text, `POST /up 2.0 [${big}]`);

    // The same server, answering on 'stream' instead.
    server.removeAllListeners('request');
    server.on('stream', (stream, headers) => {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        stream.respond({ ':status': 201 });
        stream.end(`${headers[':method']} ${Buffer.concat(chunks).length}`);
      });
    });
    const second = client(port);
    const streamed = await fetch(second, { ':method': 'POST' }, Buffer.alloc(70000, 1));
    assert.strictEqual(streamed.headers[':status'], 201);
    assert.strictEqual(streamed.text, 'POST 70000');
  });

  it('many concurrent streams share one session', async function () {
    const serverSessions = new Set();
    const { port } = await start({}, (req, res) => {
      serverSessions.add(req.stream.session);
      // Answer out of order, each with a body of its own.
      const n = Number(req.url.slice(1));
      setTimeout(() => res.end(`${n}:${'y'.repeat(n * 100)}`), (n * 7) % 20);
    });
    const session = client(port);
    const count = 64;
    const results = await Promise.all(Array.from({ length: count }, (_, n) => fetch(session, { ':path': `/${n}` })));
    results.forEach(({ headers, text }, n) => {
      assert.strictEqual(headers[':status'], 200);
      assert.strictEqual(text, `${n}:${'y'.repeat(n * 100)}`);
    });
    assert.strictEqual(serverSessions.size, 1);
  });

  // A client that opens a burst of streams in one write and never reads:
  // node:http2 admits a stream only once the responses of those before it
  // are queued, so maxSessionMemory (10 MB by default) stops it after a few
  // dozen 256 KiB responses. Read a chunk at a time from a JS stream,
  // nghttp2 admitted all of one chunk's streams (hundreds) first.
  it('a burst of 1,000 requests from a client that never reads: maxSessionMemory holds, as over node:tls', async function () {
    const tls = require('node:tls');
    const body = Buffer.alloc(256 * 1024, 'x');
    let served = 0;
    const { server, port } = await start({}, (req, res) => {
      served++;
      res.on('error', () => {});
      res.end(body);
    });
    // The server stops admitting streams (node:http2 over node:tls then
    // waits; tlswrap's session may fail with nghttp2's refusal, "The user
    // callback function failed"): until the count stops moving.
    let failed = false;
    server.on('session', (session) => {
      session.on('error', () => { failed = true; });
      session.on('close', () => { failed = true; });
    });
    const settled = async () => {
      let last = -1;
      let still = 0;
      for (let i = 0; i < 100 && !failed && still < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        still = served > 0 && served === last ? still + 1 : 0;
        last = served;
      }
    };
    // HPACK: :method GET, :scheme https, :path /, :authority localhost.
    const headers = Buffer.from('828784' + '01096c6f63616c686f7374', 'hex');
    const frames = [
      Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
      frame(0x4, 0, 0, Buffer.from('000400ffffff', 'hex')), // SETTINGS: a 16 MiB stream window
      frame(0x8, 0, 0, Buffer.from('7fff0000', 'hex')), // WINDOW_UPDATE on the connection
    ];
    for (let id = 1; id < 2000; id += 2) frames.push(frame(0x1, 0x5, id, headers)); // END_STREAM | END_HEADERS
    const raw = tls.connect({ port, host: '127.0.0.1', ca: fixtures.ca, servername: 'localhost', ALPNProtocols: ['h2'] });
    raw.on('error', () => {});
    try {
      await once(raw, 'secureConnect');
      raw.pause();
      raw.write(Buffer.concat(frames));
      await settled();
      // node:http2 over node:tls: 38 on Node 20; tlswrap before: about 700.
      assert.ok(served < 100, `${served} requests served before the session gave up`);
    } finally {
      raw.destroy();
    }
  });

  it("a large body goes out in full TLS records, not a record per DATA frame's header", async function () {
    const body = pattern(1024 * 1024);
    const { port } = await start({ minVersion: 'TLSv1.3' }, (req, res) => res.end(body));
    // Application-data records from the server, by ciphertext length. A
    // frame header alone (9 bytes) is a 26-byte TLS 1.3 record.
    const lengths = [];
    const proxy = await startRecordProxy(port, (direction, record) => {
      if (direction === 'toClient' && record[0] === RecordType.applicationData) lengths.push(record.length - 5);
    });
    try {
      const session = client(proxy.port);
      const chunks = [];
      const req = session.request({ ':path': '/' });
      req.on('data', (d) => chunks.push(d));
      await once(req, 'end');
      assert.ok(Buffer.concat(chunks).equals(body), 'the body arrives intact');
      // 64 DATA frames of 16 KiB: written buffer by buffer, 64 headers alone.
      const headerOnly = lengths.filter((n) => n === 9 + 17).length;
      assert.ok(headerOnly < 8, `${headerOnly} of ${lengths.length} records hold a frame header alone`);
    } finally {
      await proxy.close();
    }
  });

  it("nghttp2's copies are given back once encrypted; the caller's buffers never are (tlswrap only)", async function () {
    if (builtin) this.skip();
    const binding = require('../lib/binding');
    const release = binding.releaseArrayBuffers;
    const released = [];
    binding.releaseArrayBuffers = (list) => {
      released.push(...list.map((ab) => ({ ab, size: ab.byteLength })));
      release(list);
    };
    try {
      const download = pattern(4 * 1024 * 1024, 1);
      const upload = pattern(2 * 1024 * 1024, 2);
      const { port } = await start({}, (req, res) => {
        const chunks = [];
        req.on('data', (d) => chunks.push(d));
        req.on('end', () => {
          assert.ok(Buffer.concat(chunks).equals(pattern(upload.length, 2)), 'the upload arrives intact');
          res.end(download);
        });
      });
      const session = client(port);
      const chunks = [];
      const req = session.request({ ':method': 'POST', ':path': '/' });
      req.on('data', (d) => chunks.push(d));
      req.end(upload);
      await once(req, 'end');
      assert.ok(Buffer.concat(chunks).equals(pattern(download.length, 1)), 'the download arrives intact');
      assert.strictEqual(download.length, 4 * 1024 * 1024, "the server's body is left as it was");
      assert.ok(download.equals(pattern(download.length, 1)));
      assert.strictEqual(upload.length, 2 * 1024 * 1024, "the client's body is left as it was");
      const bytes = released.reduce((sum, { size }) => sum + size, 0);
      // The bodies' DATA payloads (up to 16 KiB each) are released; a few
      // short ones (a body's last frame) and every frame header are not:
      // under 4 KiB, V8's sweep costs no more than detaching.
      const total = download.length + upload.length;
      assert.ok(bytes >= 0.99 * total, `${bytes} bytes released of ${total}`);
      for (const { size } of released) assert.ok(size >= 4096, `a ${size}-byte buffer was released`);
      for (const { ab } of released) assert.strictEqual(ab.byteLength, 0, 'a released buffer is detached');
    } finally {
      binding.releaseArrayBuffers = release;
    }
  });

  // The server's writes are in flight in each of these (a 16 MiB body does
  // not fit in the socket's buffers): the session's shutdown waits for the
  // one in flight, a close cancels it, and neither side throws or hangs.
  describe('a session closed while the server writes a large body', function () {
    const body = pattern(16 * 1024 * 1024);
    const windows = { settings: { initialWindowSize: 16 * 1024 * 1024 } };

    function download(session) {
      const req = session.request({ ':path': '/' });
      const chunks = [];
      req.on('data', (d) => chunks.push(d));
      const done = new Promise((resolve) => {
        req.on('end', () => resolve({ ended: true, body: Buffer.concat(chunks) }));
        req.on('error', (err) => resolve({ ended: false, error: err, body: Buffer.concat(chunks) }));
        req.on('close', () => resolve({ ended: false, body: Buffer.concat(chunks) }));
      });
      return { req, done };
    }

    it("close() on the server's session: the body in flight still arrives whole, then the session closes", async function () {
      let serverClosed;
      const { port } = await start({}, (req, res) => {
        const serverSession = req.stream.session;
        serverClosed = once(serverSession, 'close');
        res.write(body.subarray(0, 1024 * 1024));
        serverSession.close();
        res.end(body.subarray(1024 * 1024));
      });
      const session = client(port, windows);
      session.on('connect', () => session.setLocalWindowSize(16 * 1024 * 1024));
      const { done } = download(session);
      const result = await done;
      assert.strictEqual(result.ended, true, 'the response ended');
      assert.ok(result.body.equals(body), `the body arrives intact (${result.body.length} bytes)`);
      await serverClosed;
      if (!session.destroyed) await once(session, 'close');
    });

    it("destroy() on the server's session mid-body: the client gets a short prefix of the body, the server's session closes", async function () {
      let serverClosed;
      const serverErrors = [];
      const { server, port } = await start({}, (req, res) => {
        const serverSession = req.stream.session;
        serverClosed = once(serverSession, 'close');
        res.on('error', (err) => serverErrors.push(err));
        res.write(body, () => {});
        setImmediate(() => serverSession.destroy());
      });
      server.on('sessionError', (err) => serverErrors.push(err));
      const session = client(port, windows);
      session.on('error', () => {});
      const { done } = download(session);
      const result = await done;
      // (node's client ends the stream of a session the server destroyed.)
      assert.ok(result.body.length < body.length, `${result.body.length} bytes arrived`);
      assert.ok(result.body.equals(body.subarray(0, result.body.length)), 'what arrived is the start of the body');
      await serverClosed;
      assert.deepStrictEqual(serverErrors.filter((e) => !/ERR_HTTP2_(STREAM_CANCEL|INVALID_SESSION)|ERR_STREAM_DESTROYED|ECONNRESET|EPIPE/.test(e.code)), []);
    });

    // As node:http2, where the session writes through the TLS handle in C++:
    // a write the reset connection fails is that write's failure, not the
    // session's error, and a client with no 'error' listener survives it.
    it('the TCP connection reset mid-body (both legs of a proxy): the client stream cancels, its session closes without an error',
      async function () {
        const net = require('node:net');
        const { server, port } = await start({}, (req, res) => {
          res.on('error', () => {});
          res.end(body);
        });
        server.on('sessionError', () => {});
        const legs = [];
        const proxy = net.createServer((down) => {
          const up = net.connect(port, '127.0.0.1');
          legs.push(down, up);
          let forwarded = 0;
          down.on('error', () => {});
          up.on('error', () => {});
          down.on('data', (d) => up.write(d));
          up.on('data', (d) => {
            forwarded += d.length;
            down.write(d);
            if (forwarded > 1024 * 1024 && !down.destroyed) {
              down.resetAndDestroy();
              up.resetAndDestroy();
            }
          });
        });
        const proxyPort = await listen(proxy);
        try {
          const session = client(proxyPort);
          const sessionErrors = [];
          session.on('error', (err) => sessionErrors.push(err));
          const req = session.request({ ':path': '/' });
          let received = 0;
          req.on('data', (d) => { received += d.length; });
          const streamErrors = [];
          req.on('error', (err) => streamErrors.push(err));
          await once(req, 'close');
          if (!session.closed) await once(session, 'close');
          assert.ok(received > 0 && received < body.length, `${received} bytes arrived`);
          assert.strictEqual(req.rstCode, http2.constants.NGHTTP2_CANCEL);
          assert.deepStrictEqual(streamErrors, []);
          assert.deepStrictEqual(sessionErrors, []);
        } finally {
          for (const leg of legs) leg.destroy();
          await closeServer(proxy);
        }
      });

    it("destroy() on the client's session mid-body: the server's stream and session close, nothing thrown there", async function () {
      let serverClosed;
      let serverStreamClosed;
      const streamClosed = new Promise((resolve) => { serverStreamClosed = resolve; });
      const { port } = await start({}, (req, res) => {
        serverClosed = once(req.stream.session, 'close');
        res.on('error', () => {});
        req.stream.on('close', () => serverStreamClosed());
        res.end(body);
      });
      const session = client(port, windows);
      session.on('error', () => {});
      const { req } = download(session);
      await once(req, 'data');
      session.destroy();
      await streamClosed;
      await serverClosed;
    });
  });

  it('trailers and server push', async function () {
    const { server, port } = await start({});
    server.on('stream', (stream, headers) => {
      if (headers[':path'] !== '/') return;
      stream.pushStream({ ':path': '/pushed' }, (err, push) => {
        assert.ifError(err);
        push.respond({ ':status': 200, 'x-push': 'yes' });
        push.end('pushed body');
      });
      stream.respond({ ':status': 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'abc' }));
      stream.end('main body');
    });
    const session = client(port);
    const pushed = new Promise((resolve) => {
      session.on('stream', (push, requestHeaders) => {
        let text = '';
        push.setEncoding('utf8');
        push.on('push', (h) => { push.pushHeaders = h; });
        push.on('data', (d) => { text += d; });
        push.on('end', () => resolve({ path: requestHeaders[':path'], header: push.pushHeaders['x-push'], text }));
      });
    });
    const main = await fetch(session);
    assert.strictEqual(main.text, 'main body');
    assert.strictEqual(main.trailers['x-checksum'], 'abc');
    assert.deepStrictEqual(await pushed, { path: '/pushed', header: 'yes', text: 'pushed body' });
  });

  it('allowHTTP1 serves an https/1.1 client on the same port', async function () {
    const https = require('node:https');
    const { port } = await start({ allowHTTP1: true }, (req, res) => {
      res.end(`${req.httpVersion} ${req.socket.encrypted} ${req.socket.alpnProtocol}`);
    });
    const viaHttps = await new Promise((resolve, reject) => {
      https.get({
        host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, agent: false, ALPNProtocols: ['http/1.1'],
      }, (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { t += d; });
        res.on('end', () => resolve(t));
      }).on('error', reject);
    });
    assert.strictEqual(viaHttps, '1.1 true http/1.1');
    const h2 = await fetch(client(port));
    assert.strictEqual(h2.text, '2.0 true h2');
  });

  // What node's HTTP/1.1 side checks differs by version (Node 20's h2 server
  // has no Host header check, 22 on answer 400): ours answers as node's own
  // server on this Node does, with the message classes it was given.
  it('allowHTTP1: a request without Host is answered as by node:http2 on this Node, with Http1IncomingMessage', async function () {
    const nodeHttp2 = require('node:http2');
    class Incoming extends require('node:http').IncomingMessage {}
    class Response extends require('node:http').ServerResponse {}
    const handler = (req, res) => res.end(`${req instanceof Incoming} ${res instanceof Response}`);
    const options = { allowHTTP1: true, Http1IncomingMessage: Incoming, Http1ServerResponse: Response };
    const ours = (await start(options, handler)).port;
    const reference = nodeHttp2.createSecureServer(serverOptions(options), handler);
    servers.push(reference);
    const theirs = await listen(reference);
    async function raw(port, head) {
      const socket = tlswrap.connect({
        host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca, ALPNProtocols: ['http/1.1'],
      });
      await once(socket, 'secureConnect');
      socket.end(`GET / HTTP/1.1\r\n${head}Connection: close\r\n\r\n`);
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (d) => { text += d; });
      await once(socket, 'end');
      socket.destroy();
      return { status: text.slice(0, 12), body: text.slice(text.indexOf('\r\n\r\n') + 4) };
    }
    const withHost = await raw(ours, 'Host: localhost\r\n');
    assert.deepStrictEqual(withHost, { status: 'HTTP/1.1 200', body: 'true true' });
    const expected = await raw(theirs, '');
    assert.match(expected.status, /^HTTP\/1\.1 (200|400)$/);
    assert.strictEqual((await raw(ours, '')).status, expected.status);
  });

  it("without allowHTTP1 a client that offers no ALPN goes to 'unknownProtocol'", async function () {
    const { server, port } = await start({}, (req, res) => res.end('h2 only'));
    const unknown = once(server, 'unknownProtocol');
    const socket = tlswrap.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: fixtures.ca });
    socket.on('error', () => {});
    const [serverSocket] = await unknown;
    assert.strictEqual(serverSocket.alpnProtocol, false);
    serverSocket.destroy();
    socket.destroy();
  });

  it("setTimeout(): an idle session goes to the server's 'timeout' listener", async function () {
    const { server, port } = await start({}, (req, res) => res.end('ok'));
    const timedOut = once(server, 'timeout');
    server.setTimeout(150);
    assert.strictEqual(server.timeout, 150);
    const session = client(port);
    await fetch(session);
    const [serverSession] = await timedOut;
    assert.strictEqual(serverSession.alpnProtocol, 'h2');
    assert.strictEqual(serverSession.closed, false);
  });

  it('util.promisify(connect) resolves with the connected session', async function () {
    const { port } = await start({}, (req, res) => res.end('p'));
    const session = await promisify(http2.connect)(`https://127.0.0.1:${port}`, { ca: fixtures.ca, servername: 'localhost' });
    sessions.push(session);
    assert.strictEqual(session.alpnProtocol, 'h2');
    assert.strictEqual((await fetch(session)).text, 'p');
  });

  it('session.unref() lets the process exit while the session is open', async function () {
    const { port } = await start({}, (req, res) => res.end('bye'));
    const run = await runChild('h2-unref.js', [port], { limitMs: 10000 });
    assert.ok(!run.timedOut && run.code === 0, describeExit(run));
    assert.deepStrictEqual(run.result, { alpn: 'h2', closed: false });
  });

  // node checks these when it makes the TLS connection itself; tlswrap's
  // connect hands node a connection of its own and must check them first.
  it("connect(): bad session options throw node:http2's errors, word for word", function () {
    // Node 24 names them as options' properties: as node's own connect names
    // them on this Node.
    let v = '';
    assert.throws(() => require('node:http2').connect('https://127.0.0.1:1', { maxSessionInvalidFrames: -1 }),
      (err) => {
        if (err.message.includes('"options.')) v = 'options.';
        return err.code === 'ERR_OUT_OF_RANGE';
      });
    const cases = [
      [{ settings: 1 }, 'TypeError', 'ERR_INVALID_ARG_TYPE',
        'The "options.settings" property must be of type object. Received type number (1)'],
      [{ settings: null }, 'TypeError', 'ERR_INVALID_ARG_TYPE',
        'The "options.settings" property must be of type object. Received null'],
      [{ maxSessionInvalidFrames: -1 }, 'RangeError', 'ERR_OUT_OF_RANGE',
        `The value of "${v}maxSessionInvalidFrames" is out of range. It must be >= 0 && <= 4294967295. Received -1`],
      [{ maxSessionRejectedStreams: 'x' }, 'TypeError', 'ERR_INVALID_ARG_TYPE',
        `The "${v}maxSessionRejectedStreams" ${v ? 'property' : 'argument'} must be of type number. ` +
        "Received type string ('x')"],
      [{ unknownProtocolTimeout: 1.5 }, 'RangeError', 'ERR_OUT_OF_RANGE',
        `The value of "${v}unknownProtocolTimeout" is out of range. It must be an integer. Received 1.5`],
    ];
    for (const [options, name, code, message] of cases) {
      assert.throws(() => http2.connect('https://127.0.0.1:1', options), { name, code, message },
        JSON.stringify(options));
    }
  });

  describe('curl --http2', function () {
    const curl = spawnSync('curl', ['--version'], { encoding: 'utf8', env: peerEnv, timeout: 10000 });
    const usable = curl.status === 0 && /^Features:.*\bHTTP2\b/m.test(curl.stdout);
    before(function () {
      if (!usable) this.skip();
    });

    function runCurl(port, extra) {
      return new Promise((resolve, reject) => {
        execFile('curl', [
          '--silent', '--show-error', '--max-time', '10', '--http2',
          '--resolve', `localhost:${port}:127.0.0.1`,
          '--cacert', path.join(__dirname, 'fixtures', 'ca-cert.pem'),
          '--write-out', '\n%{http_code} %{http_version}',
          ...extra, `https://localhost:${port}/hi`,
        ], { timeout: 15000, env: peerEnv }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`)) : resolve(stdout)));
      });
    }

    it('GET and POST over h2', async function () {
      const { port } = await start({}, (req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (d) => { body += d; });
        req.on('end', () => {
          const s = req.stream.session;
          res.end(`${req.method} ${req.url} ${s.alpnProtocol} ${s.encrypted} [${body}]`);
        });
      });
      assert.strictEqual(await runCurl(port, []), 'GET /hi h2 true []\n200 2');
      assert.strictEqual(await runCurl(port, ['--data', 'x=1']), 'POST /hi h2 true [x=1]\n200 2');
    });
  });
});
