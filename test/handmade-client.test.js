'use strict';

// A client TLSSocket made by hand over a connected net.Socket (new
// TLSSocket(socket, {...}), not connect({ socket })): nothing starts its
// handshake but its first write or the peer's first bytes, as with node:tls.
// These tests also run with TLSWRAP_TRANSPORT=js (npm test runs both).

const assert = require('node:assert');
const net = require('node:net');
const { once } = require('node:events');
const { builtin, tlswrap, plainTcpPair, readBytes, orTimeout, assertOneClientHello } = require('./common');

const expectNative = !builtin && process.env.TLSWRAP_TRANSPORT !== 'js';

describe('a client TLSSocket made by hand over a net.Socket', function () {
  // A client made by hand, never written to, starts its handshake when the
  // peer's first bytes arrive, as node:tls's does (its SSL_read runs the
  // handshake of an SSL in connect state): bytes that are not TLS fail it,
  // however many (past the 64 KiB an unstarted engine reads ahead, too), and
  // so do such bytes the net.Socket had read before the upgrade. A peer that
  // only leaves ends it.
  for (const [size, early] of [[0, false], [1024, false], [100 * 1024, false], [1024, true]]) {
    const expected = size === 0 ? ['end', 'close false'] : ['error ERR_SSL_WRONG_VERSION_NUMBER', 'close true'];
    const sent = size === 0 ? 'ends at once' : `sends ${size / 1024} KiB that are not TLS` +
      `${early ? ', read by the net.Socket before the upgrade,' : ''} and ends`;
    it(`a TLSSocket made by hand whose peer ${sent}, before its first write: ` +
      `${expected.map((e) => `'${e.split(' ')[0]}'`).join(', ')}`, async function () {
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        const garbage = Buffer.alloc(size, 'x');
        if (early) {
          raw.pause();
          plain.write(garbage);
          await once(raw, 'readable');
        }
        const client = tcp.track(new tlswrap.TLSSocket(raw, { secureContext: tlswrap.createSecureContext({}) }));
        const events = [];
        client.on('error', (err) => events.push(`error ${err.code}`));
        client.on('end', () => events.push('end'));
        client.resume();
        const closed = new Promise((resolve) => client.on('close', resolve));
        plain.end(early ? undefined : garbage);
        const outcome = await orTimeout(closed.then((hadError) => `close ${hadError}`), 5000, 'timed out');
        events.push(outcome);
        assert.deepStrictEqual(events, expected);
      } finally {
        await tcp.close();
      }
    });
  }

  // The peer sends no byte, only its FIN: node:tls's SSL_read of that EOF
  // runs the handshake of the client's SSL all the same, and its end()
  // flushes the ClientHello that wrote before the FIN (Node 20 and 24
  // alike): at once without half-open, when the program ends it with.
  for (const halfOpen of [false, true]) {
    it(`a TLSSocket made by hand whose peer only ends sends its ClientHello, then its FIN, at its end()${
      halfOpen ? ' (half-open)' : ''}`, async function () {
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        raw.allowHalfOpen = halfOpen;
        const client = tcp.track(new tlswrap.TLSSocket(raw, { secureContext: tlswrap.createSecureContext({}) }));
        client.resume();
        const chunks = [];
        plain.on('data', (d) => chunks.push(d));
        const peerEnded = once(plain, 'end');
        plain.end();
        if (halfOpen) {
          await orTimeout(once(client, 'end'), 5000, null);
          await new Promise((resolve) => setTimeout(resolve, 100));
          assert.strictEqual(Buffer.concat(chunks).length, 0, 'sent while half-open');
          client.end();
        }
        await orTimeout(peerEnded, 5000, null);
        assertOneClientHello(Buffer.concat(chunks));
      } finally {
        await tcp.close();
      }
    });
  }

  // Where the start is held (as during a takeover, until node's bytes are
  // out), reads go on reaching the unstarted engine: JS, which starts it or
  // keeps the start for later, is asked once, not at every read.
  it('a TLSSocket made by hand is asked to start once, however many reads come before the start', async function () {
    if (builtin) this.skip();
    const { inputBeforeStart } = require('../lib/binding').events;
    const tcp = await plainTcpPair();
    try {
      const { client: raw, server: plain } = tcp;
      const client = tcp.track(new tlswrap.TLSSocket(raw, { secureContext: tlswrap.createSecureContext({}) }));
      const asked = [];
      const onEvent = client._onEngineEvent;
      client._onEngineEvent = function (type, ...rest) {
        if (type === inputBeforeStart) asked.push(type);
        return onEvent.call(this, type, ...rest);
      };
      client._start = () => {}; // held
      client.resume();
      for (const chunk of ['a', 'b', 'c']) {
        plain.write(chunk);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const ended = once(client, 'end');
      plain.end();
      await orTimeout(ended, 5000, null);
      assert.strictEqual(asked.length, 1);
    } finally {
      await tcp.close();
    }
  });

  // Bytes the net.Socket read before the upgrade start that client too, but
  // only once the engine's own handle has the connection: a ClientHello
  // written through node's handle just before it closes would be cut off
  // wherever the kernel had not taken all of it.
  it("a TLSSocket made by hand started by bytes read before the upgrade writes its ClientHello on the engine's handle",
    async function () {
      if (!expectNative) this.skip();
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        raw.pause();
        plain.write(Buffer.from([0x16, 0x03, 0x03, 0x00, 0x10]));
        await once(raw, 'readable');
        const throughNode = [];
        raw.write = function (chunk, ...rest) {
          throughNode.push(chunk.length);
          return net.Socket.prototype.write.call(this, chunk, ...rest);
        };
        tcp.track(new tlswrap.TLSSocket(raw, { secureContext: tlswrap.createSecureContext({}) }));
        const hello = await orTimeout(readBytes(plain, 5), 5000, Buffer.from('timed out'));
        assert.deepStrictEqual([...hello.subarray(0, 2)], [0x16, 0x03], `a handshake record, got '${hello}'`);
        assert.deepStrictEqual(throughNode, [], "the ClientHello went through node's handle");
      } finally {
        await tcp.close();
      }
    });

  // The same client whose peer sends the start of a TLS record and waits:
  // the handshake has begun, its ClientHello is on the wire.
  it('a TLSSocket made by hand, never written to, sends its ClientHello once the peer has sent bytes',
    async function () {
      const tcp = await plainTcpPair();
      try {
        const { client: raw, server: plain } = tcp;
        tcp.track(new tlswrap.TLSSocket(raw, { secureContext: tlswrap.createSecureContext({}) }));
        plain.write(Buffer.from([0x16, 0x03, 0x03, 0x00, 0x10]));
        const hello = await orTimeout(readBytes(plain, 5), 5000, Buffer.from('timed out'));
        assert.deepStrictEqual([...hello.subarray(0, 2)], [0x16, 0x03], `a handshake record, got '${hello}'`);
      } finally {
        await tcp.close();
      }
    });
});
