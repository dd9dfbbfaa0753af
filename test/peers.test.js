'use strict';

// Real peers, each started here, none mocked: undici (its Agent over a
// tlswrap connect function, and fetch), ws (wss over tlswrap/https and
// node:https, both ways), nginx (tlswrap client to an nginx ssl server,
// resuming its sessions by ID and by ticket, and nginx proxy_pass https to a
// tlswrap/https server with verification on) and
// headless Chromium (fetch and a WebSocket from a page served by tlswrap/https,
// the certificate trusted by SPKI pin). nginx and Chromium are system
// packages: a test that needs a missing one skips with the reason, except
// under CI (process.env.CI), where it fails instead.

const assert = require('node:assert');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const nodeHttp = require('node:http');
const nodeHttps = require('node:https');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const undici = require('undici');
const { WebSocket, WebSocketServer } = require('ws');
const { builtin, fixtures, tlswrap, serverOptions, listen, closeServer, pattern } = require('./common');

const https = builtin ? require('node:https') : require('tlswrap/https');
const fixturePath = (name) => path.join(__dirname, 'fixtures', name);
const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');

// nginx and Chromium run without the sanitizer runtimes (common.peerEnv).
const { peerEnv } = require('./common');

// The first of `commands` that runs, or undefined.
function findCommand(commands, args) {
  return commands.find((c) => {
    const r = spawnSync(c, args, { stdio: 'ignore', env: peerEnv, timeout: 20000 });
    return !r.error && r.status === 0;
  });
}

// Skips the current test when `command` is missing, outside CI only.
function requireCommand(ctx, command, what, pkg) {
  if (command) return;
  const why = `${what} is not installed (apt-get install ${pkg})`;
  if (process.env.CI) throw new Error(`${why}: CI must run this test`);
  console.log(`      skipped: ${why}`);
  ctx.skip();
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Resolves true once 127.0.0.1:port accepts, false if `proc` exits or the
// deadline passes first.
async function waitForPort(port, proc, ms) {
  const exited = once(proc, 'exit').then(() => false);
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const ready = await Promise.race([exited, new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('connect', () => { s.destroy(); resolve(true); });
      s.on('error', () => setTimeout(() => resolve(false), 25));
    })]);
    if (ready) return true;
    if (proc.exitCode !== null || proc.signalCode !== null) return false;
  }
  return false;
}

