'use strict';

// A byte flipped in the ciphertext of one record after the handshake: what
// came before that record is delivered intact, then 'error' (ERR_SSL_*), and
// not one byte of the bad record or anything after it reaches the user;
// then 'close'. A proxy between the ends cuts the stream into TLS records
// and damages the chosen one.

const assert = require('node:assert');
const tls = require('node:tls');
const { once } = require('node:events');
const {
  tlswrap, serverOptions, clientOptions, listen, startRecordProxy, RecordType, pattern, release,
} = require('./common');

const RECORD = 1024; // plaintext per record in the burst (setMaxSendFragment)
const BURST_RECORDS = 10;
const BAD_INDEX = 5; // records 0..4 of the burst are good, 5 is damaged


// Collects what a socket delivers and the order of its events; resolves once
// it has closed (and a tick more, so a late event would still be seen).
function watch(socket) {
  const events = [];
  const chunks = [];
  let error = null;
  socket.on('data', (chunk) => {
    events.push('data');
    chunks.push(chunk);
  });
  socket.on('end', () => events.push('end'));
  socket.on('error', (err) => {
    events.push('error');
    error = error || err;
    // node:tls reports a bad record after the handshake with 'error' but
    // leaves the socket open; closing it is the application's job, as here.
    socket.destroy();
  });
  const closed = new Promise((resolve) => {
    socket.on('close', () => {
      events.push('close');
      setImmediate(() => resolve({ events, error, data: () => Buffer.concat(chunks) }));
    });
  });
  return {
    closed,
    received: () => chunks.reduce((n, c) => n + c.length, 0),
  };
}

function waitFor(predicate) {
  return new Promise((resolve) => {
    const check = () => (predicate() ? resolve() : setTimeout(check, 2));
    check();
  });
}

function assertFailedAfter(result, expected, who) {
  assert.ok(result.error, `${who}: no 'error' (events ${result.events.join(',')})`);
  assert.match(String(result.error.code), /^ERR_SSL_/, `${who}: error code ${result.error.code}`);
  const data = result.data();
  assert.strictEqual(data.length, expected.length, `${who}: delivered ${data.length} bytes, expected ${expected.length}`);
  assert.ok(data.equals(expected), `${who}: delivered bytes differ from what was sent`);
  const firstError = result.events.indexOf('error');
  assert.ok(!result.events.slice(firstError).includes('data'), `${who}: 'data' after 'error'`);
  assert.ok(!result.events.includes('end'), `${who}: 'end' on a damaged stream`);
  assert.strictEqual(result.events.filter((e) => e === 'close').length, 1, `${who}: 'close' count`);
  assert.strictEqual(result.events[result.events.length - 1], 'close');
}

for (const version of ['TLSv1.2', 'TLSv1.3']) {
  describe(`corrupted record, ${version}`, function () {
    let server;
    let proxy;
    const sockets = [];

    afterEach(async function () {
      await release(sockets, proxy, server);
      proxy = null;
    });

    // Proxy that, once armed, counts application-data records going in
    // `direction` and flips one byte in the middle of the BAD_INDEX-th.
    async function startProxy(port, direction) {
      const state = { armed: false, seen: 0, damaged: false };
      proxy = await startRecordProxy(port, (dir, record) => {
        if (dir !== direction || !state.armed || record[0] !== RecordType.applicationData) return undefined;
        if (state.seen++ !== BAD_INDEX) return undefined;
        state.damaged = true;
        record[5 + ((record.length - 5) >> 1)] ^= 0x5a; // inside the ciphertext
        return record;
      });
      return state;
    }

    it('tlswrap client: data before the bad record, then error, then close', async function () {
      let peer;
      server = tls.createServer(serverOptions({ maxVersion: version, minVersion: version }));
      server.on('secureConnection', (socket) => {
        peer = socket;
        sockets.push(socket);
        socket.on('error', () => {});
      });
      const port = await listen(server);
      const state = await startProxy(port, 'toClient');
      const client = tlswrap.connect(clientOptions(proxy.port, { maxVersion: version, minVersion: version }));
      sockets.push(client);
      const watched = watch(client);
      await once(client, 'secureConnect');
      await waitFor(() => peer);

      const first = pattern(3000, 1);
      peer.write(first);
      // Once the client has the first message, the handshake records and the
      // TLS 1.3 tickets (also type 23 on the wire) are behind us.
      await waitFor(() => watched.received() >= first.length);
      state.armed = true;
      assert.strictEqual(peer.setMaxSendFragment(RECORD), true);
      const burst = pattern(RECORD * BURST_RECORDS, 2);
      peer.write(burst); // one write: BURST_RECORDS records, sent together

      const result = await watched.closed;
      assert.ok(state.damaged, 'the proxy never saw the record to damage');
      assertFailedAfter(result, Buffer.concat([first, burst.subarray(0, BAD_INDEX * RECORD)]), 'client');
    });

    it('tlswrap server: data before the bad record, then error, then close', async function () {
      let resolveWatched;
      const serverWatched = new Promise((resolve) => { resolveWatched = resolve; });
      server = tlswrap.createServer(serverOptions({ maxVersion: version, minVersion: version }));
      server.on('secureConnection', (socket) => {
        sockets.push(socket);
        resolveWatched(watch(socket));
      });
      const port = await listen(server);
      const state = await startProxy(port, 'toServer');
      const client = tls.connect(clientOptions(proxy.port, { maxVersion: version, minVersion: version }));
      sockets.push(client);
      client.on('error', () => {});
      await once(client, 'secureConnect');

      const first = pattern(3000, 3);
      client.write(first);
      const watched = await serverWatched;
      await waitFor(() => watched.received() >= first.length);
      state.armed = true;
      assert.strictEqual(client.setMaxSendFragment(RECORD), true);
      const burst = pattern(RECORD * BURST_RECORDS, 4);
      client.write(burst);

      const result = await watched.closed;
      assert.ok(state.damaged, 'the proxy never saw the record to damage');
      assertFailedAfter(result, Buffer.concat([first, burst.subarray(0, BAD_INDEX * RECORD)]), 'server');
    });
  });
}
