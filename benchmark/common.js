'use strict';

// Shared by the per-process benchmarks (throughput-s2c.js, handshake.js):
// option parsing, loading the implementation under test, TLS options for a
// given version/cipher, the resource monitors (CPU, RSS, GC), and running a
// process under callgrind (the *-instructions.js benchmarks).

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PerformanceObserver, performance, constants } = require('node:perf_hooks');

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures');
const MiB = 1024 * 1024;

// Parse `key=value` argv against a table of defaults. Unknown keys are an
// error so that a typo (fragmant=1024) cannot silently measure the default.
// A default's type decides how the value is converted.
function parseArgs(defaults, argv = process.argv.slice(2)) {
  const opts = { ...defaults };
  for (const arg of argv) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new Error(`expected key=value, got "${arg}"`);
    const key = arg.slice(0, eq);
    const raw = arg.slice(eq + 1);
    if (!Object.hasOwn(defaults, key)) {
      throw new Error(`unknown option "${key}" (known: ${Object.keys(defaults).join(', ')})`);
    }
    if (typeof defaults[key] === 'number') {
      const n = Number(raw);
      if (raw === '' || !Number.isFinite(n)) throw new Error(`${key} must be a number, got "${raw}"`);
      opts[key] = n;
    } else {
      opts[key] = raw;
    }
  }
  if ('impl' in opts && opts.impl !== 'builtin' && opts.impl !== 'tlswrap') {
    throw new Error(`impl must be builtin or tlswrap, got "${opts.impl}"`);
  }
  if ('tlsVersion' in opts) opts.tlsVersion = normalizeTlsVersion(opts.tlsVersion);
  return opts;
}

// Accept 1.3 / v1.3 / TLSv1.3 so compare.js and people can be lazy.
function normalizeTlsVersion(v) {
  const m = /^(?:TLS)?v?(1\.[23])$/i.exec(String(v));
  if (!m) throw new Error(`tlsVersion must be TLSv1.2 or TLSv1.3, got "${v}"`);
  return `TLSv${m[1]}`;
}

// Both impls are driven through the same node:tls-shaped API; tlswrap is the
// package root so the benchmark exercises exactly what users require().
function loadImpl(impl) {
  return impl === 'builtin' ? require('node:tls') : require(path.join(__dirname, '..'));
}

// node:https or tlswrap/https, the same way.
function loadHttps(impl) {
  return impl === 'builtin' ? require('node:https') : require(path.join(__dirname, '..', 'lib', 'https.js'));
}

// A benchmark's start: key=value arguments over `defaults`, `check(opts)`
// (throws to refuse them), then the impl. Any failure ends the process.
function setup(defaults, check) {
  try {
    const opts = parseArgs(defaults);
    check(opts);
    return { opts, tls: loadImpl(opts.impl) };
  } catch (err) {
    return fail(err);
  }
}

// Throws unless opts[name] is an integer in [min, max].
function checkInt(opts, name, min, max = Infinity) {
  const v = opts[name];
  if (Number.isInteger(v) && v >= min && v <= max) return;
  const range = max === Infinity ? `>= ${min}` : `in [${min}, ${max}]`;
  throw new Error(`${name} must be an integer ${range}, got ${v}`);
}

// Cipher names per TLS version. TLS 1.3 suites go through the same `ciphers`
// option in node:tls (names starting with TLS_ are routed to
// SSL_CTX_set_ciphersuites). TLS 1.2 names are for an RSA server key;
// tlsOptions() turns them into ECDHE-ECDSA for a P-256 one.
const CIPHERS = {
  'AES-256-GCM': { 'TLSv1.3': 'TLS_AES_256_GCM_SHA384', 'TLSv1.2': 'ECDHE-RSA-AES256-GCM-SHA384' },
  'AES-128-GCM': { 'TLSv1.3': 'TLS_AES_128_GCM_SHA256', 'TLSv1.2': 'ECDHE-RSA-AES128-GCM-SHA256' },
  'CHACHA20-POLY1305': {
    'TLSv1.3': 'TLS_CHACHA20_POLY1305_SHA256',
    'TLSv1.2': 'ECDHE-RSA-CHACHA20-POLY1305',
  },
};

function cipherFor(cipher, tlsVersion) {
  const entry = CIPHERS[cipher];
  if (!entry) throw new Error(`cipher must be one of ${Object.keys(CIPHERS).join(', ')}, got "${cipher}"`);
  return entry[tlsVersion];
}

// Options common to both ends: version pinned on both sides (min = max) so a
// fallback can never pass for a result of the requested version.
// `key`: the server's key, 'rsa' (RSA-2048) or 'p256' (ECDSA P-256), both
// under the same RSA CA.
function tlsOptions(tlsVersion, cipher, key = 'rsa') {
  const fixture = (name) => fs.readFileSync(path.join(FIXTURES, name));
  const common = { minVersion: tlsVersion, maxVersion: tlsVersion, ciphers: cipherFor(cipher, tlsVersion) };
  if (key !== 'rsa' && key !== 'p256') throw new Error(`key must be rsa or p256, got "${key}"`);
  const name = key === 'rsa' ? 'server' : 'server-ec';
  if (key === 'p256') common.ciphers = common.ciphers.replace('ECDHE-RSA-', 'ECDHE-ECDSA-');
  return {
    server: { ...common, key: fixture(`${name}-key.pem`), cert: fixture(`${name}-cert.pem`) },
    // Verify for real (ca + servername) so the client does the same
    // certificate work as a production client would.
    client: { ...common, ca: fixture('ca-cert.pem'), servername: 'localhost', host: '127.0.0.1' },
  };
}

