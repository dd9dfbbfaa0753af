'use strict';

// Runs a script of test/child in a fresh node process, for behaviour that
// may crash, hang or leak (a use-after-free, an fd kept open) or that needs a
// process-wide 'uncaughtException' handler mocha must not see. The child
// inherits the environment (TLSWRAP_TEST_BUILTIN, TLSWRAP_TRANSPORT).

const path = require('node:path');
const { spawn } = require('node:child_process');

// Resolves with { code, signal, timedOut, stdout, stderr, result }, `result`
// being the last stdout line parsed as JSON (null if there is none). A child
// still running after `limitMs` is killed (timedOut true).
function runChild(name, args = [], { limitMs = 20000, nodeArgs = [] } = {}) {
  const script = path.join(__dirname, 'child', name);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, script, ...args.map(String)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (text) => { stdout += text; });
    child.stderr.on('data', (text) => { stderr += text; });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const lines = stdout.trim().split('\n');
      let result = null;
      try {
        result = JSON.parse(lines[lines.length - 1]);
      } catch {
        result = null;
      }
      resolve({ code, signal, timedOut, stdout, stderr, result });
    });
  });
}

// What to say when a child did not end well.
function describeExit({ code, signal, timedOut, stderr }) {
  if (timedOut) return `child was killed after its time limit (hang?)\n${stderr}`;
  if (signal) return `child died of ${signal} (crash)\n${stderr}`;
  return `child exited with code ${code}\n${stderr}`;
}

module.exports = { runChild, describeExit };
