'use strict';

// How an HTTP/2 session ends right after a response, as with node:http2 over
// node:tls: the response reaches the client, its events come before the
// session's 'goaway', and both sessions close.

const assert = require('node:assert');
const { once } = require('node:events');
const { builtin, tlswrap, serverOptions, listen, orTimeout, http2Peers, h2Frame: frame } = require('./common');

const http2 = builtin ? require('node:http2') : require('tlswrap/http2');

// Rejects if `promise` has not settled within `ms`, with `what` in the
// message: a session that never closes fails the test rather than hanging it.
async function within(promise, ms, what) {
  const late = Symbol('late');
  if (await orTimeout(promise, ms, late) === late) throw new Error(`${what}: not within ${ms} ms`);
}

// Over node:tls each TLS record reaches nghttp2 in a read of its own, and
// node runs the tick queue after each of its callbacks into JS: the last
// stream's 'end' and 'close' come before a GOAWAY behind it, and a client
// whose streams are all closed reports one GOAWAY per record that holds any.
describe('http2: a GOAWAY right behind the last response', function () {
  const { servers, start, client, release } = http2Peers(http2);
  afterEach(release);

  const settingsAck = frame(4, 1, 0);
  // ':status: 200' (HPACK static index 8), END_STREAM | END_HEADERS; then
  // the same headers with a body: END_HEADERS, and DATA with END_STREAM.
  const emptyResponse = frame(1, 0x5, 1, Buffer.from([0x88]));
  const bodyResponse = Buffer.concat([frame(1, 0x4, 1, Buffer.from([0x88])), frame(0, 0x1, 1, Buffer.from('hello'))]);
  const goaway = frame(7, 0, 0, Buffer.from([0, 0, 0, 1, 0, 0, 0, 0]));

  // A TLS server speaking h2 from the bytes it is given: its SETTINGS, then
  // once the client's first HEADERS frame is in, each of `records` in a
  // write of its own.
  async function rawServer(records) {
    const server = tlswrap.createServer(serverOptions({ ALPNProtocols: ['h2'] }), (socket) => {
      socket.on('error', () => {});
      socket.write(frame(4, 0, 0));
      let input = Buffer.alloc(0);
      let next = 24; // past the client's preface
      socket.on('data', (chunk) => {
        input = Buffer.concat([input, chunk]);
        while (input.length >= next + 9) {
          const type = input[next + 3];
          next += 9 + input.readUIntBE(next, 3);
          if (type === 1) for (const record of records) socket.write(record);
        }
      });
    });
    servers.push(server);
    return listen(server);
  }

  // The client's events for one request, until its session closes.
  async function clientEvents(port) {
    const events = [];
    const session = client(port);
    session.on('goaway', (code, lastStreamID) => events.push(`goaway ${code} ${lastStreamID}`));
    const closed = once(session, 'close');
    const req = session.request({ ':path': '/' });
    req.on('response', (headers) => events.push(`response ${headers[':status']}`));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => events.push(`end "${body}"`));
    req.on('close', () => events.push(`close ${req.rstCode}`));
    await closed;
    return events;
  }

  it("GOAWAY twice in the record of a response without a body: the stream's 'end' and 'close', then each GOAWAY", async function () {
    const port = await rawServer([Buffer.concat([settingsAck, emptyResponse, goaway, goaway])]);
    assert.deepStrictEqual(await clientEvents(port), ['response 200', 'end ""', 'close 0', 'goaway 0 1', 'goaway 0 1']);
  });

  it("GOAWAY in the record after the body's last DATA frame: 'end', 'close', then one 'goaway'", async function () {
    const port = await rawServer([Buffer.concat([settingsAck, bodyResponse]), goaway]);
    assert.deepStrictEqual(await clientEvents(port), ['response 200', 'end "hello"', 'close 0', 'goaway 0 1']);
  });

  // The server's session ends its TLS socket behind its GOAWAY: the
  // client's socket ends in the same read as the GOAWAY arrives.
  it("close() on the server's session once the stream closed: the client has 'goaway', then both sessions close", async function () {
    let serverClosed;
    const { server, port } = await start({});
    server.on('stream', (stream) => {
      const session = stream.session;
      serverClosed = once(session, 'close');
      stream.on('close', () => session.close());
      stream.respond({ ':status': 200 }, { endStream: true });
    });
    assert.deepStrictEqual(await clientEvents(port), ['response 200', 'end ""', 'close 0', 'goaway 0 1']);
    await serverClosed;
  });
});

