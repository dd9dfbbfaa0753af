'use strict';

// Promises awaited on an HTTP/2 stream's events, as with node:http2 over
// node:tls: there node runs the tick queue and then the microtasks after
// each frame nghttp2 reports, so the continuation of `await once(req,
// 'response')` runs before the frames behind that response are read, and
// can still listen for the stream's 'end'.

const assert = require('node:assert');
const { once } = require('node:events');
const nodeHttp2 = require('node:http2');
const { builtin, orTimeout, http2Peers } = require('./common');

const http2 = builtin ? nodeHttp2 : require('tlswrap/http2');

describe('http2: awaiting a stream event', function () {
  // The server: node:http2 over node:tls, or tlswrap/http2; the client is
  // the one under test either way.
  const servers = { node: http2Peers(nodeHttp2), tlswrap: http2Peers(http2) };
  const clients = http2Peers(http2);
  afterEach(async () => {
    await clients.release();
    await servers.node.release();
    await servers.tlswrap.release();
  });

  for (const serverImpl of ['node', 'tlswrap']) {
    for (const body of ['', 'hello']) {
      it(`a response with ${body ? 'a' : 'an empty'} body, from a ${serverImpl} server: 'end' comes after 'response' is awaited`, async function () {
        const { server, port } = await servers[serverImpl].start({});
        server.on('stream', (stream) => {
          stream.resume();
          // Answered once the request has ended: the response's HEADERS and
          // its END_STREAM DATA frame come in one TLS record.
          stream.on('end', () => {
            stream.respond({ ':status': 200 });
            stream.end(body);
          });
        });
        const session = clients.client(port);
        const req = session.request({ ':path': '/', ':method': 'POST' });
        req.end();
        const [headers] = await once(req, 'response');
        assert.strictEqual(headers[':status'], 200);
        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        const ended = await orTimeout(once(req, 'end').then(() => true), 3000, false);
        assert.strictEqual(ended, true, "no 'end' after the awaited 'response'");
        assert.strictEqual(Buffer.concat(chunks).toString(), body);
      });
    }
  }
});
