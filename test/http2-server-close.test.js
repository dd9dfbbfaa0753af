'use strict';

// tlswrap/http2's server closing or destroying a session right after a
// response: the response reaches the client and both sessions close, as with
// node:http2 over node:tls. The first request on a connection is the case:
// its 'stream' handler runs while the server's first write (its SETTINGS and
// the ACK of the client's) is still being finished.

const assert = require('node:assert');
const { once } = require('node:events');
const { builtin, fixtures, serverOptions, listen, closeServer } = require('./common');

const http2 = builtin ? require('node:http2') : require('tlswrap/http2');

// Rejects after `ms` with `what` in the message: a session that never closes
// fails the test rather than hanging it.
function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('http2: the server closes its session right after a response', function () {
  const servers = [];
  const sessions = []; // both sides': a session that hung must not hold the server open
  afterEach(async function () {
    for (const s of sessions.splice(0)) s.destroy();
    for (const s of servers.splice(0)) if (s.listening) await closeServer(s);
  });

  // A server whose 'stream' handler responds with headers alone and then
  // calls `act(session)`, at once or from an immediate; one request to it.
  // Resolves with the client's events once both sessions have closed.
  async function run(when, act) {
    const server = http2.createSecureServer(serverOptions({}));
    servers.push(server);
    let serverClosed;
    server.on('stream', (stream) => {
      const session = stream.session;
      sessions.push(session);
      serverClosed = once(session, 'close');
      stream.respond({ ':status': 200 }, { endStream: true });
      if (when === 'at once') act(session);
      else setImmediate(act, session);
    });
    const port = await listen(server);
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: fixtures.ca, servername: 'localhost' });
    sessions.push(session);
    session.on('error', () => {});
    const clientClosed = once(session, 'close');
    const events = [];
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
    it(`respond({ endStream }) then close() ${when}: the client has the response, both sessions close`, async function () {
      assert.deepStrictEqual(await run(when, (session) => session.close()), ['response 200', 'close 0']);
    });
  }

  // The response was lost (the client's stream closed with NGHTTP2_CANCEL).
  // (destroy() at once loses it over node:tls too on Node 24, not on 20.)
  it('respond({ endStream }) then destroy() from an immediate: the client has the response', async function () {
    const events = await run('from an immediate', (session) => session.destroy());
    assert.deepStrictEqual(events, ['response 200', 'close 0']);
  });
});
