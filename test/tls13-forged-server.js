'use strict';

// A TLS 1.3 server that is not one: it answers a ClientHello with a real
// ServerHello (X25519, TLS_AES_128_GCM_SHA256) and then sends whatever
// handshake messages a test forges, encrypted under the server handshake
// traffic key (RFC 8446 section 7), so that a client parses them as it would
// a server's. It never finishes a handshake. Used to send what no real
// server would (a compressed certificate built to exhaust the client), with
// node:crypto only.

const crypto = require('node:crypto');
const net = require('node:net');

const kHandshake = 22;
const kApplicationData = 23;
const kChangeCipherSpec = 20;
const kMaxFragment = 16384;

const HandshakeType = { serverHello: 2, encryptedExtensions: 8, certificate: 11, compressedCertificate: 25 };

function u16(n) {
  return Buffer.from([n >> 8, n & 0xff]);
}
function u24(n) {
  return Buffer.from([n >> 16, (n >> 8) & 0xff, n & 0xff]);
}
function handshakeMessage(type, body) {
  return Buffer.concat([Buffer.from([type]), u24(body.length), body]);
}

function hkdfExtract(salt, ikm) {
  return crypto.createHmac('sha256', salt).update(ikm).digest();
}
// HKDF-Expand-Label for outputs of at most one SHA-256 block.
function expandLabel(secret, label, context, length) {
  const fullLabel = Buffer.from(`tls13 ${label}`);
  const info = Buffer.concat([u16(length), Buffer.from([fullLabel.length]), fullLabel,
    Buffer.from([context.length]), context]);
  return crypto.createHmac('sha256', secret).update(Buffer.concat([info, Buffer.from([1])])).digest()
    .subarray(0, length);
}
const sha256 = (data) => crypto.createHash('sha256').update(data).digest();

// The fields of a ClientHello this server needs; throws on anything else.
function parseClientHello(message) {
  if (message[0] !== 1) throw new Error(`expected a ClientHello, got handshake type ${message[0]}`);
  let at = 4 + 2 + 32;
  const sessionId = message.subarray(at + 1, at + 1 + message[at]);
  at += 1 + message[at];
  const suites = message.subarray(at + 2, at + 2 + message.readUInt16BE(at));
  at += 2 + suites.length;
  at += 1 + message[at];
  const end = at + 2 + message.readUInt16BE(at);
  at += 2;
  let x25519 = null;
  while (at < end) {
    const type = message.readUInt16BE(at);
    const data = message.subarray(at + 4, at + 4 + message.readUInt16BE(at + 2));
    at += 4 + data.length;
    if (type !== 51) continue; // key_share
    for (let k = 2; k < data.length;) {
      const group = data.readUInt16BE(k);
      const key = data.subarray(k + 4, k + 4 + data.readUInt16BE(k + 2));
      if (group === 0x001d) x25519 = key;
      k += 4 + key.length;
    }
  }
  let aes128 = false;
  for (let i = 0; i < suites.length; i += 2) if (suites.readUInt16BE(i) === 0x1301) aes128 = true;
  if (x25519 === null || !aes128) throw new Error('the client offered no X25519 share or no TLS_AES_128_GCM_SHA256');
  return { sessionId, x25519 };
}

function serverHello(sessionId, publicKey) {
  const extensions = Buffer.concat([
    u16(43), u16(2), u16(0x0304), // supported_versions: TLS 1.3
    u16(51), u16(36), u16(0x001d), u16(32), publicKey, // key_share
  ]);
  return handshakeMessage(HandshakeType.serverHello, Buffer.concat([
    u16(0x0303), crypto.randomBytes(32), Buffer.from([sessionId.length]), sessionId,
    u16(0x1301), Buffer.from([0]), u16(extensions.length), extensions,
  ]));
}

// Keys of the server's handshake traffic, from the X25519 secret and the
// transcript up to the ServerHello.
function handshakeKeys(shared, transcript) {
  const zeros = Buffer.alloc(32);
  const early = hkdfExtract(zeros, zeros);
  const handshakeSecret = hkdfExtract(expandLabel(early, 'derived', sha256(Buffer.alloc(0)), 32), shared);
  const traffic = expandLabel(handshakeSecret, 's hs traffic', sha256(transcript), 32);
  return { key: expandLabel(traffic, 'key', Buffer.alloc(0), 16), iv: expandLabel(traffic, 'iv', Buffer.alloc(0), 12) };
}

function record(type, body) {
  return Buffer.concat([Buffer.from([type, 3, 3]), u16(body.length), body]);
}

// Handshake bytes as TLSInnerPlaintext records, split at the record limit.
function encryptHandshake(keys, state, bytes) {
  const records = [];
  for (let at = 0; at < bytes.length; at += kMaxFragment) {
    const inner = Buffer.concat([bytes.subarray(at, at + kMaxFragment), Buffer.from([kHandshake])]);
    const nonce = Buffer.from(keys.iv);
    nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ state.sequence++) >>> 0, 8);
    const header = Buffer.concat([Buffer.from([kApplicationData, 3, 3]), u16(inner.length + 16)]);
    const cipher = crypto.createCipheriv('aes-128-gcm', keys.key, nonce);
    cipher.setAAD(header);
    records.push(header, cipher.update(inner), cipher.final(), cipher.getAuthTag());
  }
  return Buffer.concat(records);
}

// Listens on 127.0.0.1. For each connection, `forge()` returns the
// handshake messages (whole, with their headers) to send after
// EncryptedExtensions; the connection then stays open, reading and
// discarding, until the client goes. `server.forged` counts connections
// that got as far as the forged messages.
function startForgedServer(forge) {
  const server = net.createServer((socket) => {
    let buffered = Buffer.alloc(0);
    let helloLength = -1;
    socket.on('error', () => {});
    socket.on('data', function onData(data) {
      buffered = Buffer.concat([buffered, data]);
      // The ClientHello may span records; join their fragments.
      let fragments = Buffer.alloc(0);
      let at = 0;
      while (at + 5 <= buffered.length && at + 5 + buffered.readUInt16BE(at + 3) <= buffered.length) {
        if (buffered[at] !== kHandshake) break;
        fragments = Buffer.concat([fragments, buffered.subarray(at + 5, at + 5 + buffered.readUInt16BE(at + 3))]);
        at += 5 + buffered.readUInt16BE(at + 3);
      }
      if (fragments.length >= 4) helloLength = 4 + fragments.readUIntBE(1, 3);
      if (helloLength < 0 || fragments.length < helloLength) return;
      socket.removeListener('data', onData);
      socket.resume();
      const clientHello = fragments.subarray(0, helloLength);
      const { sessionId, x25519 } = parseClientHello(clientHello);
      const { privateKey, publicKey } = crypto.generateKeyPairSync('x25519');
      const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url');
      const peer = crypto.createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: x25519.toString('base64url') },
                                            format: 'jwk' });
      const shared = crypto.diffieHellman({ privateKey, publicKey: peer });
      const hello = serverHello(sessionId, raw);
      const keys = handshakeKeys(shared, Buffer.concat([clientHello, hello]));
      const state = { sequence: 0 };
      const extensions = handshakeMessage(HandshakeType.encryptedExtensions, u16(0));
      server.forged++;
      socket.write(Buffer.concat([
        record(kHandshake, hello),
        record(kChangeCipherSpec, Buffer.from([1])),
        encryptHandshake(keys, state, Buffer.concat([extensions, ...forge()])),
      ]));
    });
  });
  server.forged = 0;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

module.exports = { startForgedServer, handshakeMessage, HandshakeType, u16, u24 };
