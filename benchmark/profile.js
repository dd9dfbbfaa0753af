'use strict';

// Where the CPU goes in one throughput-s2c cell, builtin vs tlswrap, as CPU
// milliseconds per GiB moved, by category (Linux, needs `perf`).
//
//   node benchmark/profile.js [--tls 1.2] [--fragment 1024] [--recvbuflen 0]
//     [--dur 3] [--top 12] [--node /path/to/node]
//
// Each impl runs throughput-s2c.js in a child; once it is past warm-up
// `perf record -e cpu-clock -p <pid>` samples every thread of it (1 kHz, so
// one sample is one CPU millisecond) for `dur` seconds, inside the child's
// timed window. Samples are attributed by the function they landed in (self
// time, no call graphs: OpenSSL's assembly has no frame pointers) and put in
// the categories below; ms/GiB is samples divided by the GiB moved while
// perf ran (the child's steady MiB/s times `dur`). Both ends of the
// connection are in the one process, so every category holds encryption and
// decryption, sending and receiving.

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { normalizeTlsVersion } = require('./common.js');

// First match wins. `dso` is perf's shared-object column, `sym` the symbol.
// OpenSSL is linked into the node binary, so after V8, node and libuv are
// picked out, what is left of `node` is OpenSSL; so are libc's strcmp (OpenSSL
// 3 looks cipher parameters up by name on every record) and thread-local
// lookups (its per-thread error state).
const CATEGORIES = [
  ['cipher (AES-GCM, GHASH)', (dso, sym) => /aesni|_aes|gcm|ghash|clmul|chacha|poly1305/i.test(sym) && !/ossl_gcm_(get|set)_ctx_params|getivgen/.test(sym)],
  ['kernel: TCP, syscalls, copies', (dso) => dso === '[kernel.kallsyms]'],
  ['memcpy/memmove (user space)', (dso, sym) => /^__mem(move|cpy|set)/.test(sym)],
  ['malloc/free', (dso, sym) => /^(_int_|__libc_)?(malloc|free|cfree|calloc|realloc)|^_int_|^unlink_chunk|^malloc_consolidate|^tcache/.test(sym)],
  ['GC (V8, any thread)', (dso, sym) => /Heap|GC|Marking|Mark[A-Z]|Sweep|Scaveng|Evacuat|Compact|Remembered|SlotSet|MemoryChunk|ArrayBufferSweeper|Concurrent|WorkStealing|Worklist/.test(sym)],
  ['JavaScript and V8 runtime', (dso, sym) => /^(JS:|Builtins_|LazyCompile|Function:|Interpreted)|^v8::|^Builtin/.test(sym) || dso.startsWith('[JIT]') || /perf-\d+\.map/.test(dso)],
  ['node: streams, N-API, buffers', (dso, sym) => dso === 'node' && /^(node::|napi_|v8impl::|non-virtual thunk to node::)/.test(sym)],
  ['libuv', (dso, sym) => /^uv_|^uv__/.test(sym)],
  ['tlswrap engine (C++)', (dso) => dso === 'tlswrap.node'],
  ['OpenSSL, other than the cipher', (dso, sym) => dso === 'node' || /strcmp|pthread_getspecific|pthread_once/.test(sym)],
];
const OTHER = 'other';

const USAGE = `usage: node benchmark/profile.js [options]
  --tls V           1.2 or 1.3 (default 1.3)
  --fragment N      record size (default 16384)
  --recvbuflen N    0 = 'data' events, N = onread buffer (default 0)
  --dur S           seconds sampled (default 3)
  --top N           functions listed per impl (default 12)
  --node PATH       run the children under this node binary`;

function parseCli(argv) {
  const o = { tls: 'TLSv1.3', fragment: 16384, recvbuflen: 0, dur: 3, top: 12, node: process.execPath };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    const value = inline !== undefined ? inline : argv[++i];
    switch (flag) {
      case '--tls': o.tls = normalizeTlsVersion(value); break;
      case '--fragment': o.fragment = Number(value); break;
      case '--recvbuflen': o.recvbuflen = Number(value); break;
      case '--dur': o.dur = Number(value); break;
      case '--top': o.top = Number(value); break;
      case '--node': o.node = value; break;
      default: throw new Error(`unknown option "${flag}"\n${USAGE}`);
    }
  }
  if (!(o.dur > 0)) throw new Error('--dur must be > 0');
  return o;
}

