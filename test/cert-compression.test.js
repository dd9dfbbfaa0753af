'use strict';

// certificateCompression (RFC 8879, TLS 1.3): off unless asked, as node:tls
// has it on Node 24.19+, and when both ends ask, the server's Certificate
// travels compressed and still verifies. Observed on the wire through a
// record proxy: the ClientHello's compress_certificate extension, and the
// bytes the server sends.

const assert = require('node:assert');
const { X509Certificate } = require('node:crypto');
const { once } = require('node:events');
const nodeTls = require('node:tls');
const zlib = require('node:zlib');
const {
  tlswrap, builtin, fixture, fixtures, listen, release, serverOptions, startRecordProxy, RecordType,
} = require('./common');

const {
  startForgedServer, forgedClient, handshakeMessage, HandshakeType, u16, u24,
} = require('./tls13-forged');

const kCompressCertificate = 27; // RFC 8879's extension number
const manyNames = { key: fixture('many-names-key.pem'), cert: fixture('many-names-cert.pem') };
// Node 24.19+: node:tls has the option, and its OpenSSL the algorithms.
const supported = typeof nodeTls.getCertificateCompressionAlgorithms === 'function' &&
  nodeTls.getCertificateCompressionAlgorithms().length > 0;

// The extensions of a ClientHello record: Map of type -> data.
function clientHelloExtensions(record) {
  assert.strictEqual(record[0], RecordType.handshake);
  assert.strictEqual(record[5], 1, 'a ClientHello');
  let at = 5 + 4 + 2 + 32; // record header, handshake header, version, random
  at += 1 + record[at]; // session id
  at += 2 + record.readUInt16BE(at); // cipher suites
  at += 1 + record[at]; // compression methods
  const end = at + 2 + record.readUInt16BE(at);
  at += 2;
  const extensions = new Map();
  while (at < end) {
    const type = record.readUInt16BE(at);
    const size = record.readUInt16BE(at + 2);
    extensions.set(type, record.subarray(at + 4, at + 4 + size));
    at += 4 + size;
  }
  return extensions;
}

// One connection through a record proxy, to a server that ends it once the
// handshake is done: what the client offered, and every byte the server
// sent (its flight, its tickets, its close_notify; all but the flight are
// the same size whatever the certificate).
async function handshake(server, clientImpl, clientOptions) {
  const port = await listen(server);
  let clientHello = null;
  let serverBytes = 0;
  const proxy = await startRecordProxy(port, (direction, record) => {
    if (direction === 'toClient') serverBytes += record.length;
    else if (clientHello === null) clientHello = record;
  });
  const sockets = [];
  try {
    const socket = clientImpl.connect({
      host: '127.0.0.1', port: proxy.port, ca: fixtures.ca, servername: 'localhost', ...clientOptions,
    });
    sockets.push(socket);
    await once(socket, 'secureConnect');
    const result = {
      authorized: socket.authorized,
      protocol: socket.getProtocol(),
      offered: clientHelloExtensions(clientHello).get(kCompressCertificate) || null,
    };
    socket.resume();
    await once(socket, 'end');
    result.serverBytes = serverBytes;
    return result;
  } finally {
    await release(sockets, proxy, server);
  }
}

function serverOn(impl, options) {
  return impl.createServer({ ...manyNames, ...options }, (s) => s.end());
}

