// Giving a Buffer's memory back the moment its owner is done with it.
//
// V8 frees an ArrayBuffer's memory only when its sweeper finds the buffer
// dead, and counts it as external memory until then. A stream that makes a
// fresh copy of every chunk it writes (node's JSStream, which node:http2 puts
// around a tlswrap socket) leaves the copies for the sweeper: on a download
// that was 30-80 MiB more peak RSS, cold memory for every memcpy and, on
// Node 24, a dozen major GCs a run forced by the external-memory limit. Detaching
// an ArrayBuffer drops V8's hold on its backing store, so the memory is
// freed at once and malloc hands the same warm block to the next copy.
#ifndef TLSWRAP_BINDING_BUFFER_RELEASE_H_
#define TLSWRAP_BINDING_BUFFER_RELEASE_H_

#include <napi.h>

namespace tlswrap {

// releaseArrayBuffers(list): detaches each ArrayBuffer of `list` (an Array).
// Only for buffers nothing else can still read: every view of a detached
// buffer reads as empty. Entries already detached are skipped; anything
// that is not an ArrayBuffer is a TypeError (ERR_INVALID_ARG_TYPE).
Napi::Value ReleaseArrayBuffers(const Napi::CallbackInfo& info);

}  // namespace tlswrap

#endif  // TLSWRAP_BINDING_BUFFER_RELEASE_H_
