'use strict';

// The benchmark scripts run for a moment and print their JSON line, so that
// benchmark code cannot rot unnoticed between the (rare) benchmark runs.
// Numbers are not checked beyond being there: a 0.2 s window on a busy
// machine measures nothing. TLSWRAP_BENCH_BUN=/path/to/bun also runs the
// node:tls cells under Bun, as `compare.js --bun` does.

const assert = require('node:assert');
const path = require('node:path');
const { execFile } = require('node:child_process');

const DIR = path.join(__dirname, '..', 'benchmark');

function runBench(exe, script, args, env = process.env, withStderr = false) {
  return new Promise((resolve, reject) => {
    execFile(exe, [path.join(DIR, script), ...args], { timeout: 20000, env }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`${script} ${args.join(' ')}: ${err.message}\n${stderr}`));
        return;
      }
      const lines = stdout.trim().split('\n');
      const result = JSON.parse(lines[lines.length - 1]);
      if (withStderr) result.stderr = stderr;
      resolve(result);
    });
  });
}

const SHORT = ['dur=0.2', 'warmup=0'];
const runtimes = [['node', process.execPath, ['builtin', 'tlswrap']]];
if (process.env.TLSWRAP_BENCH_BUN) runtimes.push(['bun', process.env.TLSWRAP_BENCH_BUN, ['builtin']]);

describe('benchmark scripts', function () {
  this.timeout(30000);

  for (const [name, exe, impls] of runtimes) {
    for (const impl of impls) {
      it(`throughput-s2c.js runs under ${name}, impl=${impl}, 'data' and onread, with allocation per MiB`, async () => {
        const [data, onread] = await Promise.all([
          runBench(exe, 'throughput-s2c.js', [`impl=${impl}`, 'fragment=4096', ...SHORT]),
          runBench(exe, 'throughput-s2c.js', [`impl=${impl}`, 'fragment=4096', 'recvbuflen=65536', ...SHORT]),
        ]);
        for (const r of [data, onread]) {
          assert.strictEqual(r.bench, 'throughput-s2c');
          assert.strictEqual(r.impl, impl);
          assert.ok(r.bytes > 0 && r.mibps > 0 && r.chunks > 0, JSON.stringify(r));
          assert.match(r.runtime, name === 'bun' ? /^bun / : /^node v/);
        }
        // Every 'data' chunk so far is fresh memory, at least the bytes it
        // holds; onread decrypts into the one buffer given, counted before
        // the window.
        assert.ok(data.allocKiBPerMiB >= 1000, `'data' allocKiBPerMiB ${data.allocKiBPerMiB}`);
        assert.strictEqual(onread.allocKiBPerMiB, 0);
        if (name === 'bun') assert.deepStrictEqual(data.unsupported, ['gc']);
        else assert.strictEqual(typeof data.majorGC, 'number');
      });

      it(`handshake.js runs under ${name}, impl=${impl}`, async () => {
        const r = await runBench(exe, 'handshake.js', [`impl=${impl}`, 'tlsVersion=TLSv1.2', ...SHORT]);
        assert.strictEqual(r.bench, 'handshake');
        assert.ok(r.conns > 0 && r.connsPerSec > 0, JSON.stringify(r));
        assert.strictEqual(r.cipherSuite, 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384');
      });

      it(`handshake.js resumes under ${name}, impl=${impl}, with a P-256 server key`, async () => {
        // The script fails the run if a connection that offered a session
        // was not resumed.
        const cache = impl === 'tlswrap' ? ['cache=1'] : [];
        const r = await runBench(exe, 'handshake.js',
          [`impl=${impl}`, 'tlsVersion=TLSv1.2', 'key=p256', 'resume=1', ...cache, ...SHORT]);
        assert.ok(r.conns > 0 && r.connsPerSec > 0, JSON.stringify(r));
        assert.strictEqual(r.cipherSuite, 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384');
      });

      it(`handshake.js split=1 runs the server in a child and reports each side's CPU under ${name}, impl=${impl}`,
        async () => {
          const cache = impl === 'tlswrap' ? ['cache=1'] : [];
          const r = await runBench(exe, 'handshake.js', [`impl=${impl}`, 'split=1', 'resume=1', ...cache, ...SHORT],
                                   process.env, true);
          assert.strictEqual(r.split, 1);
          assert.ok(r.conns > 0 && r.clientCpuMsPerConn > 0 && r.serverCpuMsPerConn > 0, JSON.stringify(r));
          // Neither process reports an error on the way out (the server child
          // once saw the client's resets as errors).
          assert.strictEqual(r.stderr, '');
        });

      it(`handshake.js conns=N makes exactly N connections under ${name}, impl=${impl} (handshake-instructions.js)`,
        async () => {
          const cache = impl === 'tlswrap' ? ['cache=1'] : [];
          const r = await runBench(exe, 'handshake.js', [`impl=${impl}`, 'resume=1', ...cache, 'concurrency=3', 'conns=7']);
          assert.deepStrictEqual([r.bench, r.impl, r.conns], ['handshake', impl, 7]);
        });

      it(`first-connection.js runs under ${name}, impl=${impl}, verifying through NODE_EXTRA_CA_CERTS`, async () => {
        const env = { ...process.env, NODE_EXTRA_CA_CERTS: path.join(__dirname, 'fixtures', 'ca-cert.pem') };
        const r = await runBench(exe, 'first-connection.js', [`impl=${impl}`], env);
        assert.strictEqual(r.bench, 'first-connection');
        assert.ok(r.cpuMs > 0 && r.wallMs > 0, JSON.stringify(r));
        assert.strictEqual(r.authorized, true);
        assert.strictEqual(r.extraCaCerts, true);
      });

      if (name === 'node') {
        it(`https-instructions.js's server and client run, impl=${impl}`, async () => {
          // Only the halves: the instruction count itself needs valgrind
          // and minutes.
          const r = await runBench(exe, 'https-instructions.js', ['role=server', `impl=${impl}`, 'requests=20',
            'concurrency=2']);
          assert.deepStrictEqual(r, { bench: 'https-instructions', role: 'server', impl, requests: 20 });
        });
      }

      it(`first-connection.js ca=list runs under ${name}, impl=${impl}: authorized by the test CA among the roots`,
        async () => {
          const env = { ...process.env };
          delete env.NODE_EXTRA_CA_CERTS;
          const r = await runBench(exe, 'first-connection.js', [`impl=${impl}`, 'ca=list'], env);
          assert.strictEqual(r.ca, 'list');
          assert.strictEqual(r.authorized, true);
          assert.ok(r.nextContextMs > 0, JSON.stringify(r));
        });
    }
  }
});