describe('certificate compression', function () {
  this.timeout(20000);

  it('is not offered by a client that did not ask for it', async () => {
    const result = await handshake(serverOn(tlswrap, {}), tlswrap, {});
    assert.strictEqual(result.authorized, true);
    assert.strictEqual(result.offered, null);
  });

  describe('where node:tls has the certificateCompression option', function () {
    before(function () {
      if (!supported) this.skip();
    });

    it('getCertificateCompressionAlgorithms() lists what the option takes', () => {
      assert.deepStrictEqual(tlswrap.getCertificateCompressionAlgorithms(),
                             nodeTls.getCertificateCompressionAlgorithms());
    });

    it('a client offers the algorithms it names, in its order', async () => {
      const result = await handshake(serverOn(tlswrap, {}), tlswrap, { certificateCompression: ['zstd', 'zlib'] });
      // A one-byte length, then two-byte codes: zstd 3, zlib 1.
      assert.deepStrictEqual([...result.offered], [4, 0, 3, 0, 1]);
    });

    it('the server sends its certificate compressed when both ends ask', async () => {
      const plain = await handshake(serverOn(tlswrap, {}), tlswrap, {});
      const both = await handshake(serverOn(tlswrap, { certificateCompression: ['zlib'] }), tlswrap,
                                   { certificateCompression: ['zlib'] });
      assert.strictEqual(both.authorized, true);
      assert.strictEqual(both.protocol, 'TLSv1.3');
      // The certificate is 8.7 KB, 300 names of one pattern: zlib keeps a
      // fraction of it.
      assert.ok(both.serverBytes < plain.serverBytes - 4000,
                `compressed: ${both.serverBytes} B, uncompressed: ${plain.serverBytes} B`);
    });

    it('nothing is compressed unless both ends ask for one algorithm', async () => {
      const plain = await handshake(serverOn(tlswrap, {}), tlswrap, {});
      const serverOnly = await handshake(serverOn(tlswrap, { certificateCompression: ['zlib'] }), tlswrap, {});
      const clientOnly = await handshake(serverOn(tlswrap, {}), tlswrap, { certificateCompression: ['zlib'] });
      const noCommon = await handshake(serverOn(tlswrap, { certificateCompression: ['zstd'] }), tlswrap,
                                       { certificateCompression: ['zlib'] });
      for (const result of [serverOnly, clientOnly, noCommon]) {
        assert.strictEqual(result.authorized, true);
        // node:tls's tickets vary by a few bytes from one connection to the
        // next; the compressed certificate would be 4 KB smaller.
        assert.ok(Math.abs(result.serverBytes - plain.serverBytes) < 64,
                  `${result.serverBytes} B, uncompressed: ${plain.serverBytes} B`);
      }
    });

    it('a context chosen by SNI sends its certificate compressed', async () => {
      // Its certificate moves onto the connection; so must its compressed form.
      const flight = async (certificateCompression) => {
        const chosen = tlswrap.createSecureContext({ ...manyNames, certificateCompression });
        const server = tlswrap.createServer({
          key: fixtures.serverKey, cert: fixtures.serverCert, SNICallback: (name, cb) => cb(null, chosen),
        }, (s) => s.end());
        const result = await handshake(server, tlswrap, { certificateCompression: ['zlib'] });
        assert.strictEqual(result.authorized, true);
        return result.serverBytes;
      };
      const plain = await flight(undefined);
      const compressed = await flight(['zlib']);
      assert.ok(compressed < plain - 4000, `compressed: ${compressed} B, uncompressed: ${plain} B`);
    });

    // OpenSSL makes no brotli form of a small certificate (none smaller
    // than it): the server sends it uncompressed, as node:tls's does.
    it('a server with brotli alone and a small certificate: accepted, the handshake works', async () => {
      const server = tlswrap.createServer(serverOptions({ certificateCompression: ['brotli'] }), (s) => s.end());
      const result = await handshake(server, tlswrap, { certificateCompression: ['brotli'] });
      assert.strictEqual(result.authorized, true);
    });

    it('connect() does not share a context between different choices', async () => {
      // connect() without a secureContext shares one client context between
      // equal options: the option has to be part of what makes them equal.
      const offered = [];
      for (const certificateCompression of [['zlib'], undefined, ['brotli'], []]) {
        const options = certificateCompression ? { certificateCompression } : {};
        offered.push((await handshake(serverOn(tlswrap, {}), tlswrap, options)).offered);
      }
      assert.deepStrictEqual(offered.map((o) => o && [...o]), [[2, 0, 1], null, [2, 0, 2], null]);
    });

    it('checks the option as node:tls does', () => {
      const cases = [
        ['zlib', TypeError, 'ERR_INVALID_ARG_TYPE',
         'The "options.certificateCompression" property must be an instance of Array. Received type string (\'zlib\')'],
        [{}, TypeError, 'ERR_INVALID_ARG_TYPE',
         'The "options.certificateCompression" property must be an instance of Array. Received an instance of Object'],
        [['zlib', 'brotli', 'zstd', 'zlib'], TypeError, 'ERR_INVALID_ARG_VALUE',
         "The property 'options.certificateCompression' can specify at most 3 algorithms. " +
         "Received [ 'zlib', 'brotli', 'zstd', 'zlib' ]"],
        [['zlib', 'ZLIB'], TypeError, 'ERR_INVALID_ARG_VALUE',
         "The property 'options.certificateCompression[1]' must be 'zlib', 'brotli', or 'zstd'. Received 'ZLIB'"],
        // A hole reads as undefined.
        [[, 'zlib'], TypeError, 'ERR_INVALID_ARG_VALUE',
         "The property 'options.certificateCompression[0]' must be 'zlib', 'brotli', or 'zstd'. Received undefined"],
        [[1], TypeError, 'ERR_INVALID_ARG_VALUE',
         "The property 'options.certificateCompression[0]' must be 'zlib', 'brotli', or 'zstd'. Received 1"],
        [['zstd', 'zstd'], Error, 'ERR_CRYPTO_OPERATION_FAILED', 'Failed to set certificate compression preference'],
      ];
      // The compressed Certificate message is TLS 1.3's.
      const range = [TypeError, 'ERR_INVALID_ARG_VALUE',
                     'certificateCompression requires a TLS protocol range that includes TLSv1.3'];
      const more = [
        [{ maxVersion: 'TLSv1.2' }, ...range],
        [{ secureProtocol: 'TLSv1_2_method' }, ...range],
      ];
      for (const [value, ...expected] of cases) more.push([{ certificateCompression: value }, ...expected]);
      for (const [options, type, code, message] of more) {
        const withAlgorithm = { certificateCompression: ['zlib'], ...options };
        assert.throws(() => tlswrap.createSecureContext(withAlgorithm),
                      (err) => err instanceof type && err.code === code && err.message === message,
                      JSON.stringify(withAlgorithm));
      }
      for (const options of [{ certificateCompression: undefined }, { certificateCompression: null },
        { certificateCompression: [] }, { certificateCompression: [], maxVersion: 'TLSv1.2' },
        { certificateCompression: ['zlib', 'brotli', 'zstd'] },
        { certificateCompression: ['zlib'], secureProtocol: 'TLS_method' },
        { certificateCompression: ['zlib'], minVersion: 'TLSv1.3' }]) {
        tlswrap.createSecureContext(options);
      }
    });

    it('works with node:tls at the other end, either way round', async function () {
      if (builtin) this.skip(); // the same pairs as above
      const options = { certificateCompression: ['zlib'] };
      for (const [serverImpl, clientImpl] of [[tlswrap, nodeTls], [nodeTls, tlswrap]]) {
        const plain = await handshake(serverOn(serverImpl, {}), clientImpl, {});
        const both = await handshake(serverOn(serverImpl, options), clientImpl, options);
        assert.strictEqual(both.authorized, true);
        assert.ok(both.serverBytes < plain.serverBytes - 4000,
                  `compressed: ${both.serverBytes} B, uncompressed: ${plain.serverBytes} B`);
      }
    });

    // OpenSSL's defence, which both implementations must surface as an
    // error with a code, on either end: the claimed size is checked against
    // the certificate list limit (100 KiB) before anything is allocated, and
    // decompression stops at the claimed size. The forged peers do a real
    // key exchange, so the other end decrypts and parses what they send.
    describe('a hostile peer\'s compressed certificate', function () {
      const algorithms = { zlib: 1, brotli: 2, zstd: 3 };
      const compress = {
        zlib: (data) => zlib.deflateSync(data, { level: 9 }),
        brotli: (data) => zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
        zstd: (data) => zlib.zstdCompressSync(data),
      };
      // A real certificate as the body of a TLS 1.3 Certificate message
      // (what is compressed: OpenSSL leaves out the handshake header).
      const certificateMessage = (pem) => {
        const der = new X509Certificate(pem).raw;
        const entry = Buffer.concat([u24(der.length), der, u16(0)]);
        return Buffer.concat([Buffer.from([0]), u24(entry.length), entry]);
      };
      const compressedCertificate = (algorithm, claimedLength, compressed) =>
        handshakeMessage(HandshakeType.compressedCertificate, Buffer.concat([
          u16(algorithms[algorithm]), u24(claimedLength), u24(compressed.length), compressed,
        ]));
      const wellFormed = (pem) => {
        const message = certificateMessage(pem);
        return compressedCertificate('zlib', message.length, compress.zlib(message));
      };
      const garbage = Buffer.alloc(4096, 0xa5);
      // [title, algorithms the receiver takes, forged message, expected code]
      const cases = [];
      for (const algorithm of Object.keys(algorithms)) {
        cases.push([`${algorithm}: a claimed size of 16 MiB is refused before decompressing`, [algorithm],
                    () => compressedCertificate(algorithm, 0xffffff, compress[algorithm](Buffer.alloc(0xffffff))),
                    'ERR_SSL_EXCESSIVE_MESSAGE_SIZE']);
        cases.push([`${algorithm}: 64 MiB of zeros claimed as 8 KiB stop at 8 KiB, memory bounded`, [algorithm],
                    () => compressedCertificate(algorithm, 8192, compress[algorithm](Buffer.alloc(64 << 20))),
                    'ERR_SSL_BAD_DECOMPRESSION']);
      }
      cases.push(['an algorithm the receiver does not take', ['zlib'],
                  () => compressedCertificate('brotli', garbage.length, compress.brotli(garbage)),
                  'ERR_SSL_BAD_COMPRESSION_ALGORITHM']);
      cases.push(['the claimed size, but not a Certificate message', ['zlib'],
                  () => compressedCertificate('zlib', garbage.length, compress.zlib(garbage)), /^ERR_SSL_/]);
      const codeName = (code) => (typeof code === 'string' ? code : 'an ERR_SSL_ code');
      const checkCode = (err, code) => {
        if (typeof code === 'string') assert.strictEqual(err.code, code);
        else assert.match(err.code, code);
      };
      const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

      let cleanup = [];
      afterEach(() => {
        for (const fn of cleanup.reverse()) fn();
        cleanup = [];
      });

      describe('from a server', function () {
        // Connects to a forged server and returns the client socket.
        async function connectTo(forge, offered) {
          const server = await startForgedServer(forge);
          const sockets = new Set();
          server.on('connection', (s) => sockets.add(s));
          cleanup.push(() => {
            for (const s of sockets) s.destroy();
            server.close();
          });
          const socket = tlswrap.connect({
            host: '127.0.0.1', port: server.address().port, ca: fixtures.ca, servername: 'localhost',
            certificateCompression: offered, ecdhCurve: 'X25519',
          });
          cleanup.push(() => socket.destroy());
          return { socket, server, sockets };
        }

        it('control: a well-formed one is read, and the client waits for the rest of the flight', async () => {
          const { socket, server, sockets } = await connectTo(() => [wellFormed(fixtures.serverCert)], ['zlib']);
          let error = null;
          socket.on('error', (err) => { error = err; });
          while (server.forged === 0) await delay(10);
          await delay(300);
          assert.strictEqual(error, null, 'the forged flight was accepted so far');
          for (const s of sockets) s.destroy();
          if (error === null) await once(socket, 'error');
          assert.strictEqual(error.code, 'ECONNRESET');
        });

        for (const [title, offered, forge, code] of cases) {
          it(`${title}: ${codeName(code)}`, async () => {
            const message = forge();
            const before = process.memoryUsage.rss();
            const { socket, server } = await connectTo(() => [message], offered);
            const [err] = await once(socket, 'error');
            assert.strictEqual(server.forged, 1);
            checkCode(err, code);
            const grown = process.memoryUsage.rss() - before;
            assert.ok(grown < 32 << 20, `RSS grew by ${grown} B`);
          });
        }
      });

      describe('from a client', function () {
        // A server that asks for a client certificate and takes the
        // algorithms `accepted`; resolves with the forged client's socket
        // and the server's tlsClientErrors.
        async function connectFrom(forge, accepted) {
          const server = tlswrap.createServer({
            key: fixtures.serverKey, cert: fixtures.serverCert, ca: fixtures.ca, requestCert: true,
            certificateCompression: accepted,
          }, () => assert.fail('no handshake may complete'));
          const errors = [];
          server.on('tlsClientError', (err) => errors.push(err));
          const port = await listen(server);
          cleanup.push(() => server.close());
          const socket = await forgedClient(port, 'localhost', [1], forge);
          cleanup.push(() => socket.destroy());
          return { socket, errors };
        }

        it('control: a well-formed one is read, and the server waits for the rest of the flight', async () => {
          const { socket, errors } = await connectFrom(() => [wellFormed(fixtures.clientCert)], ['zlib']);
          assert.strictEqual(socket.forged, true);
          await delay(300);
          assert.deepStrictEqual(errors, [], 'the forged flight was accepted so far');
          socket.destroy();
          while (errors.length === 0) await delay(10);
          assert.strictEqual(errors[0].code, 'ECONNRESET');
        });

        for (const [title, accepted, forge, code] of cases) {
          it(`${title}: tlsClientError ${codeName(code)}`, async () => {
            const message = forge();
            const before = process.memoryUsage.rss();
            const { socket, errors } = await connectFrom(() => [message], accepted);
            assert.strictEqual(socket.forged, true);
            while (errors.length === 0) await delay(10);
            checkCode(errors[0], code);
            const grown = process.memoryUsage.rss() - before;
            assert.ok(grown < 32 << 20, `RSS grew by ${grown} B`);
          });
        }
      });
    });
  });
});
