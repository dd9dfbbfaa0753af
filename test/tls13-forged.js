'use strict';

// TLS 1.3 peers that are not: each does a real key exchange (X25519,
// TLS_AES_128_GCM_SHA256) and then sends whatever handshake messages a test
// forges, encrypted under its handshake traffic key (RFC 8446 section 7),
// so that the other end parses them as it would a real peer's. Used to send
// what no real peer would (a compressed certificate built to exhaust the
// receiver), with node:crypto only. All but startFinishingServer() never
// finish a handshake; that one does, and then sends in the same write what a
// real server only sends later, or in ways OpenSSL's server never does
// (application data before the client's Finished, tickets between data).

const crypto = require('node:crypto');
const net = require('node:net');

const kChangeCipherSpec = 20;
const kAlert = 21;
const kHandshake = 22;
const kApplicationData = 23;
const kMaxFragment = 16384;
const kX25519 = 0x001d;
const kAes128GcmSha256 = 0x1301;
const kRsaPssRsaeSha256 = 0x0804;

const HandshakeType = {
  clientHello: 1, serverHello: 2, newSessionTicket: 4, encryptedExtensions: 8, certificate: 11,
  certificateVerify: 15, finished: 20, compressedCertificate: 25,
};

function u16(n) {
  return Buffer.from([n >> 8, n & 0xff]);
}
function u24(n) {
  return Buffer.from([n >> 16, (n >> 8) & 0xff, n & 0xff]);
}
function handshakeMessage(type, body) {
  return Buffer.concat([Buffer.from([type]), u24(body.length), body]);
}
// TLS vectors: a body behind its one- or two-byte length.
const vector8 = (body) => Buffer.concat([Buffer.from([body.length]), body]);
const vector16 = (body) => Buffer.concat([u16(body.length), body]);
const codes = (values) => Buffer.concat(values.map(u16));
const extension = (type, body) => Buffer.concat([u16(type), vector16(body)]);
const record = (type, body) => Buffer.concat([Buffer.from([type, 3, 3]), vector16(body)]);

function hkdfExtract(salt, ikm) {
  return crypto.createHmac('sha256', salt).update(ikm).digest();
}
// HKDF-Expand-Label for outputs of at most one SHA-256 block.
function expandLabel(secret, label, context, length) {
  const info = Buffer.concat([u16(length), vector8(Buffer.from(`tls13 ${label}`)), vector8(context)]);
  return crypto.createHmac('sha256', secret).update(Buffer.concat([info, Buffer.from([1])])).digest()
    .subarray(0, length);
}
const sha256 = (data) => crypto.createHash('sha256').update(data).digest();

// The handshake secret of a handshake without PSK, from the X25519 secret.
function handshakeSecretOf(shared) {
  const zeros = Buffer.alloc(32);
  const early = hkdfExtract(zeros, zeros);
  return hkdfExtract(expandLabel(early, 'derived', sha256(Buffer.alloc(0)), 32), shared);
}

// The record keys of a traffic secret.
function trafficKeys(traffic) {
  return {
    key: expandLabel(traffic, 'key', Buffer.alloc(0), 16),
    iv: expandLabel(traffic, 'iv', Buffer.alloc(0), 12),
    sequence: 0,
  };
}

// One end's handshake traffic keys ('s hs traffic' or 'c hs traffic'), from
// the X25519 secret and the transcript up to the ServerHello.
function handshakeKeys(label, shared, transcript) {
  return trafficKeys(expandLabel(handshakeSecretOf(shared), label, sha256(transcript), 32));
}

// One TLSInnerPlaintext record of `type` holding `content`, under `keys`.
function seal(keys, type, content) {
  const inner = Buffer.concat([content, Buffer.from([type])]);
  const nonce = Buffer.from(keys.iv);
  nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ keys.sequence++) >>> 0, 8);
  const header = Buffer.concat([Buffer.from([kApplicationData, 3, 3]), u16(inner.length + 16)]);
  const cipher = crypto.createCipheriv('aes-128-gcm', keys.key, nonce);
  cipher.setAAD(header);
  return Buffer.concat([header, cipher.update(inner), cipher.final(), cipher.getAuthTag()]);
}

