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
// once the ticks and microtasks queued meanwhile have run (no read can come
// before, so the socket keeps flowing).
//
// GOAWAY is cut off too, from the frames before it in the chunk, and fed
// from an immediate, the TLS socket paused meanwhile. Over node:tls each record reaches nghttp2
// in its own read, with the tick queue run after each callback into JS: the
// events of the frames before a GOAWAY (a stream's 'end', then its 'close',
// which come on ticks) are out before the session's 'goaway', and a session
// whose last stream has closed no longer reads, so the second GOAWAY a closing
// peer sends is not reported. Fed in one piece, 'goaway' came between the
// last stream's 'end' and 'close', and twice from a server that close()s.
//
// The frame scan only decides where to cut: every byte is fed, in order,
// whatever it finds (a malformed stream is nghttp2's to refuse).

const kPreface = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", client to server
const kHeaders = 0x1;
const kPushPromise = 0x5;
const kGoaway = 0x7;
const kContinuation = 0x9;

class FrameScan {
  constructor(isServer) {
    this.preface = isServer ? kPreface : 0;
    this.headerFill = 0; // bytes of the 9-byte frame header seen
    this.length = 0;
    this.type = 0;
    this.left = 0; // payload bytes still to come
    this.previousType = -1; // of the last whole frame
    this.beforeGoaway = false; // whether the last cut was in front of a GOAWAY
    this.headersEnded = false; // whether those bytes end a HEADERS, PUSH_PROMISE or CONTINUATION
  }

  // The offset in `chunk`, from `start`, just past the first frame that opens
  // a stream and has bytes after it in the chunk, or at the start of a GOAWAY
  // frame that has bytes before it; chunk.length if none.
  cut(chunk, start) {
    const end = chunk.length;
    let i = start;
    this.beforeGoaway = false;
    this.headersEnded = false;
    while (i < end) {
      if (this.preface > 0) {
        const take = Math.min(this.preface, end - i);
        this.preface -= take;
        i += take;
        continue;
      }
      // A GOAWAY right behind another is not cut off: two GOAWAYs in one
      // record reach nghttp2 in one read over node:tls, and both are
      // reported. Record boundaries are lost in a decrypted chunk, though:
      // node:http2's respond({ endStream }) then close(), both from an
      // immediate, sends them in two records, and node's client reports
      // only the first; this one reports both. (A header split across
      // chunks is not looked at: its GOAWAY then starts a chunk of its own,
      // or comes with its first bytes.)
      if (this.headerFill === 0 && i > start && i + 3 < end && chunk[i + 3] === kGoaway &&
          this.previousType !== kGoaway) {
        this.beforeGoaway = true;
        return i;
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
        if (opens || this.type === kContinuation) this.headersEnded = true;
        this.previousType = this.type;
        this.headerFill = 0;
        this.length = 0;
        if (opens && i < end) {
          this.beforeGoaway = i + 3 < end && chunk[i + 3] === kGoaway;
          return i;
        }
      }
    }
    return end;
  }
}

const kScan = Symbol('tlswrap.h2.scan');
const kPending = Symbol('tlswrap.h2.pending');
const kFeed = Symbol('tlswrap.h2.feed');
const kReading = Symbol('tlswrap.h2.reading');
const kAfterPending = Symbol('tlswrap.h2.afterPending');
const kInRead = Symbol('tlswrap.h2.inRead');
const kAfterHeaders = Symbol('tlswrap.h2.afterHeaders');

