'use strict';

// A TLS 1.3 client that resumes by PSK (RFC 8446 4.2.11) offering the
// identities in the order a test chooses, which OpenSSL's client never does
// (it puts its ticket first): an external identity with a binder that is
// never checked, then a ticket it holds the secret of. With node:crypto
// only. It runs the handshake to its Finished, so the server decides whether
// the client is authorized, and then goes.

const crypto = require('node:crypto');
const net = require('node:net');

const kHandshake = 22;
const kApplicationData = 23;
const kChangeCipherSpec = 20;
const kX25519 = 0x001d;
const kSuites = {
  0x1301: { hash: 'sha256', size: 32, cipher: 'aes-128-gcm', keyLength: 16 },
  0x1302: { hash: 'sha384', size: 48, cipher: 'aes-256-gcm', keyLength: 32 },
};

const u16 = (n) => Buffer.from([n >> 8, n & 0xff]);
const u32 = (n) => Buffer.from([n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
const vector8 = (body) => Buffer.concat([Buffer.from([body.length]), body]);
const vector16 = (body) => Buffer.concat([u16(body.length), body]);
const extension = (type, body) => Buffer.concat([u16(type), vector16(body)]);
const record = (type, body) => Buffer.concat([Buffer.from([type, 3, 3]), vector16(body)]);
const handshakeMessage = (type, body) =>
  Buffer.concat([Buffer.from([type, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff]), body]);

// The fields of a client's DER SSL_SESSION this needs: the suite, the
// resumption PSK (OpenSSL keeps it as the master key) and the ticket.
function sessionParts(der) {
  const items = [];
  let at = 2 + ((der[1] & 0x80) ? der[1] & 0x7f : 0);
  while (at < der.length) {
    let length = der[at + 1];
    let header = 2;
    if (length & 0x80) {
      const n = length & 0x7f;
      length = der.readUIntBE(at + 2, n);
      header += n;
    }
    items.push({ tag: der[at], body: der.subarray(at + header, at + header + length) });
    at += header + length;
  }
  const ticketField = items.find((item) => item.tag === 0xaa).body; // [10] EXPLICIT OCTET STRING
  const ticketHeader = 2 + ((ticketField[1] & 0x80) ? ticketField[1] & 0x7f : 0);
  return { suite: items[2].body.readUInt16BE(0), psk: items[4].body, ticket: ticketField.subarray(ticketHeader) };
}

function keySchedule(suite) {
  const { hash, size } = kSuites[suite];
  const digest = (data) => crypto.createHash(hash).update(data).digest();
  const extract = (salt, ikm) => crypto.createHmac(hash, salt).update(ikm).digest();
  // HKDF-Expand-Label for outputs of at most one block.
  const expandLabel = (secret, label, context, length) => {
    const info = Buffer.concat([u16(length), vector8(Buffer.from(`tls13 ${label}`)), vector8(context)]);
    return crypto.createHmac(hash, secret).update(Buffer.concat([info, Buffer.from([1])])).digest()
      .subarray(0, length);
  };
  const derive = (secret, label, transcript) => expandLabel(secret, label, digest(transcript), size);
  const finished = (secret, transcript) =>
    crypto.createHmac(hash, expandLabel(secret, 'finished', Buffer.alloc(0), size)).update(digest(transcript)).digest();
  return { size, digest, extract, expandLabel, derive, finished };
}

function trafficKeys(suite, ks, secret) {
  const { cipher, keyLength } = kSuites[suite];
  return {
    cipher,
    key: ks.expandLabel(secret, 'key', Buffer.alloc(0), keyLength),
    iv: ks.expandLabel(secret, 'iv', Buffer.alloc(0), 12),
    sequence: 0,
  };
}

function nonceOf(keys) {
  const nonce = Buffer.from(keys.iv);
  nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ keys.sequence++) >>> 0, 8);
  return nonce;
}

function seal(keys, type, content) {
  const inner = Buffer.concat([content, Buffer.from([type])]);
  const header = Buffer.concat([Buffer.from([kApplicationData, 3, 3]), u16(inner.length + 16)]);
  const cipher = crypto.createCipheriv(keys.cipher, keys.key, nonceOf(keys));
  cipher.setAAD(header);
  return Buffer.concat([header, cipher.update(inner), cipher.final(), cipher.getAuthTag()]);
}

function open(keys, header, body) {
  const decipher = crypto.createDecipheriv(keys.cipher, keys.key, nonceOf(keys));
  decipher.setAAD(header);
  decipher.setAuthTag(body.subarray(body.length - 16));
  const inner = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
  let end = inner.length;
  while (end > 0 && inner[end - 1] === 0) end--;
  return { type: inner[end - 1], content: inner.subarray(0, end - 1) };
}

