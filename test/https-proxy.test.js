'use strict';

// HTTPS through a proxy, as node:https does it since Node 24 (`proxyEnv`,
// NODE_USE_ENV_PROXY): a CONNECT tunnel to the proxy, TLS to the origin
// inside it, NO_PROXY honoured. The proxy here is a small CONNECT proxy the
// test runs on loopback.

const assert = require('node:assert');
const { execFile } = require('node:child_process');
const { once } = require('node:events');
const net = require('node:net');
const nodeHttps = require('node:https');
const path = require('node:path');
const { builtin, fixtures, serverOptions, listen, closeServer } = require('./common');

const https = builtin ? require('node:https') : require('tlswrap/https');

// Whether this node's https.Agent takes a proxy from `proxyEnv` (Node 24+).
function nodeHasProxySupport() {
  const agent = new nodeHttps.Agent({ proxyEnv: { HTTPS_PROXY: 'http://127.0.0.1:9' } });
  const key = Object.getOwnPropertySymbols(agent).find((s) => s.description === 'kProxyConfig');
  return key !== undefined && !!agent[key];
}

// A CONNECT proxy: records each request line, answers `status` and, on 200,
// joins the client to 127.0.0.1 at the requested port.
async function startProxy(status = 200) {
  const requests = [];
  const sockets = new Set();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    let head = '';
    const onData = (chunk) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.removeListener('data', onData);
      const line = head.slice(0, head.indexOf('\r\n'));
      requests.push(line);
      const m = /^CONNECT [^\s:]+:(\d+) HTTP\/1\.1$/.exec(line);
      if (!m || status !== 200) {
        client.end(`HTTP/1.1 ${m ? status : 400} Refused\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      const upstream = net.connect(Number(m[1]), '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const rest = Buffer.from(head.slice(end + 4), 'latin1');
        if (rest.length) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
    };
    client.on('data', onData);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await closeServer(server);
    },
  };
}

function get(port, agent) {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: 'localhost', port, ca: fixtures.ca, path: '/', agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ res, text }));
    });
    req.on('error', reject);
  });
}

describe('https through a proxy (proxyEnv, NODE_USE_ENV_PROXY)', function () {
  this.timeout(20000);
  let server;
  let port;
  let proxy;
  const agents = [];

  before(async function () {
    if (!nodeHasProxySupport()) this.skip(); // node:https before 24 has no proxy support
    server = https.createServer(serverOptions(), (req, res) => res.end(`hello ${req.socket.encrypted}`));
    port = await listen(server);
  });

  afterEach(async function () {
    for (const a of agents.splice(0)) a.destroy();
    if (proxy) await proxy.close();
    proxy = null;
  });

  after(async function () {
    if (server) await closeServer(server);
  });

  it('an Agent with proxyEnv HTTPS_PROXY tunnels with CONNECT and verifies the origin inside', async function () {
    proxy = await startProxy();
    const agent = new https.Agent({ proxyEnv: { HTTPS_PROXY: proxy.url } });
    agents.push(agent);
    const { res, text } = await get(port, agent);
    assert.strictEqual(res.statusCode, 200);
    assert.strictEqual(text, 'hello true');
    assert.deepStrictEqual(proxy.requests, [`CONNECT localhost:${port} HTTP/1.1`]);
    assert.strictEqual(res.socket.authorized, true);
    assert.strictEqual(res.socket.getPeerCertificate().subject.CN, 'localhost');
  });

  it('https_proxy wins over HTTPS_PROXY, and NO_PROXY bypasses the proxy', async function () {
    proxy = await startProxy();
    const unused = await startProxy();
    try {
      const agent = new https.Agent({ proxyEnv: { HTTPS_PROXY: unused.url, https_proxy: proxy.url } });
      agents.push(agent);
      assert.strictEqual((await get(port, agent)).text, 'hello true');
      assert.strictEqual(proxy.requests.length, 1);
      assert.strictEqual(unused.requests.length, 0);
      const direct = new https.Agent({ proxyEnv: { HTTPS_PROXY: proxy.url, NO_PROXY: 'localhost' } });
      agents.push(direct);
      assert.strictEqual((await get(port, direct)).text, 'hello true');
      assert.strictEqual(proxy.requests.length, 1, 'NO_PROXY host went through the proxy');
    } finally {
      await unused.close();
    }
  });

  it('a proxy that refuses the tunnel: the request fails with ERR_PROXY_TUNNEL', async function () {
    proxy = await startProxy(403);
    const agent = new https.Agent({ proxyEnv: { HTTPS_PROXY: proxy.url } });
    agents.push(agent);
    await assert.rejects(get(port, agent), (err) => {
      assert.strictEqual(err.code, 'ERR_PROXY_TUNNEL');
      assert.match(err.message, /403/);
      return true;
    });
  });

  it('http.setGlobalProxyFromEnv(), where node has it: requests without an agent go through the proxy, and not after restore', async function () {
    const http = require('node:http');
    if (typeof http.setGlobalProxyFromEnv !== 'function') this.skip();
    proxy = await startProxy();
    const before = https.globalAgent;
    const restore = http.setGlobalProxyFromEnv({ HTTPS_PROXY: proxy.url });
    try {
      assert.strictEqual((await get(port, undefined)).text, 'hello true');
      assert.deepStrictEqual(proxy.requests, [`CONNECT localhost:${port} HTTP/1.1`]);
    } finally {
      restore();
    }
    assert.strictEqual((await get(port, undefined)).text, 'hello true');
    assert.strictEqual(proxy.requests.length, 1, 'went through the proxy after restore()');
    assert.strictEqual(https.globalAgent, before);
  });

  it('NODE_USE_ENV_PROXY=1: the global agent (https.get without an agent) goes through HTTPS_PROXY', async function () {
    proxy = await startProxy();
    const moduleName = builtin ? 'node:https' : path.join(__dirname, '..', 'lib', 'https.js');
    const script = `
      const https = require(${JSON.stringify(moduleName)});
      const ca = require('node:fs').readFileSync(${JSON.stringify(path.join(__dirname, 'fixtures', 'ca-cert.pem'))});
      https.get({ host: 'localhost', port: ${port}, ca }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => { console.log(text); process.exit(0); });
      }).on('error', (err) => { console.error(err.code, err.message); process.exit(1); });`;
    const env = { ...process.env, NODE_USE_ENV_PROXY: '1', HTTPS_PROXY: proxy.url, NO_PROXY: '' };
    delete env.https_proxy;
    delete env.no_proxy;
    const child = execFile(process.execPath, ['-e', script], { env, timeout: 15000 });
    let out = '';
    let err = ''; // Node 22 warns there that the proxy support is experimental
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const [code] = await once(child, 'close');
    assert.strictEqual(code, 0, err);
    assert.strictEqual(out.trim(), 'hello true', err);
    assert.deepStrictEqual(proxy.requests, [`CONNECT localhost:${port} HTTP/1.1`]);
  });
});