// `wrapper`: a JSStreamSocket over `tls`, whose constructor just added
// `nodeOnData` (node's own 'data' listener, which hands a chunk to nghttp2):
// it is replaced by one that paces the chunks. `nodeOnEnd` and `nodeOnClose`
// (node's listeners that pass the TLS socket's end to nghttp2 and destroy the
// wrapper with it; null if not found) are held until the chunks held back
// have been fed: a paused socket whose buffer is empty still emits 'end' and
// 'close', and the end of the connection would overtake its last frames.
// `afterHeaders(wrapper)` (or null) runs on the tick after each chunk that
// ends a header block is fed, ahead of the ticks nghttp2 queued meanwhile
// (the 'stream' event).
function paceInput(wrapper, tls, nodeOnData, nodeOnEnd, nodeOnClose, afterHeaders = null) {
  wrapper[kScan] = new FrameScan(!!tls._tlsOptions.isServer);
  wrapper[kAfterHeaders] = afterHeaders;
  wrapper[kPending] = null;
  wrapper[kAfterPending] = [];
  wrapper[kFeed] = nodeOnData;
  wrapper[kReading] = true;
  tls.removeListener('data', nodeOnData);
  tls.on('data', (chunk) => {
    if (wrapper[kPending] !== null) wrapper[kPending].push(chunk);
    else feed(wrapper, chunk);
  });
  for (const [event, listener] of [['end', nodeOnEnd], ['close', nodeOnClose]]) {
    if (listener === null) continue;
    tls.removeListener(event, listener);
    tls.once(event, (...args) => {
      if (wrapper[kPending] !== null) wrapper[kAfterPending].push(() => listener.apply(tls, args));
      else listener.apply(tls, args);
    });
  }
}

// Node's listener, with the wrapper marked as reading header blocks
// meanwhile: nghttp2 writes what a chunk provoked before returning, and the
// handlers of the streams it opened run after that (see inRead).
function feedNode(wrapper, chunk, headers) {
  if (headers && wrapper[kAfterHeaders] !== null) process.nextTick(wrapper[kAfterHeaders], wrapper);
  wrapper[kInRead] = headers;
  try {
    wrapper[kFeed](chunk);
  } finally {
    wrapper[kInRead] = false;
  }
}

function feed(wrapper, chunk) {
  // Strings and object-mode chunks are node's listener's to refuse.
  const cut = Buffer.isBuffer(chunk) ? wrapper[kScan].cut(chunk, 0) : chunk.length;
  const headers = Buffer.isBuffer(chunk) && wrapper[kScan].headersEnded;
  if (cut === chunk.length) {
    feedNode(wrapper, chunk, headers);
    return;
  }
  feedNode(wrapper, chunk.subarray(0, cut), headers);
  wrapper[kPending] = [chunk.subarray(cut)];
  if (wrapper[kScan].beforeGoaway) {
    // I/O runs before the immediate: what arrives meanwhile stays in the
    // socket's buffer.
    wrapper.stream.pause();
    setImmediate(feedPendingNT, wrapper);
  } else {
    // No read can come before the tick queue has drained, so the socket is
    // left flowing.
    process.nextTick(feedPendingLaterNT, wrapper);
  }
}

// Over node:tls the tick queue and then the microtasks run after each frame
// nghttp2 reports: a promise that the frame's event (a stream's 'response')
// resolved has its continuation run before the next frame is read, so
// `await once(req, 'response')` can still listen for that stream's 'end'.
// The rest is fed after the ticks queued so far and the microtasks they
// queue.
function feedPendingLaterNT(wrapper) {
  queueMicrotask(() => feedPendingNT(wrapper));
}

function feedPendingNT(wrapper) {
  const pending = wrapper[kPending];
  wrapper[kPending] = null;
  while (pending.length > 0 && wrapper._handle !== null) {
    feed(wrapper, pending.shift());
    if (wrapper[kPending] !== null) {
      wrapper[kPending].push(...pending);
      return;
    }
  }
  const after = wrapper[kAfterPending];
  wrapper[kAfterPending] = [];
  for (const listener of after) listener();
  // Paused here for a GOAWAY, or by nghttp2 while the rest waited (whose
  // start was then put off).
  if (wrapper._handle !== null && wrapper[kReading] && wrapper.stream.isPaused()) wrapper.stream.resume();
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

// Whether nghttp2 is reading a chunk of `wrapper`'s that ends a header block
// (a request) now: a write it makes meanwhile answers that input (a SETTINGS
// ACK, say) before the 'stream' handlers of the same input have run.
function inRead(wrapper) {
  return wrapper[kInRead] === true;
}

// Whether part of what was read waits to be fed (a chunk cut after a HEADERS).
function inputHeld(wrapper) {
  return wrapper[kPending] !== null && wrapper[kPending] !== undefined;
}

module.exports = { FrameScan, inRead, inputHeld, paceInput, readStart, readStop };
