'use strict';

// Server-to-client TLS throughput, one measurement per process.
//
//   node benchmark/throughput-s2c.js [impl=tlswrap] [tlsVersion=TLSv1.3]
//     [fragment=16384] [sendchunklen=16777216] [recvbuflen=0] [type=buf]
//     [dur=5] [cipher=AES-256-GCM] [warmup=0.5] [alloc=1]
//
// Server and client live in this one process on 127.0.0.1 (the shape of
// Node's benchmark/tls/throughput-s2c.js), both using the same impl. The
// server writes `sendchunklen`-sized chunks for as long as backpressure
// allows, in records of at most `fragment` bytes (setMaxSendFragment). The
// client counts plaintext bytes.
//
// Timing: the window opens `warmup` seconds after the client's first byte
// (so JIT warm-up and TCP window growth are not measured) and lasts `dur`
// seconds, measured with hrtime rather than trusted from the timer. CPU and GC
// are for that window; RSS peak is over the whole run. Prints one JSON line.
//
// Allocation (alloc=1): the ArrayBuffer bytes behind the plaintext the client
// is handed, per MiB delivered in the window. Every chunk's ArrayBuffer
// (buf.buffer) is counted once, by its byteLength, the first time any chunk
// backed by it arrives: a fresh allocation per chunk counts in full (with any
// space reserved beyond the chunk), a slab that backs many chunks counts once,
// and onread's own buffer, seen before the window, counts nothing. This is
// what those chunks add to process.memoryUsage().arrayBuffers; memory the
// impl allocates and frees inside (malloc, realloc, C++ buffers) is not seen.

const common = require('./common.js');

const { opts, tls } = common.setup({
  impl: 'tlswrap',
  tlsVersion: 'TLSv1.3',
  fragment: 16384,
  sendchunklen: 16 * common.MiB,
  recvbuflen: 0,
  type: 'buf',
  dur: 5,
  cipher: 'AES-256-GCM',
  warmup: 0.5,
  alloc: 1,
}, (o) => {
  // OpenSSL accepts max_send_fragment in [512, 16384].
  common.checkInt(o, 'fragment', 512, 16384);
  common.checkInt(o, 'sendchunklen', 2);
  common.checkInt(o, 'recvbuflen', 0);
  common.checkInt(o, 'alloc', 0, 1);
  if (!(o.dur > 0) || !(o.warmup >= 0)) throw new Error('dur must be > 0 and warmup >= 0');
});

// What the server writes. Strings are written as strings (as Node's benchmark
// does) so the string-to-bytes conversion inside write() is part of the cost.
let chunk;
let encoding;
switch (opts.type) {
  case 'buf':
    chunk = Buffer.alloc(opts.sendchunklen, 'b');
    break;
  case 'asc':
    chunk = 'a'.repeat(opts.sendchunklen);
    encoding = 'ascii';
    break;
  case 'utf':
    // 'ü' is two bytes in UTF-8, so the chunk is still sendchunklen bytes.
    chunk = '\u00fc'.repeat(Math.floor(opts.sendchunklen / 2));
    encoding = 'utf8';
    break;
  default:
    common.fail(new Error(`type must be buf, asc or utf, got "${opts.type}"`));
}

const monitor = common.createMonitor();
const { server: serverOpts, client: clientOpts } = common.tlsOptions(opts.tlsVersion, opts.cipher);

let finished = false; // after this, errors are teardown noise, not failures
const serverSockets = new Set();

const server = tls.createServer(serverOpts, (socket) => {
  serverSockets.add(socket);
  socket.on('close', () => serverSockets.delete(socket));
  socket.on('error', (err) => {
    if (!finished) common.fail(err);
  });
  if (socket.setMaxSendFragment(opts.fragment) !== true) {
    common.fail(new Error(`setMaxSendFragment(${opts.fragment}) failed`));
  }
  // Write as fast as backpressure allows: until write() says stop, then
  // resume on 'drain'. With 16 MiB chunks that is one chunk per drain.
  const pump = () => {
    while (!finished && !socket.destroyed) {
      if (!socket.write(chunk, encoding)) {
        socket.once('drain', pump);
        return;
      }
    }
  };
  pump();
});
server.on('tlsClientError', (err) => common.fail(err));
server.on('error', (err) => common.fail(err));

