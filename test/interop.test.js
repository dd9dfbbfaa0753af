'use strict';

// Interoperability: tlswrap must speak TLS 1.2 and 1.3 with node:tls, with
// itself and with the openssl CLI, and bulk data must arrive intact (SHA-256
// of what arrived equals SHA-256 of what was sent).

const assert = require('node:assert');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');
const { spawn, spawnSync } = require('node:child_process');
const { once } = require('node:events');
const { tlswrap, serverOptions, clientOptions, listen, closeServer } = require('./common');

const MiB = 1024 * 1024;
const SIZE = 32 * MiB;
const fixturePath = (name) => path.join(__dirname, 'fixtures', name);
const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

// Two distinct payloads so that a mixed-up direction cannot pass. Made in
// before() and dropped in after(), so other spec files don't carry them.
let s2c, c2s, s2cHash, c2sHash;

// Hashes a readable until 'end' without keeping the data.
function sink(stream) {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    stream.on('data', (d) => { hash.update(d); bytes += d.length; });
    stream.once('end', () => resolve({ bytes, hash: hash.digest('hex') }));
    stream.once('error', reject);
  });
}

// Rejects on the first 'error' of any of the emitters (for Promise.race;
// marked handled so a late error after the race cannot crash the run).
function failOnError(...emitters) {
  const p = new Promise((resolve, reject) => {
    for (const e of emitters) e.on('error', reject);
  });
  p.catch(() => {});
  return p;
}

// One connection over loopback, both directions at once.
async function nodePair(serverImpl, clientImpl, version) {
  const server = serverImpl.createServer(serverOptions({ minVersion: version, maxVersion: version }));
  const serverResult = new Promise((resolve, reject) => {
    server.once('secureConnection', (sock) => {
      sock.on('error', reject);
      sock.write(s2c);
      // End our side only once the client has finished sending.
      sink(sock).then((r) => { sock.end(); resolve({ ...r, protocol: sock.getProtocol() }); }, reject);
    });
    server.on('tlsClientError', reject);
  });
  serverResult.catch(() => {});
  const port = await listen(server);
  let client;
  try {
    client = clientImpl.connect(clientOptions(port));
    const errors = failOnError(client);
    await Promise.race([once(client, 'secureConnect'), errors]);
    assert.strictEqual(client.getProtocol(), version);
    client.end(c2s);
    const [got, srv] = await Promise.race([Promise.all([sink(client), serverResult]), errors]);
    assert.strictEqual(srv.protocol, version);
    assert.strictEqual(got.bytes, SIZE);
    assert.strictEqual(got.hash, s2cHash);
    assert.strictEqual(srv.bytes, SIZE);
    assert.strictEqual(srv.hash, c2sHash);
    if (!client.closed) await once(client, 'close');
  } finally {
    if (client) client.destroy();
    await closeServer(server);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Starts `openssl s_server` and waits until it accepts. -quiet prints nothing
// (no ACCEPT line), so readiness is found by a TCP probe; the probe uses up one
// of the -naccept connections, hence '-naccept 2'.
async function startSServer(args, cwd) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const proc = spawn('openssl', ['s_server', '-accept', `127.0.0.1:${port}`, '-naccept', '2',
      '-cert', fixturePath('server-cert.pem'), '-key', fixturePath('server-key.pem'), ...args],
    { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    proc.stdin.on('error', () => {}); // it may exit before we stop writing
    let stderr = '';
    proc.stderr.on('data', (d) => { stderr += d; });
    const exited = once(proc, 'exit').then(() => false);
    const deadline = Date.now() + 5000;
    let ready = false;
    while (!ready && Date.now() < deadline) {
      ready = await Promise.race([exited, new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.on('connect', () => { s.destroy(); resolve(true); });
        s.on('error', () => setTimeout(() => resolve(false), 25));
      })]);
      if (proc.exitCode !== null || proc.signalCode !== null) break;
    }
    if (ready) return { proc, port, stderr: () => stderr };
    proc.kill();
    await exited;
  }
  throw new Error('openssl s_server did not start');
}

async function stopProc(proc) {
  if (proc.exitCode === null && proc.signalCode === null) {
    proc.kill();
    await once(proc, 'exit');
  }
}

