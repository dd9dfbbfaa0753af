'use strict';

// End of stream: end() sends close_notify after the data; the peer gets all
// the data, then exactly one 'end', then 'close'. With allowHalfOpen the side
// that got 'end' may still write.

const assert = require('node:assert');
const tls = require('node:tls');
const { once } = require('node:events');
const {
  tlswrap, serverOptions, clientOptions, listen, startRecordProxy, RecordType, pattern, release,
} = require('./common');

const SIZE = 200 * 1024;


// Records the order of 'data', 'end', 'close' and 'error' on a socket and
// resolves once it closes.
function track(socket) {
  const log = [];
  const chunks = [];
  socket.on('data', (chunk) => {
    log.push('data');
    chunks.push(chunk);
  });
  socket.on('end', () => log.push('end'));
  socket.on('error', (err) => log.push(`error ${err.code}`));
  const closed = new Promise((resolve) => {
    socket.on('close', () => {
      log.push('close');
      // A tick later, so that an event fired after 'close' would be seen too.
      setImmediate(() => resolve({ log, data: Buffer.concat(chunks) }));
    });
  });
  return closed;
}

function assertCleanEnd({ log, data }, expected, who) {
  assert.ok(data.equals(expected), `${who}: data differs from what was sent (${data.length} bytes)`);
  const first = log.indexOf('end');
  assert.notStrictEqual(first, -1, `${who}: no 'end' (${log.join(',')})`);
  assert.strictEqual(log.filter((e) => e === 'end').length, 1, `${who}: 'end' more than once`);
  assert.ok(!log.slice(first).includes('data'), `${who}: 'data' after 'end'`);
  assert.deepStrictEqual(log.slice(first), ['end', 'close'], `${who}: events after the data: ${log.slice(first)}`);
}

const pairs = [
  { name: 'tlswrap server, node:tls client', server: tlswrap, client: tls },
  { name: 'node:tls server, tlswrap client', server: tls, client: tlswrap },
  { name: 'tlswrap server, tlswrap client', server: tlswrap, client: tlswrap },
];

// True if `record` is an encrypted close_notify/alert record: a plain alert
// record in TLS 1.2; in TLS 1.3 an application-data record of exactly
// 2 (alert) + 1 (inner type) + 16 (AEAD tag) bytes.
function isAlertRecord(record, version) {
  if (version === 'TLSv1.2') return record[0] === RecordType.alert;
  return record[0] === RecordType.applicationData && record.readUInt16BE(3) === 19;
}

