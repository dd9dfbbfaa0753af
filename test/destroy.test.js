'use strict';

// destroy() from inside an event handler ('data', 'session', 'keylog',
// 'secureConnect' on the client; 'data', 'secure', 'secureConnection',
// 'keylog' on the server): after it, no 'data', 'end', 'session', 'keylog'
// (nor 'secureConnect', 'error'), one 'close', no crash. Then the same
// scenario in a child process, which must exit by itself with code 0.
//
// This pins tlswrap's invariant 2 (nothing leaves the engine once destroy()
// is asked for, even with OpenSSL on the stack). node:tls does not keep it
// for 'keylog' and TLS 1.3 'session' (it emits the rest of the lines/tickets
// it is processing), nor for 'server ALPNCallback' (destroy() with OpenSSL
// on the stack: node:tls still emits the handshake's keylog lines): those
// skip under TLSWRAP_TEST_BUILTIN.

const assert = require('node:assert');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { scenarios, check } = require('./child/destroy-scenarios');

const SCRIPT = path.join(__dirname, 'child', 'destroy-scenarios.js');
const CHILD_LIMIT_MS = 10000;

// Runs one scenario in a fresh node process. Resolves with its exit code and
// how long it took; a child still running after the limit is killed and
// reported as such.
function runChild(name) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [SCRIPT, name], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => { stderr += text; });
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_LIMIT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: Date.now() - started, stderr });
    });
  });
}

const nodeEmitsAfterDestroy = new Set(['client session', 'client keylog', 'server ALPNCallback', 'server keylog']);

describe('destroy() inside event handlers', function () {
  const { builtin } = require('./common');
  for (const name of Object.keys(scenarios)) {
    it(`${name}: nothing after destroy(), one close`, async function () {
      if (builtin && nodeEmitsAfterDestroy.has(name)) this.skip();
      const { rec, who } = await scenarios[name]();
      check(rec, who);
    });
  }
});

describe('destroy() inside event handlers, in a child process', function () {
  for (const name of Object.keys(scenarios)) {
    it(`${name}: the process exits by itself with code 0`, async function () {
      const { code, signal, ms, stderr } = await runChild(name);
      assert.strictEqual(signal, null, `child did not exit within ${CHILD_LIMIT_MS} ms (lingering handle?)`);
      assert.strictEqual(code, 0, `child exited with ${code}: ${stderr}`);
      assert.ok(ms < CHILD_LIMIT_MS);
    });
  }
});

// tlswrap's promise that the native object is freed once destroyed (no
// self-reference left behind, from a handler or from under OpenSSL); node:tls
// frees its handle too, so this holds on builtin.
describe('destroy() inside event handlers frees the native handle (child process, --expose-gc)', function () {
  const { runChild, describeExit } = require('./run-child');
  for (const name of Object.keys(scenarios)) {
    it(`${name}: the handle object is garbage collected`, async function () {
      const run = await runChild('destroy-gc.js', [name], { limitMs: CHILD_LIMIT_MS, nodeArgs: ['--expose-gc'] });
      assert.ok(run.code === 0 && run.result, describeExit(run));
      assert.strictEqual(run.result.collected, true, 'the TLSWrap handle is still alive after destroy() and gc()');
    });
  }
});

describe('a listener that throws (the process has an uncaughtException handler)', function () {
  const { runChild, describeExit } = require('./run-child');

  // node:tls closes the connection (the peer sees ECONNRESET) and keeps
  // nothing; the exception must not skip the teardown destroy() asked for.
  it("destroy() then throw in 'data': 'close', the peer sees the connection end, no socket fd left", async function () {
    this.timeout(30000);
    const run = await runChild('throwing-listener.js', ['destroy then throw']);
    assert.ok(run.code === 0 && run.result, describeExit(run));
    const r = run.result;
    assert.deepStrictEqual(r.uncaught, ['thrown by a data listener']);
    assert.deepStrictEqual(r.events, ['close']);
    assert.notStrictEqual(r.peerSaw, 'timeout', 'the peer never saw the connection close: the engine kept it open');
    assert.strictEqual(r.socketFdsLeft, 0, 'socket fds still open after everything was closed');
  });
});

// tlswrap's own: node:tls's handle asserts (aborts the process) on some of
// these calls, so this skips itself there.
describe('the native handle kept past destroy() (tlsSocket.ssl)', function () {
  const { runChild, describeExit } = require('./run-child');
  const { builtin } = require('./common');

  it('every method, with arguments of several shapes, throws or returns: no crash', async function () {
    if (builtin) this.skip();
    const run = await runChild('handle-after-destroy.js');
    assert.ok(run.code === 0 && run.result, describeExit(run));
    assert.ok(run.result.methods >= 60, `only ${run.result.methods} methods found on the handle`);
  });
});
