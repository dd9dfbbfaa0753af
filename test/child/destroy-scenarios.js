'use strict';

// destroy() called from inside an event handler, one scenario per handler.
// Each scenario resolves with a record of the destroyed socket's events once
// everything is cleaned up. Used two ways: test/destroy.test.js runs each
// scenario in-process and checks the events (check() below), and it runs
// this file as a child process (`node destroy-scenarios.js NAME`) to check
// that the process then exits by itself with code 0: no lingering handle,
// no crash.

const assert = require('node:assert');
const net = require('node:net');
const { tlswrap, serverOptions, clientOptions, listen, closeServer } = require('../common');

// Events that must not happen on a socket once destroy() has been called.
const WATCHED = ['data', 'end', 'session', 'keylog', 'secureConnect', 'secure', 'error', 'close'];
// ('secure' is left out: it is the emit that also fires 'secureConnect'.)
const FORBIDDEN_AFTER_DESTROY = ['data', 'end', 'session', 'keylog', 'secureConnect', 'secureConnection', 'error'];
const SETTLE_MS = 100; // how long to keep watching after 'close'

// Starts watching `socket`; returns a recorder whose destroyNow() destroys
// the socket and marks the point after which only one 'close' may follow.
function recorder(socket) {
  const rec = { events: [], destroyedAt: -1, socket };
  for (const name of WATCHED) {
    socket.on(name, () => rec.events.push(name));
  }
  rec.closed = new Promise((resolve) => socket.once('close', resolve));
  rec.destroyNow = () => {
    if (rec.destroyedAt !== -1) return;
    rec.destroyedAt = rec.events.length;
    // For destroy-gc.js: the native handle must be collectable afterwards.
    if (socket._handle) rec.handle = new WeakRef(socket._handle);
    socket.destroy();
  };
  return rec;
}

async function settle(rec) {
  await rec.closed;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
}

function check(rec, who) {
  assert.notStrictEqual(rec.destroyedAt, -1, `${who}: the handler that destroys never ran (${rec.events})`);
  const after = rec.events.slice(rec.destroyedAt);
  const late = after.filter((e) => FORBIDDEN_AFTER_DESTROY.includes(e));
  assert.deepStrictEqual(late, [], `${who}: events after destroy(): ${after.join(',')}`);
  assert.strictEqual(rec.events.filter((e) => e === 'close').length, 1, `${who}: 'close' count (${rec.events})`);
  assert.strictEqual(rec.socket.destroyed, true);
}

const BURST = Buffer.alloc(256 * 1024, 'x');

// A tlswrap server whose sockets get `onSecure`; a tlswrap client with
// `clientExtra`. Returns what cleanup needs.
async function pair(onSecure, clientExtra = {}, serverExtra = {}) {
  const peers = [];
  const server = tlswrap.createServer(serverOptions(serverExtra), (socket) => {
    peers.push(socket);
    socket.on('error', () => {});
    onSecure(socket);
  });
  const port = await listen(server);
  const client = tlswrap.connect(clientOptions(port, clientExtra));
  return { server, client, peers };
}

async function cleanup({ server, client, peers }) {
  if (client) client.destroy();
  for (const p of peers) p.destroy();
  await closeServer(server);
}

// The client destroys itself in its first `event`; the server writes a burst.
async function clientScenario(event, clientExtra) {
  const ctx = await pair((socket) => socket.write(BURST), clientExtra);
  const rec = recorder(ctx.client);
  ctx.client.on(event, rec.destroyNow);
  await settle(rec);
  await cleanup(ctx);
  return { rec, who: 'client' };
}

// `arm(socket, recorder)` runs in 'secureConnection'; the client writes a burst.
async function serverScenario(arm) {
  let recorded;
  const rec = new Promise((resolve) => { recorded = resolve; });
  const ctx = await pair((socket) => {
    const r = recorder(socket);
    arm(socket, r);
    recorded(r);
  });
  ctx.client.on('error', () => {});
  ctx.client.write(BURST);
  const r = await rec;
  await settle(r);
  await cleanup(ctx);
  return { rec: r, who: 'server' };
}