for (const version of ['TLSv1.2', 'TLSv1.3']) {
  describe(`end() on the wire, ${version}`, function () {
    let server;
    let proxy;
    const sockets = [];

    afterEach(async function () {
      await release(sockets, proxy, server);
      proxy = null;
    });

    // The last record each side sends before its FIN must be the alert,
    // i.e. end() is a TLS close_notify and not only a TCP FIN.
    for (const ender of ['server', 'client']) {
      it(`tlswrap ${ender}: end() sends close_notify after the data`, async function () {
        const data = pattern(20 * 1024, 7);
        const impl = (side) => (side === ender ? tlswrap : tls);
        server = impl('server').createServer(serverOptions({ maxVersion: version, minVersion: version }));
        server.on('secureConnection', (socket) => {
          sockets.push(socket);
          socket.resume();
          if (ender === 'server') socket.end(data);
        });
        const port = await listen(server);
        const lastRecord = { toClient: null, toServer: null };
        proxy = await startRecordProxy(port, (direction, record) => {
          lastRecord[direction] = record;
        });
        const client = impl('client').connect(clientOptions(proxy.port));
        sockets.push(client);
        client.resume();
        const closed = once(client, 'close');
        await once(client, 'secureConnect');
        if (ender === 'client') client.end(data);
        await closed;
        const record = lastRecord[ender === 'server' ? 'toClient' : 'toServer'];
        assert.ok(record && isAlertRecord(record, version),
          `last record from the ${ender} is not an alert: type ${record && record[0]}, length ${record && record.readUInt16BE(3)}`);
      });
    }
  });

  for (const pair of pairs) {
    describe(`end of stream, ${version}, ${pair.name}`, function () {
      let server;
      let sockets;

      async function start(serverExtra, onSecure) {
        server = pair.server.createServer(serverOptions({ maxVersion: version, minVersion: version, ...serverExtra }));
        server.on('secureConnection', (socket) => {
          sockets.push(socket);
          onSecure(socket);
        });
        return listen(server);
      }

      function connect(port, extra) {
        const socket = pair.client.connect(clientOptions(port, extra));
        sockets.push(socket);
        return socket;
      }

      beforeEach(function () {
        sockets = [];
      });

      afterEach(async function () {
        await release(sockets, null, server);
      });

      it('server data then end: client gets all of it, one end, then close', async function () {
        const data = pattern(SIZE, 1);
        let serverDone;
        const port = await start({}, (socket) => {
          serverDone = track(socket);
          socket.end(data);
        });
        const client = connect(port);
        const result = await track(client);
        assertCleanEnd(result, data, 'client');
        const serverResult = await serverDone;
        assert.ok(!serverResult.log.some((e) => e.startsWith('error')), `server: ${serverResult.log}`);
      });

      it('client data then end: server gets all of it, one end, then close', async function () {
        const data = pattern(SIZE, 2);
        let serverDone;
        const serverSocket = new Promise((resolve) => { serverDone = resolve; });
        const port = await start({}, (socket) => serverDone(track(socket)));
        const client = connect(port);
        const clientDone = track(client);
        await once(client, 'secureConnect');
        client.end(data);
        assertCleanEnd(await (await serverSocket), data, 'server');
        const clientResult = await clientDone;
        assert.ok(!clientResult.log.some((e) => e.startsWith('error')), `client: ${clientResult.log}`);
      });

      it('allowHalfOpen client writes after end and the server receives it', async function () {
        const request = pattern(1000, 3);
        const reply = pattern(50 * 1024, 4);
        let serverDone;
        const port = await start({}, (socket) => {
          serverDone = track(socket);
          socket.end(request);
        });
        const client = connect(port, { allowHalfOpen: true });
        const clientClosed = once(client, 'close');
        const got = [];
        client.on('data', (chunk) => got.push(chunk));
        await once(client, 'end');
        assert.ok(Buffer.concat(got).equals(request));
        // The server has closed its side; ours is still open.
        assert.strictEqual(client.writable, true);
        client.end(reply);
        assertCleanEnd(await serverDone, reply, 'server');
        await clientClosed;
      });

      it('allowHalfOpen server writes after end and the client receives it', async function () {
        const request = pattern(1000, 5);
        const reply = pattern(50 * 1024, 6);
        let requestSeen;
        const port = await start({ allowHalfOpen: true }, (socket) => {
          const got = [];
          socket.on('data', (chunk) => got.push(chunk));
          socket.on('end', () => {
            requestSeen = Buffer.concat(got);
            // Our side is still open after the client's close_notify.
            socket.end(reply);
          });
        });
        const client = connect(port);
        const clientDone = track(client);
        await once(client, 'secureConnect');
        // Only our write side ends; the reply still has to come in.
        client.end(request);
        assertCleanEnd(await clientDone, reply, 'client');
        assert.ok(requestSeen && requestSeen.equals(request), 'server did not get the request before its end');
      });
    });
  }
}

describe('half-open after the peer closed', function () {
  // The peer sent close_notify and FIN; the server keeps its side open.
  // Nothing more can be read, so the connection must cost nothing while it
  // waits: a transport that reads again after EOF gets EOF again at once,
  // for ever (100% CPU).
  it('a half-open server socket whose peer is gone uses no CPU while it waits', async function () {
    const server = tlswrap.createServer(serverOptions({ allowHalfOpen: true }));
    const accepted = new Promise((resolve) => server.on('secureConnection', resolve));
    const port = await listen(server);
    const client = tls.connect(clientOptions(port));
    client.on('error', () => {});
    await once(client, 'secureConnect');
    const sock = await accepted;
    sock.resume();
    client.end();
    await once(sock, 'end');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const used = process.cpuUsage(cpu);
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    const cpuMs = (used.user + used.system) / 1000;
    assert.ok(!sock.destroyed, 'the half-open socket went away');
    assert.ok(cpuMs < wallMs / 3, `${cpuMs.toFixed(0)} ms of CPU in ${wallMs.toFixed(0)} ms of waiting`);
    sock.end();
    await once(client, 'close');
    await release([sock, client], null, server);
  });
});

