'use strict';

// Loading the addon: a node without exported OpenSSL, or a missing build,
// gives an error that says so (not the dynamic loader's words alone).

const assert = require('node:assert');
const { builtin } = require('./common');

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
});
