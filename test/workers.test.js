'use strict';

// Worker threads: many TLS connections between workers, then workers that
// are terminate()d mid-transfer or call process.exit() with connections
// open. The process that hosts them must not crash or hang, and every fd the
// workers opened must be closed once they are gone. Runs in a child process
// (a crash or hang there fails the test, not mocha) that counts its own
// /proc/self/fd.

const assert = require('node:assert');
const fs = require('node:fs');
const { runChild, describeExit } = require('./run-child');

describe('worker threads', function () {
  this.timeout(30000);

  it('8 workers x 100 connections among themselves; terminate() and process.exit() mid-transfer: no crash, no fd left', async function () {
    if (!fs.existsSync('/proc/self/fd')) this.skip();
    const run = await runChild('workers-fd.js', [100], { limitMs: 25000 });
    assert.ok(run.code === 0 && run.result, describeExit(run));
    const { before, after, exits, errors } = run.result;
    assert.deepStrictEqual(errors, []);
    // terminate() ends a worker with code 1, process.exit(0) with 0.
    assert.deepStrictEqual(exits, [1, 1, 1, 0, 0, 0, 0, 0]);
    // Fewer is fine (node may close one of its own lazily); more is a leak.
    assert.ok(after <= before, `fds before the workers: ${before}, after: ${after}`);
  });
});
