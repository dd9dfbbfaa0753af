'use strict';

// How ciphertext a transport read reaches the engine, whichever transport
// read it (lib/transport.js).

// Ciphertext for the engine (null: EOF). As node:tls throws a listener's
// exception back to the JS stream that fed it (readBuffer()), receive()
// throws it before the rest of its batch is delivered; the rest comes on
// the next tick, once this caller has seen it.
function feed(handle, chunk) {
  try {
    if (chunk === null) handle.receiveEOF();
    else handle.receive(asBytes(chunk));
  } catch (err) {
    process.nextTick(finishBatchNT, handle);
    throw err;
  }
}
// A Duplex's chunk as the engine reads it: a Buffer or typed array as it is,
// and what node:tls's JS stream also takes: a string (UTF-8), a DataView, an
// ArrayBuffer.
function asBytes(chunk) {
  if (ArrayBuffer.isView(chunk) && !(chunk instanceof DataView)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof DataView) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(chunk);
}
function finishBatchNT(handle) {
  handle.finishBatch();
}

module.exports = { feed };