// The ClientHello: `identities` is [{ identity, binderSize, psk?, label? }];
// the binder of each one with a `psk` is real (made with `label`, 'res
// binder' by default), the others are zeros.
function clientHello(ks, suite, servername, share, identities) {
  const offered = vector16(Buffer.concat(identities.map((id) => Buffer.concat([vector16(id.identity), u32(0)]))));
  const binders = (list) => vector16(Buffer.concat(list.map((b) => vector8(b))));
  const random = crypto.randomBytes(32);
  const sessionId = crypto.randomBytes(32);
  const build = (list) => {
    const extensions = Buffer.concat([
      servername ? extension(0, vector16(Buffer.concat([Buffer.from([0]), vector16(Buffer.from(servername))])))
        : Buffer.alloc(0),
      extension(10, vector16(u16(kX25519))),
      extension(13, vector16(Buffer.concat([0x0804, 0x0403, 0x0401].map(u16)))),
      extension(43, vector8(u16(0x0304))),
      extension(51, vector16(Buffer.concat([u16(kX25519), vector16(share)]))),
      extension(45, vector8(Buffer.from([1]))), // psk_dhe_ke
      extension(41, Buffer.concat([offered, binders(list)])), // pre_shared_key, last
    ]);
    return handshakeMessage(1, Buffer.concat([
      u16(0x0303), random, vector8(sessionId), vector16(u16(suite)),
      vector8(Buffer.from([0])), vector16(extensions),
    ]));
  };
  const placeholders = identities.map((id) => Buffer.alloc(id.binderSize));
  const truncated = build(placeholders).subarray(0, -binders(placeholders).length);
  const real = identities.map((id, i) => {
    if (!id.psk) return placeholders[i];
    const binderKey = ks.derive(ks.extract(Buffer.alloc(ks.size), id.psk), id.label || 'res binder', Buffer.alloc(0));
    return ks.finished(binderKey, truncated);
  });
  return build(real);
}

// Resumes `session` (a client's DER) at 127.0.0.1:port behind an external
// identity `externalIdentity` whose binder is zeros; no server_name
// extension if `servername` is null. Resolves with the
// identity the server selected once the client's Finished is sent (the
// socket then ends), or rejects. `ticketLabel`: OpenSSL's server checks
// the binder of a ticket it takes after dropping an external identity it
// had a key for with that identity's label, 'ext binder'.
function resumeBehindIdentity(port, servername, session, externalIdentity, ticketLabel = 'ext binder') {
  const { suite, psk, ticket } = sessionParts(session);
  const ks = keySchedule(suite);
  const { privateKey, publicKey } = crypto.generateKeyPairSync('x25519');
  const share = Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url');
  const hello = clientHello(ks, suite, servername, share, [
    { identity: Buffer.from(externalIdentity), binderSize: 32 },
    { identity: ticket, binderSize: ks.size, psk, label: ticketLabel },
  ]);
  const socket = net.connect(port, '127.0.0.1');
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    let serverHello = null;
    let selected = -1;
    let transcript = hello;
    let keys = null;
    let secrets = null;
    let messages = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('closed before the handshake was done')));
    socket.on('connect', () => socket.write(record(kHandshake, hello)));
    socket.on('data', (data) => {
      buffered = Buffer.concat([buffered, data]);
      try {
        while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt16BE(3)) {
          const header = buffered.subarray(0, 5);
          const body = buffered.subarray(5, 5 + buffered.readUInt16BE(3));
          buffered = buffered.subarray(5 + body.length);
          if (header[0] === kChangeCipherSpec) continue;
          if (serverHello === null) {
            if (header[0] !== kHandshake || body[0] !== 2) throw new Error(`expected a ServerHello, got ${header[0]}`);
            serverHello = body;
            transcript = Buffer.concat([transcript, body]);
            let at = 4 + 2 + 32;
            at += 1 + body[at] + 2 + 1;
            const end = at + 2 + body.readUInt16BE(at);
            let peerShare = null;
            for (at += 2; at < end; at += 4 + body.readUInt16BE(at + 2)) {
              const value = body.subarray(at + 4, at + 4 + body.readUInt16BE(at + 2));
              if (body.readUInt16BE(at) === 41) selected = value.readUInt16BE(0);
              if (body.readUInt16BE(at) === 51) peerShare = value.subarray(4);
            }
            const peerKey = crypto.createPublicKey({
              key: { kty: 'OKP', crv: 'X25519', x: peerShare.toString('base64url') }, format: 'jwk',
            });
            const early = ks.extract(Buffer.alloc(ks.size), psk);
            const handshakeSecret = ks.extract(ks.derive(early, 'derived', Buffer.alloc(0)),
                                               crypto.diffieHellman({ privateKey, publicKey: peerKey }));
            secrets = {
              server: ks.derive(handshakeSecret, 's hs traffic', transcript),
              client: ks.derive(handshakeSecret, 'c hs traffic', transcript),
            };
            keys = trafficKeys(suite, ks, secrets.server);
            continue;
          }
          const { type, content } = open(keys, header, body);
          if (type !== kHandshake) throw new Error(`expected handshake records, got ${type}`);
          messages = Buffer.concat([messages, content]);
          while (messages.length >= 4 && messages.length >= 4 + messages.readUIntBE(1, 3)) {
            const message = messages.subarray(0, 4 + messages.readUIntBE(1, 3));
            messages = messages.subarray(message.length);
            transcript = Buffer.concat([transcript, message]);
            if (message[0] !== 20) continue;
            const finished = handshakeMessage(20, ks.finished(secrets.client, transcript));
            socket.removeAllListeners('close');
            socket.end(Buffer.concat([
              record(kChangeCipherSpec, Buffer.from([1])),
              seal(trafficKeys(suite, ks, secrets.client), kHandshake, finished),
            ]));
            resolve(selected);
            return;
          }
        }
      } catch (err) {
        socket.destroy();
        reject(err);
      }
    });
  });
}

module.exports = { resumeBehindIdentity };
