'use strict';

// `node --expose-gc dropped-gc.js`: TLS sockets over in-memory Duplexes,
// dropped without destroy(): a handshake the peer never answers, a write
// waiting behind one, a server socket that heard nothing (with ALPN and PSK
// callbacks, or none), a pair that finished its handshake and exchanged
// data. Then garbage collected. Prints {"total": n, "alive": {kind: n}} as
// its last line.

const { Duplex, PassThrough } = require('node:stream');
const { once } = require('node:events');
const { setImmediate: tick } = require('node:timers/promises');
const { tlswrap, fixtures, serverOptions } = require('../common');

const PER_KIND = 50;

// Accepts writes, never answers.
const silent = () => new Duplex({ read() {}, write(chunk, encoding, cb) { cb(); } });

// Two Duplexes joined by two PassThroughs.
function duplexPair() {
  const side = (inbound, outbound) => {
    const d = new Duplex({
      read() { inbound.resume(); },
      write(chunk, encoding, cb) { outbound.write(chunk, cb); },
    });
    inbound.on('data', (chunk) => { if (!d.push(chunk)) inbound.pause(); });
    return d;
  };
  const aToB = new PassThrough();
  const bToA = new PassThrough();
  return [side(bToA, aToB), side(aToB, bToA)];
}

async function main() {
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  const serverContext = tlswrap.createSecureContext(serverOptions());
  const refs = [];
  for (let i = 0; i < PER_KIND; i++) {
    const stalled = tlswrap.connect({ socket: silent(), servername: 'localhost', ca: fixtures.ca });
    stalled.on('error', () => {});
    refs.push(['stalled', new WeakRef(stalled)]);
    const writer = tlswrap.connect({ socket: silent(), servername: 'localhost', ca: fixtures.ca });
    writer.on('error', () => {});
    writer.write(Buffer.alloc(64 * 1024, 1));
    refs.push(['writer', new WeakRef(writer)]);
    const deaf = new tlswrap.TLSSocket(silent(), { isServer: true, secureContext: serverContext });
    deaf.on('error', () => {});
    refs.push(['deaf', new WeakRef(deaf)]);
    // With callbacks the engine calls under OpenSSL (held by the native object).
    const picky = new tlswrap.TLSSocket(silent(), {
      isServer: true, secureContext: serverContext, ALPNCallback: () => undefined, pskCallback: () => null,
    });
    picky.on('error', () => {});
    refs.push(['deafWithCallbacks', new WeakRef(picky)]);
  }
  for (let i = 0; i < PER_KIND; i++) {
    const [a, b] = duplexPair();
    const server = new tlswrap.TLSSocket(b, { isServer: true, secureContext: serverContext });
    const client = tlswrap.connect({ socket: a, servername: 'localhost', ca: fixtures.ca });
    server.on('data', (d) => server.write(d));
    await once(client, 'secureConnect');
    client.write('ping');
    await once(client, 'data');
    refs.push(['pairServer', new WeakRef(server)], ['pairClient', new WeakRef(client)]);
  }
  for (let i = 0; i < 30 && refs.some(([, r]) => r.deref() !== undefined); i++) {
    await tick();
    gc();
  }
  const alive = {};
  for (const [kind, r] of refs) if (r.deref() !== undefined) alive[kind] = (alive[kind] || 0) + 1;
  process.stdout.write(`${JSON.stringify({ total: refs.length, alive })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