describe('http2: the server closes its session right after a response', function () {
  // Both sides' sessions: one that hung must not hold the server open.
  const { sessions, start, client, release } = http2Peers(http2);
  afterEach(release);

  // A server whose 'stream' handler responds with headers alone and then
  // calls `act(session)`, at once or from an immediate; one request to it.
  // Resolves with the client's events once both sessions have closed.
  // `onSocket`: given the server's TLS socket.
  async function run(when, act, onSocket) {
    const { server, port } = await start({});
    if (onSocket) server.on('secureConnection', onSocket);
    let serverClosed;
    server.on('stream', (stream) => {
      const session = stream.session;
      sessions.push(session);
      serverClosed = once(session, 'close');
      stream.respond({ ':status': 200 }, { endStream: true });
      if (when === 'at once') act(session);
      else setImmediate(act, session);
    });
    const session = client(port);
    session.on('error', () => {});
    const clientClosed = once(session, 'close');
    const events = [];
    session.on('goaway', (code, lastStreamID) => events.push(`goaway ${code} ${lastStreamID}`));
    const req = session.request({ ':path': '/' });
    req.on('response', (headers) => events.push(`response ${headers[':status']}`));
    req.on('error', () => {});
    req.on('close', () => events.push(`close ${req.rstCode}`));
    req.resume();
    await within(clientClosed, 5000, "the client's session 'close'");
    await within(serverClosed, 5000, "the server's session 'close'");
    return events;
  }

  // Node 20 hung here: the stream had ended before its HEADERS went out, and
  // the graceful close never completed on either side.
  for (const when of ['at once', 'from an immediate']) {
    it(`respond({ endStream }) then close() ${when}: the client has the response and one GOAWAY, both sessions close`, async function () {
      assert.deepStrictEqual(await run(when, (session) => session.close()), ['response 200', 'close 0', 'goaway 0 1']);
    });
  }

  // The response was lost (the client's stream closed with NGHTTP2_CANCEL):
  // the handler ran with the server's first write unfinished, and nghttp2
  // sends nothing more once destroyed. Over node:tls it runs inside the read
  // that write answers, before the write is made; Node 20 then sends the
  // response as destroy() resets the stream, and no GOAWAY (the response's
  // write is in flight). node:tls 22 and later send the GOAWAY and drop the
  // response instead; tlswrap keeps Node 20's answer there.
  it('respond({ endStream }) then destroy() at once: the client has the response, no GOAWAY', async function () {
    if (builtin && Number(process.versions.node.split('.')[0]) >= 22) this.skip();
    const events = await run('at once', (session) => session.destroy());
    assert.deepStrictEqual(events, ['response 200', 'close 0']);
  });

  // There the server's first write is finished before the TLS socket has
  // sent it, and the response's write comes while it is still there: it
  // waits for it, as a socket has one write in flight.
  it('destroy() at once: the server never has two writes in flight on its TLS socket (tlswrap only)', async function () {
    if (builtin) this.skip();
    let overlaps = 0;
    let writes = 0;
    const events = await run('at once', (session) => session.destroy(), (socket) => {
      const dispatch = socket._dispatch;
      socket._dispatch = function (...args) {
        writes++;
        if (this._writeCallback !== null) overlaps++;
        return Reflect.apply(dispatch, this, args);
      };
    });
    assert.deepStrictEqual(events, ['response 200', 'close 0']);
    assert.ok(writes >= 2, `${writes} writes`);
    assert.strictEqual(overlaps, 0);
  });

  // The response was lost (the client's stream closed with NGHTTP2_CANCEL),
  // and then, with the response's write still unfinished when the immediate
  // ran, the GOAWAY that destroy() sends.
  it('respond({ endStream }) then destroy() from an immediate: the client has the response, then the GOAWAY', async function () {
    const events = await run('from an immediate', (session) => session.destroy());
    assert.deepStrictEqual(events, ['response 200', 'close 0', 'goaway 0 1']);
  });
});
