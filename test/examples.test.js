'use strict';

// Every program in examples/ runs as written, in a child process, exits 0 by
// itself within a time bound, and prints the line its header promises: a
// "// Prints: <line>" comment near the top. A new example is covered as soon
// as it is added (and fails here until it has that line). The README's "Use"
// example is examples/echo.js, verbatim.

const assert = require('node:assert');
const { execFile, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const examplesDir = path.join(__dirname, '..', 'examples');
const examples = fs.readdirSync(examplesDir).filter((f) => f.endsWith('.js')).sort();
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const LIMIT_MS = 15000;

function run(file) {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(examplesDir, file)], {
      cwd: examplesDir, timeout: LIMIT_MS, killSignal: 'SIGKILL',
    }, (err, stdout, stderr) => resolve({ err, stdout, stderr }));
  });
}

describe('examples', function () {
  this.timeout(LIMIT_MS + 5000);
  before(function () {
    // Each example makes its own throwaway certificate with the openssl CLI.
    if (!hasOpenssl) this.skip();
  });

  it('there are examples', function () {
    assert.ok(examples.length >= 5, `examples/: ${examples}`);
  });

  for (const file of examples) {
    it(`examples/${file} runs and prints what it says`, async function () {
      const source = fs.readFileSync(path.join(examplesDir, file), 'utf8');
      const header = /^\/\/ Prints: (.+)$/m.exec(source);
      assert.ok(header, `examples/${file} has no "// Prints: <line>" comment`);
      const { err, stdout, stderr } = await run(file);
      const how = err && err.killed ? `did not exit within ${LIMIT_MS} ms` : `exited with ${err && err.code}`;
      assert.ifError(err && new Error(`examples/${file} ${how}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      assert.ok(stdout.split('\n').includes(header[1]),
        `examples/${file}: no line "${header[1]}" in its output:\n${stdout}\nstderr:\n${stderr}`);
    });
  }

  it("README's first example is examples/echo.js", function () {
    const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const first = /```js\n([\s\S]*?)```/.exec(readme);
    assert.ok(first, 'README.md has no js code block');
    assert.strictEqual(first[1], fs.readFileSync(path.join(examplesDir, 'echo.js'), 'utf8'));
  });
});
