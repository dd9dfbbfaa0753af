'use strict';

// enableTrace: the option (server and client), TLSSocket#enableTrace() and
// --trace-tls print OpenSSL's SSL_trace of every TLS message to stderr, as
// node:tls does; nothing is printed otherwise. Run in a child process whose
// stderr is captured.

const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { tlswrap, clientOptions } = require('./common');

const warning = 'Enabling --trace-tls can expose sensitive data in the resulting log.';

// The child's stderr goes to a file, not a pipe: the trace is written with
// stdio to fd 2, which a pipe node made non-blocking would cut short (with
// node:tls as much as with tlswrap).
async function trace(mode, nodeArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-trace-'));
  const file = path.join(dir, 'stderr');
  const fd = fs.openSync(file, 'w');
  try {
    const child = spawn(process.execPath, [...nodeArgs, path.join(__dirname, 'child', 'trace.js'), mode],
                        { stdio: ['ignore', 'pipe', fd] });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (t) => { stdout += t; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
    const code = await new Promise((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    const stderr = fs.readFileSync(file, 'utf8');
    const lines = stdout.trim().split('\n');
    let result = null;
    try {
      result = JSON.parse(lines[lines.length - 1]);
    } catch {
      result = null;
    }
    assert.ok(result && result.secure, `child exited with ${code}: ${stdout}\n${stderr.slice(-2000)}`);
    return { stderr, warnings: result.warnings, codes: result.codes };
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// The direction of each record traced, in order ("Sent Record", or "Sent
// TLS Record" from OpenSSL 3.5 on).
function records(stderr) {
  return stderr.split('\n').map((l) => /^(Sent|Received) (?:TLS )?Record$/.exec(l)).filter(Boolean).map((m) => m[1]);
}

describe('enableTrace', function () {
  it('the client option traces the client: ClientHello sent first', async function () {
    const { stderr } = await trace('client');
    const lines = records(stderr);
    assert.strictEqual(lines[0], 'Sent', stderr.slice(0, 500));
    assert.match(stderr, /ClientHello, Length=\d+/);
    assert.match(stderr, /ServerHello, Length=\d+/);
    // One side only: the ClientHello appears once.
    assert.strictEqual(stderr.match(/ClientHello, Length/g).length, 1);
  });

  it('the server option traces the server: ClientHello received first', async function () {
    const { stderr } = await trace('server');
    const lines = records(stderr);
    assert.strictEqual(lines[0], 'Received', stderr.slice(0, 500));
    assert.match(stderr, /ClientHello, Length=\d+/);
    assert.strictEqual(stderr.match(/ClientHello, Length/g).length, 1);
  });

  it('enableTrace() before the handshake traces it', async function () {
    const { stderr } = await trace('method');
    assert.strictEqual(records(stderr)[0], 'Sent');
    assert.match(stderr, /ClientHello, Length=\d+/);
  });

  it('nothing is traced unless asked for', async function () {
    const { stderr } = await trace('none');
    assert.deepStrictEqual(records(stderr), []);
    assert.doesNotMatch(stderr, /ClientHello/);
  });

  it('--trace-tls traces both sides, with node\'s warning once', async function () {
    const { stderr, warnings } = await trace('none', ['--trace-tls']);
    assert.strictEqual(stderr.match(/ClientHello, Length/g).length, 2);
    assert.deepStrictEqual(warnings, [warning]);
  });

  it('enableTrace: false wins over --trace-tls', async function () {
    const { stderr, warnings } = await trace('off', ['--trace-tls']);
    assert.deepStrictEqual(records(stderr), []);
    assert.deepStrictEqual(warnings, []);
  });

  it('a failed handshake reports OpenSSL\'s errors, traced or not', async function () {
    const { stderr, codes } = await trace('fail');
    assert.deepStrictEqual(codes, { client: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', server: 'ERR_SSL_UNSUPPORTED_PROTOCOL' });
    assert.match(stderr, /Alert/);
  });

  it('a non-boolean enableTrace is ERR_INVALID_ARG_TYPE', function () {
    assert.throws(() => tlswrap.connect(clientOptions(1, { enableTrace: 'yes' })),
                  { code: 'ERR_INVALID_ARG_TYPE', name: 'TypeError' });
  });
});