// Handshake bytes as TLSInnerPlaintext records, split at the record limit.
function encryptHandshake(keys, bytes) {
  const records = [];
  for (let at = 0; at < bytes.length; at += kMaxFragment) {
    records.push(seal(keys, kHandshake, bytes.subarray(at, at + kMaxFragment)));
  }
  return Buffer.concat(records);
}

function x25519KeyPair() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('x25519');
  return { privateKey, raw: Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url') };
}
function x25519Secret(privateKey, peerRaw) {
  const publicKey = crypto.createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: peerRaw.toString('base64url') },
                                            format: 'jwk' });
  return crypto.diffieHellman({ privateKey, publicKey });
}

// Calls `onMessage(message)` with the first handshake message that arrives
// on `socket` in plaintext records (it may span several); later bytes are
// read and dropped.
function readFirstHandshakeMessage(socket, onMessage) {
  let buffered = Buffer.alloc(0);
  socket.on('data', function onData(data) {
    buffered = Buffer.concat([buffered, data]);
    const fragments = [];
    let at = 0;
    while (at + 5 <= buffered.length && buffered[at] === kHandshake) {
      const end = at + 5 + buffered.readUInt16BE(at + 3);
      if (end > buffered.length) break;
      fragments.push(buffered.subarray(at + 5, end));
      at = end;
    }
    const joined = Buffer.concat(fragments);
    if (joined.length < 4 || joined.length < 4 + joined.readUIntBE(1, 3)) return;
    socket.removeListener('data', onData);
    socket.resume();
    onMessage(joined.subarray(0, 4 + joined.readUIntBE(1, 3)));
  });
}

// The extensions of a ClientHello or ServerHello, after its fixed fields:
// Map of type -> data.
function helloExtensions(message, at) {
  const extensions = new Map();
  const end = at + 2 + message.readUInt16BE(at);
  for (at += 2; at < end;) {
    const size = message.readUInt16BE(at + 2);
    extensions.set(message.readUInt16BE(at), message.subarray(at + 4, at + 4 + size));
    at += 4 + size;
  }
  return extensions;
}

// The fields of a ClientHello a forged server needs; throws on anything else.
function parseClientHello(message) {
  if (message[0] !== HandshakeType.clientHello) throw new Error(`expected a ClientHello, got type ${message[0]}`);
  let at = 4 + 2 + 32;
  const sessionId = message.subarray(at + 1, at + 1 + message[at]);
  at += 1 + message[at];
  const suites = message.subarray(at + 2, at + 2 + message.readUInt16BE(at));
  at += 2 + suites.length;
  at += 1 + message[at];
  let share = null;
  const keyShare = helloExtensions(message, at).get(51) || Buffer.alloc(2);
  for (let k = 2; k < keyShare.length;) {
    const key = keyShare.subarray(k + 4, k + 4 + keyShare.readUInt16BE(k + 2));
    if (keyShare.readUInt16BE(k) === kX25519) share = key;
    k += 4 + key.length;
  }
  let aes128 = false;
  for (let i = 0; i < suites.length; i += 2) if (suites.readUInt16BE(i) === kAes128GcmSha256) aes128 = true;
  if (share === null || !aes128) throw new Error('the client offered no X25519 share or no TLS_AES_128_GCM_SHA256');
  return { sessionId, share };
}

