'use strict';

// tls.createSecurePair() (DEP0064), on the Nodes that still have it (20,
// 22): a TLSSocket (`cleartext`) over an in-memory stream whose other end
// (`encrypted`) carries the ciphertext. Old STARTTLS code builds on it.

const assert = require('node:assert');
const { once } = require('node:events');
const { tlswrap, fixtures, serverOptions, pattern } = require('./common');

const tls = tlswrap;
const serverContext = () => tls.createSecureContext(serverOptions());
const clientOptions = (extra) => ({ ca: fixtures.ca, servername: 'localhost', ...extra });

// Collects a stream's 'data' until 'end'.
function readAll(stream) {
  const chunks = [];
  stream.on('data', (d) => chunks.push(d));
  return once(stream, 'end').then(() => Buffer.concat(chunks));
}

describe('createSecurePair()', function () {
  this.timeout(10000);

  before(function () {
    if (typeof tls.createSecurePair !== 'function') this.skip(); // gone in Node 24
  });

  // Node warns once per process: this must be the file's first call.
  it('warns DEP0064 on first use', async function () {
    const warned = new Promise((resolve) => process.once('warning', resolve));
    const pair = tls.createSecurePair();
    const warning = await warned;
    assert.strictEqual(warning.code, 'DEP0064');
    assert.strictEqual(warning.name, 'DeprecationWarning');
    pair.destroy();
  });

  it('the shape: cleartext a TLSSocket, encrypted a Duplex, credentials the context, an EventEmitter', function () {
    const context = serverContext();
    const server = tls.createServer(); // never listens: the pair's events' server
    const pair = tls.createSecurePair(context, true, false, false, { server });
    assert.ok(pair.cleartext instanceof tls.TLSSocket);
    assert.strictEqual(typeof pair.encrypted.write, 'function');
    assert.strictEqual(typeof pair.encrypted.read, 'function');
    assert.strictEqual(pair.credentials, context);
    assert.strictEqual(pair.server, server);
    assert.strictEqual(typeof pair.on, 'function');
    pair.destroy();
    assert.ok(pair.cleartext.destroyed);
    assert.ok(pair.encrypted.destroyed);
  });

  it('a server pair: a client over `encrypted` handshakes, verifies, and 256 KiB cross each way with EOF', async function () {
    const pair = tls.createSecurePair(serverContext(), true, false, false);
    const secure = once(pair, 'secure');
    const client = tls.connect({ socket: pair.encrypted, ...clientOptions() });
    await once(client, 'secureConnect');
    await secure;
    assert.strictEqual(client.authorized, true);
    assert.strictEqual(pair.cleartext.encrypted, true);
    const up = pattern(256 << 10, 1);
    const down = pattern(256 << 10, 2);
    const serverGot = readAll(pair.cleartext);
    const clientGot = readAll(client);
    client.end(up);
    pair.cleartext.end(down);
    assert.ok((await serverGot).equals(up), 'the server pair got what the client sent');
    assert.ok((await clientGot).equals(down), 'the client got what the server pair sent');
    pair.destroy();
    client.destroy();
  });

  it('two pairs piped together: the client side started with _start(), data both ways', async function () {
    const server = tls.createSecurePair(serverContext(), true, false, false);
    const client = tls.createSecurePair(tls.createSecureContext({ ca: fixtures.ca }), false, false, false,
      { servername: 'localhost' });
    server.encrypted.pipe(client.encrypted).pipe(server.encrypted);
    const secure = Promise.all([once(server, 'secure'), once(client, 'secure')]);
    client.cleartext._start();
    await secure;
    assert.strictEqual(client.cleartext.getPeerCertificate().subject.CN, 'localhost');
    const serverGot = readAll(server.cleartext);
    const clientGot = readAll(client.cleartext);
    client.cleartext.end('ping');
    server.cleartext.end('pong');
    assert.strictEqual(String(await serverGot), 'ping');
    assert.strictEqual(String(await clientGot), 'pong');
    server.destroy();
    client.destroy();
  });

  it('the fifth argument is TLSSocket options: an SNICallback sees the client\'s servername', async function () {
    let asked;
    const pair = tls.createSecurePair(serverContext(), true, false, false, {
      SNICallback(servername, cb) {
        asked = servername;
        cb(null, serverContext());
      },
    });
    // The certificate is for localhost: the client accepts it unverified.
    const client = tls.connect({
      socket: pair.encrypted, ...clientOptions({ servername: 'www.example.com', rejectUnauthorized: false }),
    });
    await Promise.all([once(pair, 'secure'), once(client, 'secureConnect')]);
    assert.strictEqual(asked, 'www.example.com');
    assert.strictEqual(pair.cleartext.servername, 'www.example.com');
    pair.destroy();
    client.destroy();
  });

  it('requestCert and rejectUnauthorized: a server pair refuses a client without a certificate', async function () {
    const context = tls.createSecureContext(serverOptions({ ca: fixtures.ca }));
    const pair = tls.createSecurePair(context, true, true, true);
    const failed = once(pair.cleartext, 'error');
    const client = tls.connect({ socket: pair.encrypted, ...clientOptions() });
    client.on('error', () => {});
    const [err] = await failed;
    assert.ok(err instanceof Error);
    assert.strictEqual(typeof err.code, 'string');
    assert.match(err.code, /CERTIFICATE/);
    pair.destroy();
    client.destroy();
  });

  it('garbage written to `encrypted`: the cleartext side fails with a coded error, nothing is delivered', async function () {
    const pair = tls.createSecurePair(serverContext(), true, false, false);
    let delivered = 0;
    pair.cleartext.on('data', (d) => { delivered += d.length; });
    const failed = once(pair.cleartext, 'error');
    pair.encrypted.write(Buffer.from('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    const [err] = await failed;
    assert.match(err.code, /^ERR_SSL_/);
    assert.strictEqual(delivered, 0);
    pair.destroy();
  });
});
