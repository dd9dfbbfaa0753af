'use strict';

// Loading the addon: a node without exported OpenSSL, or a missing build,
// gives an error that says so (not the dynamic loader's words alone).

const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { builtin } = require('./common');

const root = path.join(__dirname, '..');

// Loads lib/binding.js in a child with TLSWRAP_ADDON set to `addon`.
function loadWith(addon) {
  return spawnSync(process.execPath, ['-e', `
    try {
      const b = require('./lib/binding');
      console.log(JSON.stringify({ openssl: b.opensslVersion }));
    } catch (e) {
      console.log(JSON.stringify({ code: e.code, message: e.message }));
    }`], { cwd: root, env: { ...process.env, TLSWRAP_ADDON: addon }, encoding: 'utf8', timeout: 10000 });
}

describe('loading the addon', function () {
  before(function () {
    if (builtin) this.skip();
  });

  it('loads in this node and reports the OpenSSL it runs on', function () {
    const binding = require('../lib/binding');
    assert.strictEqual(binding.opensslVersion, process.versions.openssl);
  });

  it('an unresolved OpenSSL symbol becomes ERR_TLSWRAP_NO_OPENSSL', function () {
    const { explainLoadError } = require('../lib/binding');
    const cause = new Error('/x/tlswrap.node: undefined symbol: SSL_CTX_new');
    const err = explainLoadError(cause, '/x/tlswrap.node');
    assert.strictEqual(err.code, 'ERR_TLSWRAP_NO_OPENSSL');
    assert.match(err.message, /exports its bundled OpenSSL/);
    assert.match(err.message, /SSL_CTX_new/);
    assert.strictEqual(err.cause, cause);
  });

  it('a missing build becomes ERR_TLSWRAP_NOT_BUILT; other errors pass through', function () {
    const { explainLoadError } = require('../lib/binding');
    const missing = Object.assign(new Error('Cannot find module'), { code: 'MODULE_NOT_FOUND' });
    assert.strictEqual(explainLoadError(missing, '/x/tlswrap.node').code, 'ERR_TLSWRAP_NOT_BUILT');
    const other = new Error('something else');
    assert.strictEqual(explainLoadError(other, '/x/tlswrap.node'), other);
  });

  it('TLSWRAP_ADDON names another build to load (relative to the working directory)', function () {
    const ok = loadWith(path.join('build', 'Release', 'tlswrap.node'));
    assert.deepStrictEqual(JSON.parse(ok.stdout), { openssl: process.versions.openssl });
    const missing = path.join(root, 'no-such-build', 'tlswrap.node');
    const r = JSON.parse(loadWith(missing).stdout);
    assert.strictEqual(r.code, 'ERR_TLSWRAP_NOT_BUILT');
    assert.ok(r.message.includes(missing), r.message);
  });
});