// A response, its socket and its body, by node's http client or tlswrap/https.
function get(client, url, options = {}) {
  return new Promise((resolve, reject) => {
    client.get(url, options, (res) => {
      const { socket } = res; // res.socket is gone once the agent takes it back
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ res, socket, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('peers', function () {
  const cleanups = [];
  afterEach(async function () {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  // A tlswrap/https server (node:https under TLSWRAP_TEST_BUILTIN) with the
  // fixture certificate for localhost/127.0.0.1, closed after the test.
  async function startHttps(handler, extra) {
    const server = https.createServer(serverOptions(extra), handler);
    const port = await listen(server);
    cleanups.push(async () => {
      server.closeAllConnections();
      await closeServer(server);
    });
    return { server, port };
  }

  // Answers with what it saw: method, path, body length, the TLS version and
  // whether the session was resumed.
  function describeRequest(req, res) {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        method: req.method,
        url: req.url,
        bytes: Buffer.concat(chunks).length,
        protocol: req.socket.getProtocol(),
        servername: req.socket.servername,
        reused: req.socket.isSessionReused(),
      }));
    });
  }

  describe('undici', function () {
    // undici's connector: (options, callback(err, socket)), called for every
    // new connection of a pool.
    function tlswrapConnector(counter) {
      return (options, callback) => {
        counter.calls++;
        const socket = tlswrap.connect({
          host: options.hostname,
          port: Number(options.port),
          servername: 'localhost',
          ca: fixtures.ca,
          ALPNProtocols: ['http/1.1'],
        });
        const onError = (err) => callback(err);
        socket.once('error', onError);
        socket.once('secureConnect', () => {
          socket.removeListener('error', onError);
          callback(null, socket);
        });
      };
    }

    it('an undici.Agent over a tlswrap connect function: keep-alive requests and fetch', async function () {
      let connections = 0;
      const { server, port } = await startHttps(describeRequest);
      server.on('secureConnection', () => connections++);
      const counter = { calls: 0 };
      // One connection per origin: undici opens a second one for a request
      // that follows a response too closely (over node:tls as well), and the
      // point here is that tlswrap's socket is kept alive and reused.
      const agent = new undici.Agent({ connect: tlswrapConnector(counter), connections: 1 });
      cleanups.push(() => agent.close());

      for (let i = 0; i < 3; i++) {
        const { statusCode, body } = await undici.request(`https://127.0.0.1:${port}/r${i}`, {
          dispatcher: agent, method: 'POST', body: pattern(100000, i),
        });
        assert.strictEqual(statusCode, 200);
        const seen = await body.json();
        assert.deepStrictEqual([seen.method, seen.url, seen.bytes], ['POST', `/r${i}`, 100000]);
        assert.strictEqual(seen.servername, 'localhost');
      }
      const res = await undici.fetch(`https://127.0.0.1:${port}/fetched`, { dispatcher: agent });
      assert.strictEqual(res.status, 200);
      assert.strictEqual((await res.json()).url, '/fetched');
      // Four requests, one connection: undici kept tlswrap's socket alive.
      assert.strictEqual(counter.calls, 1);
      assert.strictEqual(connections, 1);
    });

    it('undici.fetch (undici\'s own node:tls client) against a tlswrap/https server', async function () {
      const { port } = await startHttps(describeRequest);
      const agent = new undici.Agent({ connect: { ca: fixtures.ca, servername: 'localhost' } });
      cleanups.push(() => agent.close());
      const body = pattern(1 << 20, 7);
      const res = await undici.fetch(`https://127.0.0.1:${port}/upload`, {
        dispatcher: agent, method: 'PUT', body,
      });
      assert.strictEqual(res.status, 200);
      const seen = await res.json();
      assert.deepStrictEqual([seen.method, seen.url, seen.bytes], ['PUT', '/upload', body.length]);
      assert.strictEqual(seen.protocol, 'TLSv1.3');
    });
  });

  describe('ws', function () {
    // A wss echo server on `httpsServer`; resolves when the client's message
    // came back.
    function echoOn(httpsServer) {
      const wss = new WebSocketServer({ server: httpsServer });
      wss.on('connection', (ws, req) => {
        ws.on('message', (data, isBinary) => ws.send(isBinary ? data : `echo ${data} over ${req.socket.getProtocol()}`));
      });
      cleanups.push(() => new Promise((resolve) => wss.close(() => resolve())));
      return wss;
    }

    async function exchange(ws) {
      cleanups.push(() => ws.terminate());
      await once(ws, 'open');
      ws.send('hello');
      const [text] = await once(ws, 'message');
      const big = pattern(1 << 20, 3);
      ws.send(big);
      const [echoed] = await once(ws, 'message');
      assert.strictEqual(sha256(echoed), sha256(big));
      ws.close();
      await once(ws, 'close');
      return String(text);
    }

    it('a wss server on tlswrap/https, a ws client over node:tls', async function () {
      const { server, port } = await startHttps();
      echoOn(server);
      const ws = new WebSocket(`wss://localhost:${port}/`, { ca: fixtures.ca, host: '127.0.0.1' });
      assert.strictEqual(await exchange(ws), 'echo hello over TLSv1.3');
    });

    it('a wss server on node:https, a ws client over tlswrap (createConnection)', async function () {
      const server = nodeHttps.createServer(serverOptions());
      const port = await listen(server);
      cleanups.push(() => closeServer(server));
      echoOn(server);
      let socket;
      const ws = new WebSocket(`wss://127.0.0.1:${port}/`, {
        // ws hands over http.request's options, whose `path` is the request
        // path: not a socket path for connect().
        createConnection: (options) => {
          socket = tlswrap.connect({ ...options, path: undefined, ca: fixtures.ca, servername: 'localhost' });
          return socket;
        },
      });
      assert.strictEqual(await exchange(ws), 'echo hello over TLSv1.3');
      assert.ok(socket instanceof tlswrap.TLSSocket);
    });

    it('a wss server on node:https, a ws client over a tlswrap/https Agent', async function () {
      const server = nodeHttps.createServer(serverOptions());
      const port = await listen(server);
      cleanups.push(() => closeServer(server));
      echoOn(server);
      const agent = new https.Agent({ ca: fixtures.ca, servername: 'localhost' });
      cleanups.push(() => agent.destroy());
      const ws = new WebSocket(`wss://127.0.0.1:${port}/`, { agent });
      const upgraded = once(ws, 'upgrade');
      assert.strictEqual(await exchange(ws), 'echo hello over TLSv1.3');
      const [res] = await upgraded;
      assert.ok(res.socket instanceof tlswrap.TLSSocket);
    });
  });

  describe('nginx', function () {
    const nginxBin = findCommand(['nginx', '/usr/sbin/nginx'], ['-v']);
    let dir;

    beforeEach(function () {
      requireCommand(this, nginxBin, 'nginx', 'nginx');
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-nginx-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    });

    // Starts nginx in the foreground, one process, with `servers` (a function
    // of the port it gets) as the http block's content. Resolves with its
    // port once it accepts; stopped after the test.
    async function startNginx(servers) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const port = await freePort();
        const conf = path.join(dir, 'nginx.conf');
        const temp = (name) => `${name}_temp_path ${path.join(dir, name)};`;
        fs.writeFileSync(conf, `
daemon off;
master_process off;
worker_processes 1;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} info;
events { worker_connections 64; }
http {
  access_log off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  ${servers(port)}
}
`);
        const proc = spawn(nginxBin, ['-e', path.join(dir, 'error.log'), '-p', dir, '-c', conf],
          { stdio: ['ignore', 'ignore', 'pipe'], env: peerEnv });
        let stderr = '';
        proc.stderr.on('data', (d) => { stderr += d; });
        if (await waitForPort(port, proc, 10000)) {
          cleanups.push(async () => {
            if (proc.exitCode === null && proc.signalCode === null) {
              proc.kill('SIGQUIT');
              await once(proc, 'exit');
            }
          });
          return port;
        }
        proc.kill('SIGKILL');
        if (proc.exitCode === null && proc.signalCode === null) await once(proc, 'exit');
        const log = fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '';
        if (!/Address already in use/.test(log + stderr)) throw new Error(`nginx did not start:\n${stderr}\n${log}`);
      }
      throw new Error('nginx: no free port after 3 attempts');
    }

    for (const version of ['TLSv1.2', 'TLSv1.3']) {
      it(`a tlswrap client to an nginx ssl server, ${version}: a 4 MiB file arrives intact`, async function () {
        const www = path.join(dir, 'www');
        fs.mkdirSync(www);
        const file = pattern(4 << 20, 11);
        fs.writeFileSync(path.join(www, 'big.bin'), file);
        const port = await startNginx((p) => `
  server {
    listen 127.0.0.1:${p} ssl;
    ssl_certificate ${fixturePath('server-cert.pem')};
    ssl_certificate_key ${fixturePath('server-key.pem')};
    ssl_protocols TLSv1.2 TLSv1.3;
    root ${www};
    location = /hello { return 200 "nginx: $ssl_protocol $ssl_server_name $ssl_session_reused\\n"; }
  }`);
        const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
        cleanups.push(() => agent.destroy());
        const options = { agent, ca: fixtures.ca, servername: 'localhost', minVersion: version, maxVersion: version };
        const hello = await get(https, `https://127.0.0.1:${port}/hello`, options);
        assert.strictEqual(hello.res.statusCode, 200);
        assert.strictEqual(String(hello.body), `nginx: ${version} localhost .\n`);
        const big = await get(https, `https://127.0.0.1:${port}/big.bin`, options);
        assert.strictEqual(big.res.statusCode, 200);
        assert.strictEqual(big.body.length, file.length);
        assert.strictEqual(sha256(big.body), sha256(file));
        assert.strictEqual(big.res.req.reusedSocket, true);
        assert.ok(big.socket instanceof tlswrap.TLSSocket);
      });
    }

    // A tlswrap/https Agent (its session cache) resumes against nginx: TLS
    // 1.2 session IDs from ssl_session_cache, TLS 1.2 and 1.3 tickets from
    // ssl_session_tickets, and TLS 1.3 stateful tickets (ssl_session_cache
    // with tickets off: OpenSSL takes each of those once).
    const resumptions = [
      ['TLSv1.2', 'session IDs', 'ssl_session_cache shared:tlswrap:1m; ssl_session_tickets off;'],
      ['TLSv1.2', 'tickets', 'ssl_session_cache none; ssl_session_tickets on;'],
      ['TLSv1.3', 'tickets', 'ssl_session_cache none; ssl_session_tickets on;'],
      ['TLSv1.3', 'stateful single-use tickets', 'ssl_session_cache shared:tlswrap:1m; ssl_session_tickets off;'],
    ];
    for (const [version, kind, sessionConf] of resumptions) {
      it(`a tlswrap client resumes against nginx, ${version} ${kind}`, async function () {
        const port = await startNginx((p) => `
  server {
    listen 127.0.0.1:${p} ssl;
    ssl_certificate ${fixturePath('server-cert.pem')};
    ssl_certificate_key ${fixturePath('server-key.pem')};
    ssl_protocols ${version};
    ${sessionConf}
    location / { return 200 "$ssl_protocol $ssl_session_reused"; }
  }`);
        const agent = new https.Agent({ keepAlive: false });
        cleanups.push(() => agent.destroy());
        const seen = [];
        for (let i = 0; i < 3; i++) {
          const r = await get(https, `https://127.0.0.1:${port}/`, { agent, ca: fixtures.ca, servername: 'localhost' });
          assert.strictEqual(r.res.statusCode, 200);
          seen.push(`${r.socket.isSessionReused()} ${r.body}`);
          // A TLS 1.3 ticket nginx sends after the response may still be on its way.
          if (!r.socket.destroyed) await once(r.socket, 'close');
        }
        assert.deepStrictEqual(seen, [`false ${version} .`, `true ${version} r`, `true ${version} r`]);
      });
    }

    it('nginx proxy_pass https to a tlswrap/https server, proxy_ssl_verify on', async function () {
      const { port: backend } = await startHttps(describeRequest);
      const proxy = (trusted, reuse = 'on') => `
      proxy_pass https://127.0.0.1:${backend};
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate ${trusted};
      proxy_ssl_name localhost;
      proxy_ssl_server_name on;
      proxy_ssl_session_reuse ${reuse};`;
      const port = await startNginx((p) => `
  server {
    listen 127.0.0.1:${p};
    location / { ${proxy(fixturePath('ca-cert.pem'))} }
    location /untrusted/ { ${proxy(fixturePath('selfsigned-cert.pem'), 'off')} }
  }`);
      const agent = new nodeHttp.Agent({ keepAlive: false });
      const body = pattern(300000, 5);
      const post = await new Promise((resolve, reject) => {
        const req = nodeHttp.request(`http://127.0.0.1:${port}/upload`, { method: 'POST', agent }, (res) => {
          const chunks = [];
          res.on('data', (d) => chunks.push(d));
          res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end(body);
      });
      assert.strictEqual(post.res.statusCode, 200, String(post.body));
      const seen = JSON.parse(post.body);
      assert.deepStrictEqual([seen.method, seen.url, seen.bytes], ['POST', '/upload', body.length]);
      assert.strictEqual(seen.servername, 'localhost');
      // nginx keeps the session of its first upstream connection and resumes it.
      const again = await get(nodeHttp, `http://127.0.0.1:${port}/again`, { agent });
      assert.strictEqual(again.res.statusCode, 200, String(again.body));
      assert.strictEqual(JSON.parse(again.body).reused, true);
      // Verification is really on: an upstream certificate the trusted file
      // does not vouch for is a 502. (Both locations share one implicit
      // upstream, so this one must not resume the other's verified session.)
      const bad = await get(nodeHttp, `http://127.0.0.1:${port}/untrusted/x`, { agent });
      assert.strictEqual(bad.res.statusCode, 502);
      const log = fs.readFileSync(path.join(dir, 'error.log'), 'utf8');
      assert.match(log, /upstream SSL certificate verify error/);
    });
  });

  describe('chromium', function () {
    const chromiumBin = findCommand(['chromium-headless-shell', 'chromium', 'chromium-browser'], ['--version']);
    this.timeout(90000);

    // The page fetches /data from its own origin, opens wss://<origin>/ws,
    // writes both results into #out and then asks for /release. --dump-dom
    // dumps the DOM at the load event, which the <img> holds back until the
    // server has seen /release: so the dump comes after the results.
    const page = `<!doctype html>
<html><body><pre id="out">pending</pre><img src="/hold"><script>
(async () => {
  const out = document.getElementById('out');
  try {
    const data = await (await fetch('/data')).text();
    const echo = await new Promise((resolve, reject) => {
      const ws = new WebSocket('wss://' + location.host + '/ws');
      ws.onopen = () => ws.send('ping from the page');
      ws.onmessage = (e) => { resolve(e.data); ws.close(); };
      ws.onerror = () => reject(new Error('websocket error'));
    });
    out.textContent = 'fetch: ' + data + '\\nws: ' + echo;
  } catch (err) {
    out.textContent = 'failed: ' + err;
  }
  fetch('/release');
})();
</script></body></html>`;

    it('headless Chromium loads a page over tlswrap/https: fetch and a wss WebSocket, trusted by SPKI pin', async function () {
      requireCommand(this, chromiumBin, 'Chromium', 'chromium-headless-shell (or chromium)');
      let hold;
      const { server, port } = await startHttps((req, res) => {
        if (req.url === '/hold') {
          hold = res;
        } else if (req.url === '/release') {
          res.end();
          if (hold) hold.writeHead(204).end();
        } else if (req.url === '/') {
          res.setHeader('content-type', 'text/html');
          res.end(page);
        } else if (req.url === '/data') {
          res.end(`data over ${req.socket.getProtocol()}`);
        } else {
          res.statusCode = 404;
          res.end();
        }
      });
      const wss = new WebSocketServer({ server, path: '/ws' });
      cleanups.push(() => new Promise((resolve) => wss.close(() => resolve())));
      let wsSocket;
      wss.on('connection', (ws, req) => {
        wsSocket = req.socket;
        ws.on('message', (data) => ws.send(`echo ${data}`));
      });

      const spki = crypto.createPublicKey(fixtures.serverCert).export({ type: 'spki', format: 'der' });
      const pin = crypto.createHash('sha256').update(spki).digest('base64');
      const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-chromium-'));
      cleanups.push(() => fs.rmSync(profile, { recursive: true, force: true }));
      const args = [
        '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage',
        `--user-data-dir=${profile}`,
        `--ignore-certificate-errors-spki-list=${pin}`,
        '--dump-dom', `https://127.0.0.1:${port}/`,
      ];
      const proc = spawn(chromiumBin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: peerEnv });
      cleanups.push(() => {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (d) => { stdout += d; });
      proc.stderr.on('data', (d) => { stderr += d; });
      const timer = setTimeout(() => proc.kill('SIGKILL'), 60000);
      const [code, signal] = await once(proc, 'exit');
      clearTimeout(timer);
      assert.strictEqual(signal, null, `Chromium was killed after 60 s\n${stderr.slice(-2000)}`);
      assert.strictEqual(code, 0, stderr.slice(-2000));
      const out = /<pre id="out">([\s\S]*?)<\/pre>/.exec(stdout);
      assert.ok(out, `no #out in the dumped DOM:\n${stdout}\n${stderr.slice(-2000)}`);
      assert.strictEqual(out[1], 'fetch: data over TLSv1.3\nws: echo ping from the page');
      assert.ok(builtin || wsSocket instanceof tlswrap.TLSSocket);
    });
  });
});
