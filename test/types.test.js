'use strict';

// index.d.ts: a TypeScript program that uses tlswrap as it would node:tls
// (ESM and CommonJS flavours, test/fixtures/types) compiles with tsc against
// the package's own types, resolved through its exports map. The fixture also
// holds @ts-expect-error lines, so declarations that decayed to `any` fail.
// Type checks only: nothing runs, so TLSWRAP_TEST_BUILTIN changes nothing.

const assert = require('node:assert');
const path = require('node:path');
const { execFile } = require('node:child_process');

describe('types: index.d.ts', function () {
  // tsc reads all of @types/node: several seconds, more on a loaded machine.
  this.timeout(120000);

  it('tsc --noEmit accepts test/fixtures/types (strict, nodenext)', async function () {
    // The transport changes nothing here: npm test's native pass covers it.
    if (process.env.TLSWRAP_TRANSPORT === 'js') this.skip();
    const root = path.join(__dirname, '..');
    const tsc = require.resolve('typescript/bin/tsc');
    const project = path.join(__dirname, 'fixtures', 'types', 'tsconfig.json');
    const { code, output } = await new Promise((resolve) => {
      execFile(process.execPath, [tsc, '--noEmit', '-p', project], { cwd: root, timeout: 110000 },
        (err, stdout, stderr) => resolve({ code: err ? err.code ?? err.signal : 0, output: stdout + stderr }));
    });
    assert.strictEqual(code, 0, `tsc failed:\n${output}`);
  });
});
