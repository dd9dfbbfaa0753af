'use strict';

// The binding reads Buffers, and a program may hand any ArrayBufferView (a
// Uint8Array, a DataView): a Buffer over the same bytes, not a copy.
function bufferOf(view) {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

module.exports = { bufferOf };
