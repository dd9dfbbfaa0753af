'use strict';

// Sessions shared by a node:tls server and a tlswrap server of one fleet:
// the same ticketKeys (or one session store) and sessionIdContext, so a
// client resumes at either whichever made its session. Both bind a session
// to the server name through the session id context; where they derive it
// alike, sessions cross, and they must still not cross names or contexts.
// The client is node:tls's throughout, so only the servers differ.

const assert = require('node:assert');
const crypto = require('node:crypto');
const { once } = require('node:events');
const tls = require('node:tls');
const { builtin, fixtures, tlswrap, serverOptions, listen, closeServer } = require('./common');
const { nodeBindsSessionsToNames } = require('../lib/session_state');

const { SSL_OP_NO_TICKET } = crypto.constants;
const implementations = { 'node:tls': tls, tlswrap };

// Waits until `done()` holds or 2 s have passed (TLS 1.3 tickets come after
// the handshake).
async function until(done) {
  const deadline = Date.now() + 2000;
  while (!done() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// One connection from node:tls's client to 127.0.0.1 (no SNI unless
// `servername` is given): whether each end resumed, and the first session
// the client was handed on a full handshake.
async function visit(server, port, version, extra = {}) {
  const serverSide = once(server, 'secureConnection');
  const client = tls.connect({ host: '127.0.0.1', port, ca: fixtures.ca, minVersion: version, maxVersion: version,
    ...extra });
  const sessions = [];
  client.on('session', (s) => sessions.push(s));
  await once(client, 'secureConnect');
  const [sock] = await serverSide;
  const result = { reused: client.isSessionReused(), serverReused: sock.isSessionReused() };
  if (!result.reused) await until(() => sessions.length > 0);
  result.session = sessions[0];
  client.end();
  await once(client, 'close');
  return result;
}

// The DER in a session, without the name node:tls 22.23 and 24.22 put in
// front of it: offered so, a session reaches the server whatever name the
// client connects to, and the server alone decides.
function der(session) {
  const prefix = Buffer.from('\0nodejs:tls:session:1\0', 'latin1');
  if (!session.subarray(0, prefix.length).equals(prefix)) return session;
  return session.subarray(prefix.length + 2 + session.readUInt16BE(prefix.length));
}

const modes = [
  { name: 'TLS 1.2 tickets', version: 'TLSv1.2' },
  { name: 'TLS 1.3 tickets', version: 'TLSv1.3' },
  { name: 'TLS 1.2 session IDs (one store)', version: 'TLSv1.2', secureOptions: SSL_OP_NO_TICKET },
];

for (const mode of modes) {
  describe(`sessions across a node:tls and a tlswrap server, ${mode.name}`, function () {
    const servers = [];
    afterEach(async function () {
      await Promise.all(servers.splice(0).map(closeServer));
    });

    // A server of `impl` in a fleet whose members share `ticketKeys` and
    // `store` (newSession/resumeSession, for session IDs).
    async function start(impl, fleet, sessionIdContext = 'fleet') {
      const server = implementations[impl].createServer(serverOptions({
        minVersion: mode.version, maxVersion: mode.version, ticketKeys: fleet.ticketKeys, sessionIdContext,
        secureOptions: mode.secureOptions,
      }));
      if (mode.secureOptions) {
        server.on('newSession', (id, data, cb) => { fleet.store.set(id.toString('hex'), data); cb(); });
        server.on('resumeSession', (id, cb) => cb(null, fleet.store.get(id.toString('hex')) || null));
      }
      servers.push(server);
      return { server, port: await listen(server) };
    }
    function fleet() {
      return { ticketKeys: crypto.randomBytes(48), store: new Map() };
    }

    for (const [from, to] of [['node:tls', 'tlswrap'], ['tlswrap', 'node:tls']]) {
      // A client connecting to an IP address sends no server name. node:tls
      // 22.23.5 and 24.22.3 bind such a session to the context and an empty
      // name; 20 and 26 to the context as given. tlswrap follows the Node it
      // runs on.
      it(`no SNI: a session from the ${from} server resumes at the ${to} server`, async function () {
        const shared = fleet();
        const a = await start(from, shared);
        const b = await start(to, shared);
        const first = await visit(a.server, a.port, mode.version);
        assert.ok(first.session, 'no session from the first server');
        const again = await visit(b.server, b.port, mode.version, { session: first.session });
        assert.deepStrictEqual([again.reused, again.serverReused], [true, true]);
      });

      // node:tls 20 and 26 do not bind sessions to the server name at all;
      // tlswrap does, so there a named session crosses no more.
      it(`SNI: a session from the ${from} server resumes at the ${to} server for its name`, async function () {
        if (!builtin && !nodeBindsSessionsToNames) this.skip();
        const shared = fleet();
        const a = await start(from, shared);
        const b = await start(to, shared);
        const first = await visit(a.server, a.port, mode.version, { servername: 'localhost' });
        const again = await visit(b.server, b.port, mode.version, { servername: 'localhost', session: first.session });
        assert.deepStrictEqual([again.reused, again.serverReused], [true, true]);
      });

      it(`no SNI: a session from the ${from} server does not resume at the ${to} server ` +
        'under a server name or another sessionIdContext', async function () {
        const shared = fleet();
        const a = await start(from, shared);
        const b = await start(to, shared);
        const c = await start(to, shared, 'elsewhere');
        const first = await visit(a.server, a.port, mode.version);
        const session = der(first.session);
        const other = await visit(c.server, c.port, mode.version, { session, rejectUnauthorized: false });
        assert.deepStrictEqual([other.reused, other.serverReused], [false, false]);
        // node:tls 20 and 26 resume it under any name: they bind none.
        const bindsNames = (to === 'tlswrap' && !builtin) || nodeBindsSessionsToNames;
        if (!bindsNames) return;
        const named = await visit(b.server, b.port, mode.version,
          { servername: 'localhost', session, rejectUnauthorized: false });
        assert.deepStrictEqual([named.reused, named.serverReused], [false, false]);
      });
    }
  });
}
