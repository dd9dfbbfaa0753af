'use strict';

// `node --expose-gc destroy-gc.js NAME`: runs destroy scenario NAME (see
// destroy-scenarios.js), then checks that the native handle of the socket
// destroyed inside its handler can be garbage collected: nothing (a strong
// self-reference kept by a release that never happened) holds it any more.
// Prints {"collected": bool} as its last line.

const { setImmediate: tick } = require('node:timers/promises');
const { scenarios } = require('./destroy-scenarios');

async function main() {
  const name = process.argv[2];
  if (!scenarios[name]) throw new Error(`no scenario ${name}`);
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  let handle;
  {
    const { rec } = await scenarios[name]();
    handle = rec.handle;
  }
  if (!handle) throw new Error('the scenario destroyed no socket that had a handle');
  for (let i = 0; i < 20 && handle.deref() !== undefined; i++) {
    await tick();
    gc();
  }
  process.stdout.write(`${JSON.stringify({ collected: handle.deref() === undefined })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