// The server's X25519 share from its ServerHello.
function parseServerHello(message) {
  if (message[0] !== HandshakeType.serverHello) throw new Error(`expected a ServerHello, got type ${message[0]}`);
  let at = 4 + 2 + 32;
  at += 1 + message[at] + 2 + 1;
  const keyShare = helloExtensions(message, at).get(51);
  if (!keyShare || keyShare.readUInt16BE(0) !== kX25519) throw new Error('the server chose no X25519 share');
  return keyShare.subarray(4, 4 + keyShare.readUInt16BE(2));
}

function serverHello(sessionId, publicKey) {
  const extensions = Buffer.concat([
    extension(43, u16(0x0304)), // supported_versions: TLS 1.3
    extension(51, Buffer.concat([u16(kX25519), vector16(publicKey)])), // key_share
  ]);
  return handshakeMessage(HandshakeType.serverHello, Buffer.concat([
    u16(0x0303), crypto.randomBytes(32), vector8(sessionId), u16(kAes128GcmSha256), Buffer.from([0]),
    vector16(extensions),
  ]));
}

function clientHello(servername, publicKey, compressionAlgorithms) {
  const extensions = Buffer.concat([
    extension(0, vector16(Buffer.concat([Buffer.from([0]), vector16(Buffer.from(servername))]))), // server_name
    extension(10, vector16(codes([kX25519]))), // supported_groups
    // signature_algorithms: ECDSA P-256, RSA-PSS and RSA PKCS#1 with SHA-256
    extension(13, vector16(codes([0x0403, 0x0804, 0x0401]))),
    extension(43, vector8(codes([0x0304]))), // supported_versions
    extension(51, vector16(Buffer.concat([u16(kX25519), vector16(publicKey)]))), // key_share
    extension(27, vector8(codes(compressionAlgorithms))), // compress_certificate
  ]);
  return handshakeMessage(HandshakeType.clientHello, Buffer.concat([
    u16(0x0303), crypto.randomBytes(32), vector8(crypto.randomBytes(32)), vector16(codes([kAes128GcmSha256])),
    vector8(Buffer.from([0])), vector16(extensions),
  ]));
}

// Listens on 127.0.0.1. For each connection, `forge()` returns the
// handshake messages (whole, with their headers) to send after
// EncryptedExtensions; the connection then stays open, reading and
// discarding, until the client goes. `server.forged` counts connections
// that got as far as the forged messages.
function startForgedServer(forge) {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    readFirstHandshakeMessage(socket, (hello) => {
      const { sessionId, share } = parseClientHello(hello);
      const own = x25519KeyPair();
      const reply = serverHello(sessionId, own.raw);
      const keys = handshakeKeys('s hs traffic', x25519Secret(own.privateKey, share), Buffer.concat([hello, reply]));
      const extensions = handshakeMessage(HandshakeType.encryptedExtensions, u16(0));
      server.forged++;
      socket.write(Buffer.concat([
        record(kHandshake, reply),
        record(kChangeCipherSpec, Buffer.from([1])),
        encryptHandshake(keys, Buffer.concat([extensions, ...forge()])),
      ]));
    });
  });
  server.forged = 0;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// Connects to 127.0.0.1:port offering `compressionAlgorithms` (RFC 8879
// codes) and, once the server's flight has begun to arrive, sends the
// handshake messages `forge()` returns as its own. Resolves with the TCP
// socket once they are written; `socket.forged` says they were.
function forgedClient(port, servername, compressionAlgorithms, forge) {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.forged = false;
  const own = x25519KeyPair();
  const hello = clientHello(servername, own.raw, compressionAlgorithms);
  return new Promise((resolve, reject) => {
    socket.once('close', () => resolve(socket));
    socket.on('connect', () => socket.write(record(kHandshake, hello)));
    readFirstHandshakeMessage(socket, (reply) => {
      let keys;
      try {
        keys = handshakeKeys('c hs traffic', x25519Secret(own.privateKey, parseServerHello(reply)),
                             Buffer.concat([hello, reply]));
      } catch (err) {
        socket.destroy();
        reject(err);
        return;
      }
      socket.write(Buffer.concat([
        record(kChangeCipherSpec, Buffer.from([1])),
        encryptHandshake(keys, Buffer.concat(forge())),
      ]));
      socket.forged = true;
      resolve(socket);
    });
  });
}