describe('interop', function () {
  before(function () {
    s2c = crypto.randomBytes(SIZE);
    c2s = crypto.randomBytes(SIZE);
    s2cHash = sha256(s2c);
    c2sHash = sha256(c2s);
  });
  after(function () {
    s2c = c2s = null;
  });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    const opensslFlag = version === 'TLSv1.2' ? '-tls1_2' : '-tls1_3';

    describe(version, function () {
      it('tlswrap client <-> node:tls server, 32 MiB each way', async function () {
        await nodePair(tls, tlswrap, version);
      });

      it('node:tls client <-> tlswrap server, 32 MiB each way', async function () {
        await nodePair(tlswrap, tls, version);
      });

      it('tlswrap client <-> tlswrap server, 32 MiB each way', async function () {
        await nodePair(tlswrap, tlswrap, version);
      });

      describe('openssl s_server', function () {
        let dir;
        before(function () {
          if (!hasOpenssl) this.skip();
          dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-interop-'));
          fs.writeFileSync(path.join(dir, 'payload.bin'), s2c);
        });
        after(function () {
          if (dir) fs.rmSync(dir, { recursive: true, force: true });
        });

        it('tlswrap client downloads 32 MiB from s_server -WWW', async function () {
          const srv = await startSServer([opensslFlag, '-WWW', '-http_server_binmode'], dir);
          let client;
          try {
            client = tlswrap.connect(clientOptions(srv.port));
            const errors = failOnError(client);
            await Promise.race([once(client, 'secureConnect'), errors]);
            assert.strictEqual(client.getProtocol(), version);
            assert.strictEqual(client.authorized, true);
            client.write('GET /payload.bin HTTP/1.0\r\n\r\n');
            const chunks = [];
            client.on('data', (d) => chunks.push(d));
            await Promise.race([once(client, 'end'), errors]);
            const all = Buffer.concat(chunks);
            const bodyAt = all.indexOf('\r\n\r\n') + 4;
            assert.match(all.subarray(0, bodyAt).toString('latin1'), /^HTTP\/1\.0 200 ok\r\n/);
            assert.strictEqual(all.length - bodyAt, SIZE, srv.stderr());
            assert.strictEqual(sha256(all.subarray(bodyAt)), s2cHash);
          } finally {
            if (client) client.destroy();
            await stopProc(srv.proc);
          }
        });

        it('tlswrap client uploads to s_server (written to its stdout)', async function () {
          // s_server -quiet copies the plaintext it reads to stdout, nothing else.
          const srv = await startSServer([opensslFlag, '-quiet'], dir);
          let client;
          try {
            const received = sink(srv.proc.stdout);
            client = tlswrap.connect(clientOptions(srv.port));
            const errors = failOnError(client);
            await Promise.race([once(client, 'secureConnect'), errors]);
            assert.strictEqual(client.getProtocol(), version);
            client.resume();
            client.end(c2s);
            const got = await Promise.race([received, errors]);
            assert.strictEqual(got.bytes, SIZE, srv.stderr());
            assert.strictEqual(got.hash, c2sHash);
            if (!client.closed) await once(client, 'close');
          } finally {
            if (client) client.destroy();
            await stopProc(srv.proc);
          }
        });
      });

      describe('openssl s_client', function () {
        before(function () {
          if (!hasOpenssl) this.skip();
        });

        it('s_client <-> tlswrap server, 32 MiB each way', async function () {
          const server = tlswrap.createServer(serverOptions({ minVersion: version, maxVersion: version }));
          const serverResult = new Promise((resolve, reject) => {
            server.once('secureConnection', (sock) => {
              sock.on('error', reject);
              sock.write(s2c);
              // s_client -quiet never closes on stdin EOF, so the server ends the
              // connection once it has the whole upload.
              const hash = crypto.createHash('sha256');
              let bytes = 0;
              sock.on('data', (d) => {
                hash.update(d);
                bytes += d.length;
                if (bytes >= SIZE) {
                  sock.end();
                  resolve({ bytes, hash: hash.digest('hex'), protocol: sock.getProtocol() });
                }
              });
            });
            server.on('tlsClientError', reject);
          });
          serverResult.catch(() => {});
          const port = await listen(server);
          const proc = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, opensslFlag, '-quiet',
            '-nocommands', '-CAfile', fixturePath('ca-cert.pem'), '-servername', 'localhost', '-verify_return_error'],
          { stdio: ['pipe', 'pipe', 'pipe'] });
          const exited = once(proc, 'exit');
          try {
            proc.stdin.on('error', () => {});
            let stderr = '';
            proc.stderr.on('data', (d) => { stderr += d; });
            const received = sink(proc.stdout);
            proc.stdin.write(c2s); // stdin stays open: EOF would not end the session anyway
            const [srv, got] = await Promise.all([serverResult, received]);
            const [code] = await exited;
            assert.strictEqual(srv.protocol, version);
            assert.strictEqual(srv.bytes, SIZE);
            assert.strictEqual(srv.hash, c2sHash);
            assert.strictEqual(got.bytes, SIZE, stderr);
            assert.strictEqual(got.hash, s2cHash);
            assert.strictEqual(code, 0, stderr);
          } finally {
            proc.stdin.destroy();
            await stopProc(proc);
            await closeServer(server);
          }
        });
      });
    });
  }
});

// Whether this openssl's `cmd` (s_server, s_client) has `option`.
function opensslHas(cmd, option) {
  const r = spawnSync('openssl', [cmd, '-help'], { encoding: 'utf8' });
  return new RegExp(`^\\s*${option}\\b`, 'm').test(`${r.stdout}${r.stderr}`);
}

