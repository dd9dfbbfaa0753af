'use strict';

// HTTP/2 input fed to nghttp2 one stream at a time, as node:http2 gets it
// over node:tls.
//
// Over its own TLS socket, nghttp2 is called from C++, and each stream it
// opens reaches JS through a callback whose end runs the tick queue: the
// 'stream' event (emitted on a tick) and the handler's response run before
// the next HEADERS frame is read, and node's session memory check
// (maxSessionMemory) sees each response queued before it admits the next
// stream. Over a JS stream wrapper, a whole chunk is read inside one JS call:
// every stream in it is admitted before any handler runs. A client that
// sends a burst of requests (a 64 KiB chunk holds about 2,800 HEADERS
// frames) and never reads made the server queue all their responses, past
// maxSessionMemory by hundreds of MiB. So a chunk is cut after each HEADERS
// (or PUSH_PROMISE) frame that has more bytes behind it, and the rest is fed
// on the next tick, the TLS socket paused meanwhile.
//
// The frame scan only decides where to cut: every byte is fed, in order,
// whatever it finds (a malformed stream is nghttp2's to refuse).

const kPreface = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", client to server
const kHeaders = 0x1;
const kPushPromise = 0x5;

class FrameScan {
  constructor(isServer) {
    this.preface = isServer ? kPreface : 0;
    this.headerFill = 0; // bytes of the 9-byte frame header seen
    this.length = 0;
    this.type = 0;
    this.left = 0; // payload bytes still to come
  }

  // The offset in `chunk`, from `start`, just past the first frame that opens
  // a stream and has bytes after it in the chunk; chunk.length if none.
  cut(chunk, start) {
    const end = chunk.length;
    let i = start;
    while (i < end) {
      if (this.preface > 0) {
        const take = Math.min(this.preface, end - i);
        this.preface -= take;
        i += take;
        continue;
      }
      if (this.headerFill < 9) {
        const byte = chunk[i++];
        if (this.headerFill < 3) this.length = (this.length << 8) | byte;
        else if (this.headerFill === 3) this.type = byte;
        if (++this.headerFill < 9) continue;
        this.left = this.length;
      } else {
        const take = Math.min(this.left, end - i);
        this.left -= take;
        i += take;
      }
      if (this.left === 0) {
        const opens = this.type === kHeaders || this.type === kPushPromise;
        this.headerFill = 0;
        this.length = 0;
        if (opens && i < end) return i;
      }
    }
    return end;
  }
}

const kScan = Symbol('tlswrap.h2.scan');
const kPending = Symbol('tlswrap.h2.pending');
const kFeed = Symbol('tlswrap.h2.feed');
const kReading = Symbol('tlswrap.h2.reading');

// `wrapper`: a JSStreamSocket over `tls`, whose constructor just added
// `nodeOnData` (node's own 'data' listener, which hands a chunk to nghttp2):
// it is replaced by one that paces the chunks.
function paceInput(wrapper, tls, nodeOnData) {
  wrapper[kScan] = new FrameScan(!!tls._tlsOptions.isServer);
  wrapper[kPending] = null;
  wrapper[kFeed] = nodeOnData;
  wrapper[kReading] = true;
  tls.removeListener('data', nodeOnData);
  tls.on('data', (chunk) => {
    if (wrapper[kPending] !== null) wrapper[kPending].push(chunk);
    else feed(wrapper, chunk);
  });
}

function feed(wrapper, chunk) {
  // Strings and object-mode chunks are node's listener's to refuse.
  const cut = Buffer.isBuffer(chunk) ? wrapper[kScan].cut(chunk, 0) : chunk.length;
  if (cut === chunk.length) {
    wrapper[kFeed](chunk);
    return;
  }
  wrapper[kFeed](chunk.subarray(0, cut));
  wrapper[kPending] = [chunk.subarray(cut)];
  wrapper.stream.pause();
  process.nextTick(feedPendingNT, wrapper);
}

function feedPendingNT(wrapper) {
  const pending = wrapper[kPending];
  wrapper[kPending] = null;
  while (pending.length > 0) {
    if (wrapper._handle === null) return;
    feed(wrapper, pending.shift());
    if (wrapper[kPending] !== null) {
      wrapper[kPending].push(...pending);
      return;
    }
  }
  if (wrapper[kReading]) wrapper.stream.resume();
}

// nghttp2's own flow control (JSStreamSocket's readStart/readStop): a start
// while a cut chunk waits is put off until it has been fed.
function readStart(wrapper) {
  wrapper[kReading] = true;
  // Not paced (yet, in JSStreamSocket's constructor; or on a Node whose
  // wrapper was left as it is): the start is node's as usual.
  return !wrapper[kPending];
}
function readStop(wrapper) {
  wrapper[kReading] = false;
}

module.exports = { FrameScan, paceInput, readStart, readStop };