// Listens on 127.0.0.1. For each connection, a whole handshake: the
// certificate `certDer`, a CertificateVerify (rsa_pss_rsae_sha256) made
// with `keyPem`, Finished; then, in the same write, the records that
// `after(records)` returns, under the server's application traffic key and
// so before the client's Finished can have arrived (0.5-RTT). `records`
// makes them: data(bytes) (in records of at most 16 KiB), ticket(lifetime)
// (a NewSessionTicket this server never takes back), alert(level,
// description). What the client sends is read and dropped.
function startFinishingServer(certDer, keyPem, after) {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    readFirstHandshakeMessage(socket, (hello) => {
      const { sessionId, share } = parseClientHello(hello);
      const own = x25519KeyPair();
      const reply = serverHello(sessionId, own.raw);
      const handshakeSecret = handshakeSecretOf(x25519Secret(own.privateKey, share));
      const serverTraffic = expandLabel(handshakeSecret, 's hs traffic', sha256(Buffer.concat([hello, reply])), 32);
      const messages = [
        handshakeMessage(HandshakeType.encryptedExtensions, u16(0)),
        handshakeMessage(HandshakeType.certificate, Buffer.concat([
          Buffer.from([0]), u24(3 + certDer.length + 2), u24(certDer.length), certDer, u16(0)])),
      ];
      const transcript = () => sha256(Buffer.concat([hello, reply, ...messages]));
      const signed = Buffer.concat([
        Buffer.alloc(64, 0x20), Buffer.from('TLS 1.3, server CertificateVerify\0', 'latin1'), transcript()]);
      const signature = crypto.sign('sha256', signed, {
        key: keyPem, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32,
      });
      messages.push(handshakeMessage(HandshakeType.certificateVerify,
                                     Buffer.concat([u16(kRsaPssRsaeSha256), vector16(signature)])));
      const finishedKey = expandLabel(serverTraffic, 'finished', Buffer.alloc(0), 32);
      messages.push(handshakeMessage(HandshakeType.finished,
                                     crypto.createHmac('sha256', finishedKey).update(transcript()).digest()));
      const master = hkdfExtract(expandLabel(handshakeSecret, 'derived', sha256(Buffer.alloc(0)), 32),
                                 Buffer.alloc(32));
      const keys = trafficKeys(expandLabel(master, 's ap traffic', transcript(), 32));
      let tickets = 0;
      const records = {
        data: (text) => {
          const bytes = Buffer.from(text);
          const out = [];
          for (let at = 0; at < bytes.length; at += kMaxFragment) {
            out.push(seal(keys, kApplicationData, bytes.subarray(at, at + kMaxFragment)));
          }
          return Buffer.concat(out);
        },
        ticket: (lifetime) => {
          const body = Buffer.alloc(8);
          body.writeUInt32BE(lifetime, 0);
          body.writeUInt32BE(crypto.randomBytes(4).readUInt32BE(0), 4);
          const nonce = vector8(Buffer.from([tickets++]));
          const ticket = vector16(crypto.randomBytes(32));
          return seal(keys, kHandshake,
                      handshakeMessage(HandshakeType.newSessionTicket, Buffer.concat([body, nonce, ticket, u16(0)])));
        },
        alert: (level, description) => seal(keys, kAlert, Buffer.from([level, description])),
      };
      socket.write(Buffer.concat([
        record(kHandshake, reply),
        record(kChangeCipherSpec, Buffer.from([1])),
        encryptHandshake(trafficKeys(serverTraffic), Buffer.concat(messages)),
        ...after(records),
      ]));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

module.exports = { startForgedServer, startFinishingServer, forgedClient, handshakeMessage, HandshakeType, u16, u24 };