// Record shapes a real peer may choose, each legitimate: small or split
// records, pipelining, a tiny read buffer, TLS 1.3 padding, MAC-then-encrypt
// CBC, and (s_client) the max_fragment_length extension, which obliges our
// server to send records of at most 512 bytes (s_client fails on a bigger one).
const recordShapes = [
  { name: 'max_send_frag 512', args: ['-max_send_frag', '512'] },
  { name: 'split_send_frag 1000, max_pipelines 4', args: ['-split_send_frag', '1000', '-max_pipelines', '4'] },
  { name: 'read_buf 100', args: ['-read_buf', '100'] },
  { name: 'record_padding 1024', args: ['-record_padding', '1024'], version: 'TLSv1.3' },
  { name: 'no_etm, AES256-SHA', args: ['-no_etm', '-cipher', 'AES256-SHA'], version: 'TLSv1.2', options: { ciphers: 'AES256-SHA' } },
  { name: 'maxfraglen 512', args: ['-maxfraglen', '512'], only: 's_client' },
];
const SHAPE_SIZE = 2 * MiB;

describe('interop: openssl peers choosing unusual record shapes (2 MiB each way)', function () {
  let up, down;
  before(function () {
    if (!hasOpenssl) this.skip();
    up = crypto.randomBytes(SHAPE_SIZE);
    down = crypto.randomBytes(SHAPE_SIZE);
  });
  after(function () {
    up = down = null;
  });

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    const opensslFlag = version === 'TLSv1.2' ? '-tls1_2' : '-tls1_3';
    for (const shape of recordShapes) {
      if (shape.version && shape.version !== version) continue;
      if (shape.only !== 's_client') {
        it(`${version}: tlswrap client <-> s_server -${shape.name}`, async function () {
          if (!shape.args.every((a) => !a.startsWith('-') || opensslHas('s_server', a))) this.skip();
          // -quiet: s_server sends its stdin and writes what it reads to stdout.
          const srv = await startSServer([opensslFlag, '-quiet', ...shape.args]);
          let client;
          try {
            const hash = crypto.createHash('sha256');
            let uploaded = 0;
            const received = new Promise((resolve) => {
              srv.proc.stdout.on('data', (d) => {
                hash.update(d);
                uploaded += d.length;
                if (uploaded >= SHAPE_SIZE) resolve();
              });
            });
            client = tlswrap.connect(clientOptions(srv.port, shape.options));
            const errors = failOnError(client);
            await Promise.race([once(client, 'secureConnect'), errors]);
            assert.strictEqual(client.getProtocol(), version);
            const chunks = [];
            let got = 0;
            const downloaded = new Promise((resolve) => {
              client.on('data', (d) => {
                chunks.push(d);
                got += d.length;
                if (got >= SHAPE_SIZE) resolve();
              });
            });
            srv.proc.stdin.write(down);
            client.write(up);
            await Promise.race([Promise.all([downloaded, received]), errors]);
            assert.strictEqual(got, SHAPE_SIZE, srv.stderr());
            assert.ok(Buffer.concat(chunks).equals(down), 'what s_server sent arrived intact');
            assert.strictEqual(uploaded, SHAPE_SIZE, srv.stderr());
            assert.strictEqual(hash.digest('hex'), sha256(up));
          } finally {
            if (client) client.destroy();
            await stopProc(srv.proc);
          }
        });
      }

      it(`${version}: s_client -${shape.name} <-> tlswrap server`, async function () {
        if (!shape.args.every((a) => !a.startsWith('-') || opensslHas('s_client', a))) this.skip();
        const server = tlswrap.createServer(serverOptions({ minVersion: version, maxVersion: version, ...shape.options }));
        const serverResult = new Promise((resolve, reject) => {
          server.once('secureConnection', (sock) => {
            sock.on('error', reject);
            sock.write(down);
            const chunks = [];
            let bytes = 0;
            sock.on('data', (d) => {
              chunks.push(d);
              bytes += d.length;
              // s_client -quiet does not end on stdin EOF: the server ends.
              if (bytes >= SHAPE_SIZE) {
                sock.end();
                resolve(Buffer.concat(chunks));
              }
            });
          });
          server.on('tlsClientError', reject);
        });
        serverResult.catch(() => {});
        const port = await listen(server);
        const proc = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, opensslFlag, '-quiet',
          '-CAfile', fixturePath('ca-cert.pem'), '-servername', 'localhost', '-verify_return_error', ...shape.args],
        { stdio: ['pipe', 'pipe', 'pipe'] });
        const exited = once(proc, 'exit');
        try {
          proc.stdin.on('error', () => {});
          let stderr = '';
          proc.stderr.on('data', (d) => { stderr += d; });
          const chunks = [];
          proc.stdout.on('data', (d) => chunks.push(d));
          proc.stdin.write(up);
          const uploaded = await serverResult;
          const [code] = await exited;
          assert.strictEqual(code, 0, stderr);
          assert.ok(uploaded.equals(up), 'what s_client sent arrived intact');
          const downloaded = Buffer.concat(chunks);
          assert.strictEqual(downloaded.length, SHAPE_SIZE, stderr);
          assert.ok(downloaded.equals(down), 'what the server sent arrived intact');
        } finally {
          proc.stdin.destroy();
          await stopProc(proc);
          await closeServer(server);
        }
      });
    }
  }
});
