'use strict';

// An HTTPS client whose keep-alive Agent sends several requests, one after
// the other, over one TLS connection.
// Prints: 3 requests over 1 TLS connection

const https = require('tlswrap/https'); // instead of require('node:https')
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// A throwaway self-signed key and certificate for localhost and 127.0.0.1
// (bring your own for anything real).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
  '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
const key = fs.readFileSync(path.join(dir, 'key.pem'));
const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
fs.rmSync(dir, { recursive: true });

let connections = 0;
const server = https.createServer({ key, cert }, (req, res) => res.end(`you asked for ${req.url}`));
server.on('secureConnection', () => connections++);

function get(url, agent) {
  return new Promise((resolve, reject) => {
    https.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

server.listen(0, '127.0.0.1', async () => {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: cert });
  const base = `https://127.0.0.1:${server.address().port}`;
  const paths = ['/one', '/two', '/three'];
  for (const p of paths) console.log(await get(base + p, agent));
  console.log(`${paths.length} requests over ${connections} TLS connection${connections === 1 ? '' : 's'}`);
  agent.destroy();
  server.close();
});
