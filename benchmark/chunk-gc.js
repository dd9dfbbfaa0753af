'use strict';

// What V8 does with the plaintext chunks a TLS layer hands out, without TLS:
// `total` bytes in `chunk`-sized Buffers that are dropped at once, a few per
// event-loop turn, allocated one of three ways. Counts major and minor GCs
// and peak RSS. This is how tlswrap chose to give each 'data' chunk a fresh
// Buffer (see PERFORMANCE.md, "Memory of delivered chunks").
//
//   node benchmark/chunk-gc.js [strategy=fresh] [chunk=65536] [total=4294967296]
//     [slab=1048576] [garbage=0]
//
// strategy: fresh (one Buffer per chunk, as napi_create_buffer gives),
//           slab (views into a shared ArrayBuffer of `slab` bytes, a new one
//           when full), copy (Buffer.from of a reused scratch Buffer).
// garbage:  bytes of small JS objects made per chunk besides, standing in for
//           the per-record JavaScript of a layer that calls JS per record.

const { PerformanceObserver, constants } = require('node:perf_hooks');
const common = require('./common.js');

const opts = common.parseArgs({ strategy: 'fresh', chunk: 65536, total: 4 * 1024 ** 3, slab: 1024 * 1024, garbage: 0 });
if (!['fresh', 'slab', 'copy'].includes(opts.strategy)) common.fail(new Error(`unknown strategy ${opts.strategy}`));

let major = 0;
let minor = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
    else if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
  }
}).observe({ entryTypes: ['gc'] });

const scratch = Buffer.alloc(opts.chunk, 1);
let slab = null;
let slabOffset = 0;
let sink = 0;
let junk = null;

function next() {
  switch (opts.strategy) {
    case 'fresh':
      return Buffer.allocUnsafeSlow(opts.chunk);
    case 'copy':
      return Buffer.from(scratch);
    default:
      if (slab === null || slabOffset + opts.chunk > opts.slab) {
        slab = new ArrayBuffer(opts.slab);
        slabOffset = 0;
      }
      slabOffset += opts.chunk;
      return Buffer.from(slab, slabOffset - opts.chunk, opts.chunk);
  }
}

let done = 0;
let peakRss = 0;
const start = process.hrtime.bigint();
function turn() {
  for (let i = 0; i < 8 && done < opts.total; i++) {
    const b = next();
    b[0] = 1;
    sink += b[0];
    done += b.length;
    for (let g = 0; g < opts.garbage; g += 64) junk = { a: g, b: [g, g, g] };
  }
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  if (done < opts.total) {
    setImmediate(turn);
    return;
  }
  setTimeout(() => {
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    process.stdout.write(`${JSON.stringify({
      bench: 'chunk-gc', ...opts, ms: Math.round(ms), majorGC: major, minorGC: minor,
      peakRssMiB: common.round(peakRss / common.MiB, 1), node: process.version, sink: sink > 0 && junk !== undefined,
    })}\n`);
  }, 20);
}
turn();