// Allocation accounting, see the top of this file. A WeakSet so that
// counting keeps no chunk alive.
const seenBuffers = new WeakSet();
let counting = false; // inside the timed window
let allocBytes = 0;
let chunks = 0;
function account(buf) {
  const ab = buf.buffer;
  // A chunk that is all of its ArrayBuffer is a fresh one: an impl may not
  // hand out again memory that a 'data' listener may keep. Skipping the
  // WeakSet here keeps the accounting from costing 25-30 % at 1 KiB records
  // (a WeakSet insert per chunk, and the GC work of a large weak table).
  if (counting && buf.byteOffset === 0 && buf.length === ab.byteLength && opts.recvbuflen === 0) {
    allocBytes += ab.byteLength;
    return;
  }
  if (seenBuffers.has(ab)) return;
  seenBuffers.add(ab);
  if (counting) allocBytes += ab.byteLength;
}

server.listen(0, '127.0.0.1', () => {
  let bytes = 0;
  let started = false;
  let cipherSuite;

  const onBytes = (n) => {
    bytes += n;
    if (!started) {
      started = true;
      clearTimeout(noDataTimer);
      setTimeout(begin, opts.warmup * 1000);
    }
  };

  const connectOpts = { ...clientOpts, port: server.address().port };
  if (opts.recvbuflen > 0) {
    // Zero-allocation read path: data is decrypted into this one buffer.
    const buffer = Buffer.alloc(opts.recvbuflen);
    if (opts.alloc) seenBuffers.add(buffer.buffer);
    connectOpts.onread = {
      buffer,
      // The second argument is the buffer the data is in: counted, so an impl
      // that hands out another one is seen to allocate.
      callback: opts.alloc
        ? (nread, buf) => {
          chunks++;
          if (buf) account(buf);
          onBytes(nread);
        }
        : (nread) => {
          chunks++;
          onBytes(nread);
        },
    };
  }
  const client = tls.connect(connectOpts, () => {
    // Guard against an impl that ignores minVersion/maxVersion or ciphers:
    // the result would silently describe a different configuration.
    const protocol = client.getProtocol();
    if (protocol !== opts.tlsVersion) {
      common.fail(new Error(`negotiated ${protocol}, asked for ${opts.tlsVersion}`));
    }
    const c = client.getCipher();
    cipherSuite = c && (c.standardName || c.name);
  });
  if (opts.recvbuflen === 0) {
    client.on('data', opts.alloc
      ? (buf) => {
        chunks++;
        account(buf);
        onBytes(buf.length);
      }
      : (buf) => {
        chunks++;
        onBytes(buf.length);
      });
  }
  client.on('error', (err) => {
    if (!finished) common.fail(err);
  });
  client.on('close', () => {
    if (!finished) common.fail(new Error('client closed before the measurement ended'));
  });

  // If nothing arrives, fail instead of hanging the caller.
  const noDataTimer = setTimeout(() => common.fail(new Error('no data received within 15 s')), 15000);

  let startBytes;
  let startTime;
  let startChunks;
  function begin() {
    startBytes = bytes;
    startChunks = chunks;
    counting = true;
    startTime = process.hrtime.bigint();
    monitor.begin();
    setTimeout(end, opts.dur * 1000);
  }

  function end() {
    const elapsed = Number(process.hrtime.bigint() - startTime) / 1e9;
    const got = bytes - startBytes;
    counting = false;
    const res = monitor.end();
    finished = true;

    const result = {
      bench: 'throughput-s2c',
      impl: opts.impl,
      tlsVersion: opts.tlsVersion,
      fragment: opts.fragment,
      sendchunklen: opts.sendchunklen,
      recvbuflen: opts.recvbuflen,
      type: opts.type,
      dur: opts.dur,
      cipher: opts.cipher,
      mibps: common.round(got / common.MiB / elapsed, 2),
      bytes: got,
      elapsed: common.round(elapsed, 3),
      chunks: chunks - startChunks,
      // KiB of ArrayBuffers per MiB delivered (null with alloc=0).
      allocKiBPerMiB: opts.alloc && got > 0 ? common.round(allocBytes / 1024 / (got / common.MiB), 2) : null,
      allocBytes: opts.alloc ? allocBytes : null,
      ...res,
      cipherSuite,
      ...common.runtimeInfo(),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);

    // Tear down so the process exits by itself; a handle that keeps it alive
    // is an impl bug worth surfacing (exit code 3), though the result stands.
    client.destroy();
    for (const s of serverSockets) s.destroy();
    server.close();
    setTimeout(() => {
      process.stderr.write('warning: process did not exit by itself within 2 s of the result\n');
      process.exit(3);
    }, 2000).unref();
  }
});
