'use strict';

// Child of context.test.js, run with node:tls's command-line flags
// (--tls-min-v1.x, --tls-max-v1.x, --tls-cipher-list, --tls-keylog): makes
// one connection with default options and prints one JSON line: the module's
// DEFAULT_* values, what was negotiated, the warnings, and (argv[2], the
// keylog file) the shape of the lines written there. Honours
// TLSWRAP_TEST_BUILTIN through common.js.

const fs = require('node:fs');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions } = require('../common');

const warnings = [];
process.on('warning', (w) => warnings.push(w.message));

async function main() {
  const server = tlswrap.createServer(serverOptions());
  server.on('secureConnection', (sock) => sock.end());
  server.on('tlsClientError', () => {});
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const serverSide = once(server, 'secureConnection');
  const client = tlswrap.connect(clientOptions(server.address().port));
  const result = {
    min: tlswrap.DEFAULT_MIN_VERSION, max: tlswrap.DEFAULT_MAX_VERSION, ciphers: tlswrap.DEFAULT_CIPHERS,
  };
  try {
    await once(client, 'secureConnect');
    await serverSide;
    result.protocol = client.getProtocol();
    result.cipher = client.getCipher().name;
  } catch (err) {
    result.error = err.code;
  }
  client.destroy();
  server.close();
  await once(server, 'close');
  // appendFile callbacks run before the process would exit; wait for them.
  await new Promise((resolve) => setTimeout(resolve, 100));
  result.warnings = warnings;
  const keylog = process.argv[2];
  if (keylog) {
    const lines = fs.existsSync(keylog) ? fs.readFileSync(keylog, 'latin1').split('\n').filter(Boolean) : [];
    result.keylog = {
      lines: lines.length,
      labels: [...new Set(lines.map((l) => l.split(' ')[0]))].sort(),
      wellFormed: lines.every((l) => /^[A-Z_0-9]+ [0-9a-f]{64} [0-9a-f]+$/.test(l)),
      mode: fs.existsSync(keylog) ? (fs.statSync(keylog).mode & 0o777).toString(8) : null,
    };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