function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err, pid: child.pid }));
    if (opts.onSpawn) opts.onSpawn(child);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function profileImpl(o, impl, dir) {
  const data = path.join(dir, `${impl}.data`);
  const script = path.join(__dirname, 'throughput-s2c.js');
  // Sampling starts 1.5 s in (start-up, handshake and the 0.5 s warm-up are
  // over by then) and ends `dur` s later, before the child's window closes.
  const lead = 1.5;
  let perf;
  const childDone = run(o.node, ['--perf-basic-prof', script, `impl=${impl}`, `tlsVersion=${o.tls}`,
    `fragment=${o.fragment}`, `recvbuflen=${o.recvbuflen}`, `dur=${o.dur + lead + 0.5}`], {
    onSpawn: (child) => {
      perf = sleep(lead * 1000).then(() => run('perf', ['record', '-q', '-F', '1000', '-e', 'cpu-clock',
        '-p', String(child.pid), '-o', data, '--', 'sleep', String(o.dur)]));
    },
  });
  const [child, rec] = await Promise.all([childDone, childDone.then(() => perf)]);
  if (child.code !== 0) throw new Error(`${impl} benchmark failed:\n${child.err}`);
  if (rec.code !== 0) throw new Error(`perf record failed:\n${rec.err}`);
  const result = JSON.parse(child.out);
  const report = execFileSync('perf', ['report', '-i', data, '--no-children', '--sort', 'dso,sym',
    '-g', 'none', '--stdio', '--percent-limit', '0', '-F', 'sample,dso,sym'],
  { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  const costs = new Map();
  let total = 0;
  const top = [];
  for (const line of report.split('\n')) {
    const m = /^\s*(\d+)\s+(\S+)\s+\[[.k]\]\s+(.*?)\s*$/.exec(line);
    if (!m) continue;
    const samples = Number(m[1]);
    const dso = m[2];
    const sym = m[3];
    total += samples;
    const cat = (CATEGORIES.find(([, test]) => test(dso, sym)) || [OTHER])[0];
    costs.set(cat, (costs.get(cat) || 0) + samples);
    top.push({ samples, dso, sym, cat });
  }
  const gib = (result.mibps * o.dur) / 1024;
  return { impl, result, costs, total, gib, top: top.sort((a, b) => b.samples - a.samples).slice(0, o.top) };
}

function pad(s, n) {
  return String(s).padEnd(n);
}

async function main() {
  const o = parseCli(process.argv.slice(2));
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('perf is not installed (Debian: apt-get install linux-perf)');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-profile-'));
  try {
    const runs = [];
    for (const impl of ['builtin', 'tlswrap']) {
      process.stderr.write(`profiling ${impl} ${o.tls} fragment=${o.fragment} recvbuflen=${o.recvbuflen}...\n`);
      runs.push(await profileImpl(o, impl, dir));
    }
    const [b, t] = runs;
    const version = execFileSync(o.node, ['-p', 'process.version + " (OpenSSL " + process.versions.openssl + ")"'], { encoding: 'utf8' }).trim();
    console.log(`profile: ${o.tls} fragment=${o.fragment} recvbuflen=${o.recvbuflen}, node ${version}, ${o.dur} s sampled`);
    console.log(`command: node benchmark/profile.js ${process.argv.slice(2).join(' ')}`);
    console.log(`MiB/s while sampled: builtin ${b.result.mibps}, tlswrap ${t.result.mibps} (ratio ${(t.result.mibps / b.result.mibps).toFixed(2)})`);
    console.log('');
    console.log('| CPU ms per GiB                  | builtin | tlswrap |');
    console.log('|---------------------------------|---------|---------|');
    for (const name of [...CATEGORIES.map(([n]) => n), OTHER]) {
      const bv = (b.costs.get(name) || 0) / b.gib;
      const tv = (t.costs.get(name) || 0) / t.gib;
      console.log(`| ${pad(name, 31)} | ${pad(bv.toFixed(0), 7)} | ${pad(tv.toFixed(0), 7)} |`);
    }
    console.log(`| ${pad('total', 31)} | ${pad((b.total / b.gib).toFixed(0), 7)} | ${pad((t.total / t.gib).toFixed(0), 7)} |`);
    // What no TLS layer on top of OpenSSL's SSL_read/SSL_write and a TCP
    // socket can avoid (its copies in and out of the record buffers are in
    // the memcpy row), and the ratio that would allow even if tlswrap spent
    // nothing anywhere else.
    const floorCats = ['cipher (AES-GCM, GHASH)', 'kernel: TCP, syscalls, copies',
      'memcpy/memmove (user space)', 'OpenSSL, other than the cipher'];
    const floor = floorCats.reduce((sum, name) => sum + (t.costs.get(name) || 0), 0) / t.gib;
    console.log('');
    console.log(`tlswrap in cipher + OpenSSL + kernel + copies: ${floor.toFixed(0)} ms/GiB of ${(t.total / t.gib).toFixed(0)}; ` +
      `builtin total / that = ${((b.total / b.gib) / floor).toFixed(2)} (the ratio if nothing else cost anything)`);
    for (const r of runs) {
      console.log('');
      console.log(`top functions, ${r.impl} (% of its samples):`);
      for (const f of r.top) {
        console.log(`  ${((100 * f.samples) / r.total).toFixed(1).padStart(5)}%  ${f.sym.slice(0, 70)}  [${f.cat}]`);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
