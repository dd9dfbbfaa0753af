'use strict';

// Child of http2.test.js: opens an HTTP/2 session to the parent's server
// (port in argv[2]), makes one request, then unref()s the session. With
// nothing else keeping the loop alive, the process must exit by itself while
// the connection is still open. Honours TLSWRAP_TEST_BUILTIN.

const { builtin, fixtures } = require('../common');

const http2 = builtin ? require('node:http2') : require('tlswrap/http2');

const session = http2.connect(`https://127.0.0.1:${process.argv[2]}`, { ca: fixtures.ca, servername: 'localhost' });
session.on('error', (err) => {
  process.stdout.write(`${JSON.stringify({ error: err.code || err.message })}\n`);
  process.exitCode = 1;
});
const req = session.request({ ':path': '/' });
req.resume();
req.on('end', () => {
  session.unref();
  process.stdout.write(`${JSON.stringify({ alpn: session.alpnProtocol, closed: session.closed })}\n`);
});