const scenarios = {
  // Client side.
  'client data': () => clientScenario('data'),

  // TLS 1.3: the server sends two tickets right after the handshake, and
  // data behind them; nothing may follow the first 'session'.
  'client session': () => clientScenario('session', { minVersion: 'TLSv1.3' }),

  'client session TLSv1.2': () => clientScenario('session', { maxVersion: 'TLSv1.2' }),

  // Keylog lines come from inside the handshake, OpenSSL on the stack.
  'client keylog': () => clientScenario('keylog'),

  'client secureConnect': () => clientScenario('secureConnect'),

  // Server side.
  'server data': () => serverScenario((socket, r) => socket.on('data', r.destroyNow)),

  'server secureConnection': () => serverScenario((socket, r) => r.destroyNow()),

  async 'server secure'() {
    // 'secure' is seen on a server-side TLSSocket made by hand over a
    // net.Server connection (the Server class attaches its own first).
    const context = tlswrap.createSecureContext(serverOptions());
    let rec;
    const recorded = new Promise((resolve) => { rec = resolve; });
    const server = net.createServer((raw) => {
      const socket = new tlswrap.TLSSocket(raw, { isServer: true, secureContext: context });
      const r = recorder(socket);
      socket.on('secure', r.destroyNow);
      rec(r);
    });
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    client.on('error', () => {});
    client.on('secureConnect', () => client.write(BURST));
    const r = await recorded;
    await settle(r);
    await cleanup({ server, client, peers: [] });
    return { rec: r, who: 'server' };
  },

  // ALPNCallback runs with OpenSSL on the stack: destroy() there must be
  // deferred until OpenSSL has returned, and nothing may follow it, not even
  // the handshake the callback's answer would let go on.
  async 'server ALPNCallback'() {
    let rec;
    const recorded = new Promise((resolve) => { rec = resolve; });
    let r;
    const ctx = await pair(() => { if (r) r.events.push('secureConnection'); }, { ALPNProtocols: ['h2'] }, {
      ALPNCallback() {
        if (r) return 'h2';
        r = recorder(this);
        r.events.push('ALPNCallback');
        r.destroyNow();
        this.on('error', () => {});
        rec(r);
        return 'h2';
      },
    });
    ctx.server.on('tlsClientError', () => {});
    ctx.client.on('error', () => {});
    await recorded;
    await settle(r);
    await cleanup(ctx);
    return { rec: r, who: 'server' };
  },

  async 'server keylog'() {
    let rec;
    const recorded = new Promise((resolve) => { rec = resolve; });
    const server = tlswrap.createServer(serverOptions());
    let r;
    server.on('keylog', (line, socket) => {
      if (r) return;
      r = recorder(socket);
      r.events.push('keylog'); // this one, seen through the server
      r.destroyNow();
      socket.on('error', () => {});
      rec(r);
    });
    server.on('secureConnection', () => { if (r) r.events.push('secureConnection'); });
    server.on('tlsClientError', () => {});
    const port = await listen(server);
    const client = tlswrap.connect(clientOptions(port));
    client.on('error', () => {});
    await recorded;
    await settle(r);
    await cleanup({ server, client, peers: [] });
    return { rec: r, who: 'server' };
  },
};

if (require.main === module) {
  const name = process.argv[2];
  if (!scenarios[name]) throw new Error(`no scenario ${name}`);
  // No process.exit(): the process has to end by itself. If it ends with
  // the scenario unfinished (a 'close' that never came), that is a failure.
  let finished = false;
  scenarios[name]().then(() => { finished = true; });
  process.on('exit', () => {
    if (!finished) {
      process.stderr.write(`scenario "${name}" did not finish\n`);
      process.exitCode = 1;
    }
  });
}

module.exports = { scenarios, check };
