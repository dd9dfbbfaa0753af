'use strict';

// node:tls reads some command-line flags itself (through node's internal
// option parser, which addons cannot reach). The DEFAULT_* ones reach tlswrap
// through node:tls's exported values; --tls-keylog is read here, from the
// same places node reads it: NODE_OPTIONS, then the command line (which wins).

const { appendFile } = require('node:fs');

// NODE_OPTIONS splits on spaces; double quotes group, as node's parser does.
function splitNodeOptions(text) {
  const out = [];
  const re = /"((?:\\.|[^"\\])*)"|(\S+)/g;
  let m;
  while ((m = re.exec(text || '')) !== null) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]);
  return out;
}

function flagValue(name) {
  const args = [...splitNodeOptions(process.env.NODE_OPTIONS), ...process.execArgv];
  let value = null;
  for (let i = 0; i < args.length; i++) {
    if (args[i].startsWith(`${name}=`)) value = args[i].slice(name.length + 1);
    else if (args[i] === name && i + 1 < args.length) value = args[++i];
  }
  return value;
}

// A boolean flag given (as `--flag` or `--flag=true`, not `--no-flag`).
function hasFlag(name) {
  const args = [...splitNodeOptions(process.env.NODE_OPTIONS), ...process.execArgv];
  let on = false;
  for (const arg of args) {
    if (arg === name || arg === `${name}=true`) on = true;
    else if (arg === `--no-${name.slice(2)}` || arg === `${name}=false`) on = false;
  }
  return on;
}

const tlsKeylog = flagValue('--tls-keylog');
let warnOnKeylog = true;
let warnOnKeylogError = true;

// With --tls-keylog=file every TLS socket appends its key lines to that file,
// with node:tls's warnings.
function attachKeylogFile(socket) {
  if (!tlsKeylog) return;
  if (warnOnKeylog) {
    warnOnKeylog = false;
    process.emitWarning('Using --tls-keylog makes TLS connections insecure ' +
                        `by writing secret key material to file ${tlsKeylog}`);
  }
  socket.on('keylog', (line) => {
    appendFile(tlsKeylog, line, { mode: 0o600 }, (err) => {
      if (err && warnOnKeylogError) {
        warnOnKeylogError = false;
        process.emitWarning(`Failed to write TLS keylog (this warning will not be repeated): ${err}`);
      }
    });
  });
}

module.exports = { attachKeylogFile, hasFlag };
