'use strict';

// The project's JavaScript conventions, checked over every source file so a
// slip shows up in `npm test` rather than in review: CommonJS files start
// with 'use strict', and Node's builtins are required by their `node:` name.
// And the mutation list (scripts/mutate.js) still matches the code it mutates.

const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { builtinModules } = require('node:module');

const root = path.join(__dirname, '..');
const dirs = ['.', 'lib', 'test', 'test/child', 'benchmark', 'scripts', 'examples'];

function sources() {
  const files = [];
  for (const dir of dirs) {
    const full = path.join(root, dir);
    if (!fs.existsSync(full)) continue;
    for (const name of fs.readdirSync(full)) {
      if (/\.(c|m)?js$/.test(name)) files.push(path.join(dir, name));
    }
  }
  return files;
}

// The first statement: past a shebang, blank lines and comments.
function firstStatement(text) {
  const body = text.replace(/^#!.*\n/, '').replace(/^(\s+|\/\/.*\n|\/\*[^]*?\*\/)*/, '');
  return body.split('\n')[0];
}

describe('conventions', function () {
  const files = sources();

  it('finds the sources', function () {
    for (const expected of ['.mocharc.js', 'lib/index.js', 'lib/index.mjs', 'lib/socket.js', 'benchmark/first-connection.js', 'scripts/mutate.js']) {
      assert.ok(files.includes(expected) || files.includes(path.normalize(expected)), expected);
    }
  });

  it("every CommonJS file starts with 'use strict'", function () {
    const missing = files
      .filter((f) => !f.endsWith('.mjs'))
      .filter((f) => firstStatement(fs.readFileSync(path.join(root, f), 'utf8')) !== "'use strict';");
    assert.deepStrictEqual(missing, []);
  });

  it('builtins are required and imported by their node: name', function () {
    const bare = new Set(builtinModules.filter((m) => !m.startsWith('_') && !m.startsWith('node:')));
    const found = [];
    for (const f of files) {
      const text = fs.readFileSync(path.join(root, f), 'utf8');
      for (const m of text.matchAll(/(?:require\(|\bfrom\s+|import\()\s*'([^']+)'/g)) {
        const name = m[1].split('/')[0];
        if (bare.has(name)) found.push(`${f}: '${m[1]}'`);
      }
    }
    assert.deepStrictEqual(found, []);
  });

  // `npm run mutate` refuses to start while any entry's search string is not
  // in its file exactly once; a refactor that moves the code must move the
  // mutation with it, or the suite's strength goes unchecked.
  it('every mutation of npm run mutate still applies to the code', function () {
    // Inside npm run mutate's copy one entry is applied on purpose.
    if (process.env.TLSWRAP_MUTATION) this.skip();
    const out = execFileSync(process.execPath, [path.join(root, 'scripts', 'mutate.js'), '--list'],
                             { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = out.split('\n').filter(Boolean);
    assert.ok(lines.length >= 40, out);
    // An entry held to a later Node names the test file that must run whole
    // there: the major alone does not say the feature is in it.
    const gated = lines.filter((line) => /\[Node \d+/.test(line));
    assert.ok(gated.length > 0, out);
    for (const line of gated) assert.match(line, /\[Node \d+, test\/[\w.-]+\.test\.js all run\]/);
  });
});
