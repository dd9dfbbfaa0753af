'use strict';

// The record cipher alone, outside TLS: MiB/s sealing and opening in
// `piece`-byte updates (a full TLS record by default) of one AEAD context,
// in whatever runtime runs this script (node, or bun for its BoringSSL).
//
//   node benchmark/cipher.js [cipher=AES-256-GCM] [piece=65536] [dur=1]
//
// No TLS layer above a crypto library changes how fast that library's cipher
// code runs, so this is the part of a throughput gap between two runtimes
// that is theirs and not their TLS layers'. Each update returns a new Buffer
// in both runtimes, as a record layer writes into fresh output. Prints one
// JSON line; a cipher the runtime does not have gives `unsupported: true`
// (Bun's crypto has no ChaCha20-Poly1305).

const crypto = require('node:crypto');
const common = require('./common.js');

const NAMES = {
  'AES-256-GCM': { alg: 'aes-256-gcm', keyLen: 32 },
  'AES-128-GCM': { alg: 'aes-128-gcm', keyLen: 16 },
  'CHACHA20-POLY1305': { alg: 'chacha20-poly1305', keyLen: 32 },
};

let opts;
try {
  opts = common.parseArgs({ cipher: 'AES-256-GCM', piece: 65536, dur: 1 });
  if (!NAMES[opts.cipher]) throw new Error(`cipher must be one of ${Object.keys(NAMES).join(', ')}`);
  common.checkInt(opts, 'piece', 1);
  if (!(opts.dur > 0)) throw new Error('dur must be > 0');
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
}

const { alg, keyLen } = NAMES[opts.cipher];
const key = crypto.randomBytes(keyLen);
const iv = crypto.randomBytes(12);
const piece = crypto.randomBytes(opts.piece);

// Updates per second of `make()`'s context over `piece`, after a warm-up
// of a tenth of the time; the context is renewed every 64 MiB (GCM's limit
// per nonce is far above that, but a decipher's counter should not wrap).
function rate(make) {
  const perContext = Math.max(1, Math.floor((64 << 20) / opts.piece));
  const run = (seconds) => {
    const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
    let n = 0;
    let sink = 0;
    for (;;) {
      const ctx = make();
      for (let i = 0; i < perContext; i++) sink += ctx.update(piece).length;
      n += perContext;
      if (process.hrtime.bigint() >= end) break;
    }
    if (sink !== n * opts.piece) throw new Error(`the cipher returned ${sink} bytes for ${n * opts.piece}`);
    return n;
  };
  run(opts.dur / 10);
  const t0 = process.hrtime.bigint();
  const n = run(opts.dur);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return common.round((n * opts.piece) / s / common.MiB, 1);
}

const out = { bench: 'cipher', cipher: opts.cipher, piece: opts.piece, ...common.runtimeInfo() };
try {
  out.sealMiBps = rate(() => crypto.createCipheriv(alg, key, iv, { authTagLength: 16 }));
  out.openMiBps = rate(() => crypto.createDecipheriv(alg, key, iv, { authTagLength: 16 }));
} catch (err) {
  out.unsupported = true;
  out.error = err.message;
}
process.stdout.write(`${JSON.stringify(out)}\n`);
