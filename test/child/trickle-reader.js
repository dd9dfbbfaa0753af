'use strict';

// A tlswrap client that connects to 127.0.0.1:PORT, writes 'go' and reads
// EXPECTED bytes, printing one JSON line with how many bytes of ArrayBuffers
// it allocated meanwhile. Run by test/memory.test.js, whose server side
// trickles the records one byte at a time; in a process of its own so that
// only the reader's allocations count.
//
// The count is the sum of the increases of process.memoryUsage().arrayBuffers
// between samples taken on every turn of the event loop: an allocation that
// GC frees before the next sample is missed, so it can only under-count.

const { tlswrap, clientOptions } = require('../common');

const port = Number(process.argv[2]);
const expected = Number(process.argv[3]);

const client = tlswrap.connect(clientOptions(port));
let received = 0;
let allocated = 0;
let last = 0;
let measuring = false;

function sample() {
  const now = process.memoryUsage().arrayBuffers;
  if (measuring && now > last) allocated += now - last;
  last = now;
}

function spin() {
  sample();
  if (measuring) setImmediate(spin);
}

client.on('secureConnect', () => {
  client.write('go');
  sample();
  measuring = true;
  setImmediate(spin);
});

client.on('data', (chunk) => {
  sample();
  received += chunk.length;
  if (received < expected) return;
  measuring = false;
  process.stdout.write(`${JSON.stringify({ received, allocated })}\n`);
  client.destroy();
});

client.on('error', (err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