describe('data that came with the close, not yet read', function () {
  // The server ends its side and reads nothing; the client answers, ends
  // and closes. With node:tls over a TCP socket what it sent stays readable
  // until the program reads it, then 'end' and 'close' follow: the raw
  // socket's close is no reason to drop a TLS socket's unread data.
  it("a socket that ended first keeps the peer's last bytes until they are read", async function () {
    const server = tlswrap.createServer(serverOptions());
    const accepted = new Promise((resolve) => server.on('secureConnection', resolve));
    const port = await listen(server);
    const client = tls.connect(clientOptions(port));
    client.on('error', () => {});
    const sock = await accepted;
    sock.pause();
    sock.end();
    const request = pattern(100);
    client.on('end', () => client.end(request));
    client.resume();
    await once(client, 'close');
    // Long enough for the client's close_notify and FIN to reach the server.
    await new Promise((resolve) => setTimeout(resolve, 100));
    try {
      assert.ok(!sock.destroyed, 'the socket was destroyed with its unread data');
      // Open, not pending, as node:tls's (whose handle is still there).
      assert.strictEqual(sock.pending, false);
      assert.strictEqual(sock.readyState, 'readOnly');
      const done = track(sock);
      sock.resume();
      assertCleanEnd(await done, request, 'server');
    } finally {
      await release([sock, client], null, server);
    }
  });
});

describe('end of stream after a throwing listener', function () {
  const { runChild, describeExit } = require('./run-child');

  // Data and close_notify in one burst; the first 'data' listener call throws
  // (caught by an uncaughtException handler). What the burst held after the
  // data must still be delivered: 'end', then 'close', as node:tls does.
  it("a 'data' listener that throws once: 'end' and 'close' still come", async function () {
    this.timeout(30000);
    const run = await runChild('throwing-listener.js', ['throw once then end']);
    assert.ok(run.code === 0 && run.result, describeExit(run));
    const r = run.result;
    assert.deepStrictEqual(r.uncaught, ['thrown by a data listener']);
    assert.strictEqual(r.closed, 'close', `no 'close' within the time limit (events: ${r.events.join(', ')})`);
    assert.deepStrictEqual(r.events, ['data 100', 'end', 'close']);
  });

  // As each of node:tls's callbacks: the exception is reported before
  // anything after it is delivered, and delivery goes on once the handler
  // has run.
  it("a 'data' listener that throws: 'uncaughtException' before 'end'", async function () {
    this.timeout(30000);
    const run = await runChild('throwing-listener.js', ['throw in data, then end']);
    assert.ok(run.code === 0 && run.result, describeExit(run));
    assert.deepStrictEqual(run.result.timeline, ['data 100', 'uncaught thrown by a data listener', 'end', 'close']);
  });

  // With no handler the process dies of the first exception; the 'end'
  // listener (which would throw too) never runs.
  it("'data' and 'end' listeners that throw, no handler: the process dies of the first", async function () {
    this.timeout(30000);
    const run = await runChild('throwing-listener.js', ['throw in data and end, no handler']);
    assert.strictEqual(run.code, 1, describeExit(run));
    assert.match(run.stderr, /Error: thrown by a data listener/);
    assert.doesNotMatch(run.stderr, /thrown by an end listener/);
  });

  // Ciphertext pushed by a JS stream: as node:tls throws a listener's
  // exception back to the stream's readBuffer(), push() gets one; none is
  // reported as uncaught before that (it would kill a process that has no
  // handler first, and the one push() was to get would never surface), and
  // all 100 KiB pushed are still delivered.
  it("'data' listeners that throw twice while a JS stream pushes: push() gets the first to surface", async function () {
    this.timeout(30000);
    const run = await runChild('throwing-listener.js', ['js stream, data throws twice']);
    assert.ok(run.code === 0 && run.result, describeExit(run));
    const { timeline, received } = run.result;
    const pushed = timeline.findIndex((e) => e.startsWith('push'));
    const uncaught = timeline.findIndex((e) => e.startsWith('uncaught'));
    assert.match(timeline[pushed], /^push threw thrown by data listener call [12]$/, timeline.join(', '));
    assert.ok(uncaught === -1 || uncaught > pushed, timeline.join(', '));
    assert.strictEqual(received, 100 * 1024);
  });
});