// What runs this process. Under Bun, process.version and
// process.versions.openssl are the Node release and OpenSSL API Bun imitates,
// not what does the work, so the result says Bun and BoringSSL instead.
function runtimeInfo() {
  const v = process.versions;
  if (v.bun) {
    return { runtime: `bun ${v.bun}`, tlsLibrary: `BoringSSL${v.boringssl ? ` ${v.boringssl.slice(0, 12)}` : ''}` };
  }
  return { runtime: `node ${process.version}`, tlsLibrary: `OpenSSL ${v.openssl}`, node: process.version, openssl: v.openssl };
}

// GC entries from perf_hooks are a Node (V8) feature; Bun lists the entry
// types it supports and 'gc' is not one of them, so there the GC counts are
// null (unknown), never 0.
function gcObservable() {
  try {
    const types = PerformanceObserver.supportedEntryTypes;
    return Array.isArray(types) && types.includes('gc');
  } catch {
    return false;
  }
}

// Resource monitor. RSS is sampled from process start (every 100 ms) because
// peak memory is a property of the whole run, including warm-up; CPU and GC
// are reported for the timed window only (begin() .. end()). A measure the
// runtime cannot give is null in the result and named in `unsupported`, so a
// peer runtime (Bun) runs the same script instead of crashing.
function createMonitor() {
  const unsupported = [];
  const has = (name, ok) => {
    if (!ok) unsupported.push(name);
    return ok;
  };
  const hasRss = has('rss', typeof process.memoryUsage === 'function' && typeof process.memoryUsage.rss === 'function');
  const hasCpu = has('cpuUsage', typeof process.cpuUsage === 'function');
  const hasMaxRss = has('maxRSS', typeof process.resourceUsage === 'function');
  const hasGc = has('gc', gcObservable());

  const rssNow = () => (hasRss ? process.memoryUsage.rss() : 0);
  let peakRss = rssNow();
  const sampler = setInterval(() => {
    const rss = rssNow();
    if (rss > peakRss) peakRss = rss;
  }, 100);
  sampler.unref();

  let windowStart = Infinity; // performance.now() at begin()
  let windowEnd = Infinity;
  const gc = { major: 0, minor: 0, ms: 0 };
  const countGc = (entries) => {
    for (const e of entries) {
      // GC entries are delivered asynchronously; filter by when the GC
      // actually happened, not by when we were told about it.
      if (e.startTime < windowStart || e.startTime >= windowEnd) continue;
      // entry.detail.kind since Node 16; entry.kind is the deprecated alias.
      const kind = e.detail ? e.detail.kind : e.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gc.minor++;
      gc.ms += e.duration;
    }
  };
  let obs = null;
  if (hasGc) {
    obs = new PerformanceObserver((list) => countGc(list.getEntries()));
    obs.observe({ entryTypes: ['gc'] });
  }

  let cpuStart;
  return {
    begin() {
      windowStart = performance.now();
      if (hasCpu) cpuStart = process.cpuUsage();
    },
    end() {
      const cpu = hasCpu ? process.cpuUsage(cpuStart) : null;
      windowEnd = performance.now();
      if (obs) {
        // Pick up entries still buffered in the observer before disconnecting.
        countGc(obs.takeRecords());
        obs.disconnect();
      }
      clearInterval(sampler);
      const rss = rssNow();
      if (rss > peakRss) peakRss = rss;
      return {
        cpuUser: cpu ? round(cpu.user / 1e6, 3) : null,
        cpuSystem: cpu ? round(cpu.system / 1e6, 3) : null,
        peakRssMiB: hasRss ? round(peakRss / MiB, 1) : null,
        // OS high-water mark (KiB on Linux): catches spikes between samples.
        maxRssMiB: hasMaxRss ? round(process.resourceUsage().maxRSS / 1024, 1) : null,
        majorGC: hasGc ? gc.major : null,
        minorGC: hasGc ? gc.minor : null,
        gcMs: hasGc ? round(gc.ms, 1) : null,
        ...(unsupported.length ? { unsupported } : {}),
      };
    },
  };
}

function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

// A benchmark child must never hang compare.js, nor exit 0 without a result.
// After a full GC (--expose-gc): heap garbage and freed blocks returned to
// malloc are not counted. Heap garbage, freed blocks returned to malloc, then RSS.
async function settledRss() {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage.rss();
}

function fail(err) {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
}

// valgrind must be there for the *-instructions.js benchmarks.
function checkValgrind() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    fail(new Error('valgrind is not installed (apt-get install valgrind)'));
  }
}

// Runs this node on `args` under callgrind (children it forks are not
// followed) and returns its event totals: { Ir } and, with cachesim, the
// cache misses { I1mr, D1mr, D1mw, ILmr, DLmr, DLmw }.
function callgrindEvents(args, { cachesim = false } = {}) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-cg-')), 'callgrind.out');
  try {
    execFileSync('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`,
      ...(cachesim ? ['--cache-sim=yes'] : []), process.execPath, ...args],
    { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    const text = fs.readFileSync(out, 'utf8');
    const names = /^events: (.+)$/m.exec(text);
    const totals = /^(?:summary|totals): ([\d ]+)$/m.exec(text);
    if (!names || !totals) throw new Error('no event totals in callgrind output');
    const values = totals[1].trim().split(/ +/).map(Number);
    const events = {};
    names[1].trim().split(/ +/).forEach((name, i) => {
      events[name] = values[i] || 0;
    });
    return events;
  } finally {
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }
}

module.exports = {
  callgrindEvents,
  checkValgrind,
  settledRss,
  runtimeInfo,
  MiB,
  parseArgs,
  normalizeTlsVersion,
  loadImpl,
  loadHttps,
  setup,
  checkInt,
  tlsOptions,
  createMonitor,
  round,
  fail,
};
