'use strict';

// builtin node:tls vs tlswrap, side by side (`npm run bench`).
//
//   node benchmark/compare.js [--runs 3] [--dur 3] [--tls 1.2,1.3]
//     [--fragment 1024,4096,16384] [--recvbuflen 0,65536] [--type buf]
//     [--cipher AES-256-GCM] [--node /path/to/node] [--bun /path/to/bun]
//   node benchmark/compare.js --handshake [--runs 3] [--dur 3] [--tls ...]
//     [--concurrency 8] [--node ...]
//   node benchmark/compare.js --https [--runs 3] [--dur 3] [--tls 1.3]
//     [--proto h1,h2] [--client node] [--node ...]
//
// Every measurement is its own child process (throughput-s2c.js,
// handshake.js or https.js), so one impl's heap, JIT state or leaked handles cannot
// colour the other's numbers. Within a cell the impls alternate
// (builtin, tlswrap, builtin, tlswrap, ...) so that drift in machine load
// hits both about equally. Progress goes to stderr, the table (markdown, to
// paste into PERFORMANCE.md) to stdout, every raw run to
// benchmark/results/compare-<timestamp>.csv. A child that fails is shown as
// failed in its cell; it does not stop the run.
//
// --bun PATH adds a third impl, "bun": the same script with impl=builtin run
// by that Bun binary, so node:tls as Bun implements it is in the same
// rotation (builtin, tlswrap, bun, ...) and the table has a column for it.
// Without --bun nothing about the run changes.

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { normalizeTlsVersion } = require('./common.js');

const BASE_IMPLS = ['builtin', 'tlswrap'];
// What a child's `unsupported` list means, for the table's notes.
const UNSUPPORTED = {
  gc: "GC counts (perf_hooks has no 'gc' entries)",
  cpuUsage: 'CPU time (no process.cpuUsage)',
  rss: 'RSS (no process.memoryUsage.rss)',
  maxRSS: 'the OS RSS high-water mark (no process.resourceUsage)',
};
// Short names for the "b / t / bun" columns.
const SHORT = { builtin: 'b', tlswrap: 't', bun: 'bun' };
const GiB = 1024 * 1024 * 1024;
const MiB = 1024 * 1024;
// Per-process cost on top of warm-up + dur (startup, handshake, teardown),
// only for the ETA shown at start.
const WARMUP = 0.5;
const OVERHEAD = 0.7;

const USAGE = `usage: node benchmark/compare.js [options]
  --runs N            runs per impl per cell (default 3)
  --dur S             timed seconds per run (default 3)
  --tls LIST          TLS versions, e.g. 1.3 or 1.2,1.3 (default both)
  --fragment LIST     record sizes (default 1024,4096,16384)
  --recvbuflen LIST   0 = 'data' events, N = onread buffer (default 0,65536)
  --type LIST         buf, asc, utf (default buf)
  --cipher NAME       AES-256-GCM, AES-128-GCM, CHACHA20-POLY1305 (default AES-256-GCM)
  --node PATH         run the benchmark children under this node binary
  --bun PATH          also run the node:tls cells under this Bun binary (a third column)
  --handshake         measure full handshakes per second instead of throughput
  --concurrency N     connections in flight for --handshake (default 8)
  --resume LIST       0 = full handshakes, 1 = resumed (node:tls passing \`session\` by
                      hand, tlswrap through connect({ sessionCache })) (default 0)
  --key LIST          rsa, p256: the server's key for --handshake (default rsa)
  --split             --handshake with the server in a child process: the client's
                      and the server's CPU per connection in columns of their own
  --https             HTTPS / HTTP/2 servers (https.js): requests/s and download MiB/s
  --proto LIST        h1, h2 for --https (default both)
  --client LIST       node, tlswrap: the load generator's client library for --https (default node)`;

function parseCli(argv) {
  const o = {
    runs: 3,
    dur: 3,
    tls: ['TLSv1.2', 'TLSv1.3'],
    fragment: [1024, 4096, 16384],
    recvbuflen: [0, 65536],
    type: ['buf'],
    cipher: 'AES-256-GCM',
    node: process.execPath,
    bun: null,
    handshake: false,
    concurrency: 8,
    resume: [0],
    key: ['rsa'],
    split: false,
    https: false,
    proto: ['h1', 'h2'],
    client: ['node'],
  };
  let tlsGiven = false;
  const list = (v) => String(v).split(',').map((s) => s.trim()).filter(Boolean);
  const num = (name, v) => {
    const n = Number(v);
    if (v === undefined || v === '' || !Number.isFinite(n)) throw new Error(`${name} needs a number, got "${v}"`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => (value !== undefined ? value : argv[++i]);
    switch (arg) {
      case '--runs': o.runs = num(arg, next()); break;
      case '--dur': o.dur = num(arg, next()); break;
      case '--tls': o.tls = list(next()).map(normalizeTlsVersion); tlsGiven = true; break;
      case '--fragment': o.fragment = list(next()).map((v) => num(arg, v)); break;
      case '--recvbuflen': o.recvbuflen = list(next()).map((v) => num(arg, v)); break;
      case '--type': o.type = list(next()); break;
      case '--cipher': o.cipher = next(); break;
      case '--node': o.node = next(); break;
      case '--bun': o.bun = next(); break;
      case '--handshake': o.handshake = true; break;
      case '--concurrency': o.concurrency = num(arg, next()); break;
      case '--resume': o.resume = list(next()).map((v) => num(arg, v)); break;
      case '--key': o.key = list(next()); break;
      case '--split': o.split = true; break;
      case '--https': o.https = true; break;
      case '--proto': o.proto = list(next()); break;
      case '--client': o.client = list(next()); break;
      case '-h':
      case '--help':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option "${arg}"\n${USAGE}`);
    }
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs must be an integer >= 1');
  if (!(o.dur > 0)) throw new Error('--dur must be > 0');
  if (o.https && o.handshake) throw new Error('--https and --handshake are separate runs');
  if (o.resume.some((r) => r !== 0 && r !== 1)) throw new Error('--resume takes 0 and/or 1');
  if (o.split && !o.handshake) throw new Error('--split is for --handshake');
  // A request/response cell costs both versions' time for little news: the
  // HTTP cells default to TLS 1.3 only.
  if (o.https && !tlsGiven) o.tls = ['TLSv1.3'];
  if (o.bun !== null && !o.bun) throw new Error('--bun needs the path of a bun binary');
  o.impls = o.bun ? [...BASE_IMPLS, 'bun'] : BASE_IMPLS;
  return o;
}

// The cells of the grid, each with the key=value args its child gets.
// The --https cells: proto, body size and what is in flight. A body over
// 1 MiB is a download, shown in MiB/s; the others in requests/s.
const HTTPS_CELLS = [
  { proto: 'h1', size: 1024, concurrency: 1 },
  { proto: 'h1', size: 1024, concurrency: 50 },
  { proto: 'h1', size: 65536, concurrency: 1 },
  { proto: 'h1', size: 65536, concurrency: 50 },
  { proto: 'h1', size: 256 * MiB, concurrency: 1 },
  { proto: 'h2', size: 1024, concurrency: 100 },
  { proto: 'h2', size: 256 * MiB, concurrency: 1 },
];

const isDownload = (cell) => cell.size > MiB;

function buildCells(o) {
  const cells = [];
  if (o.https) {
    for (const tlsVersion of o.tls) {
      for (const client of o.client) {
        for (const c of HTTPS_CELLS) {
          if (o.proto.includes(c.proto)) cells.push({ ...c, client, tlsVersion, cipher: o.cipher, dur: o.dur });
        }
      }
    }
    return cells;
  }
  if (o.handshake) {
    for (const tlsVersion of o.tls) {
      for (const key of o.key) {
        for (const resume of o.resume) {
          const cell = { tlsVersion, key, resume, concurrency: o.concurrency, cipher: o.cipher, dur: o.dur };
          if (o.split) cell.split = 1;
          cells.push(cell);
        }
      }
    }
    return cells;
  }
  for (const tlsVersion of o.tls) {
    for (const fragment of o.fragment) {
      for (const recvbuflen of o.recvbuflen) {
        for (const type of o.type) {
          cells.push({ tlsVersion, fragment, recvbuflen, type, cipher: o.cipher, dur: o.dur });
        }
      }
    }
  }
  return cells;
}

function sizeLabel(n) {
  return n >= MiB ? `${n / MiB} MiB` : `${n / 1024} KiB`;
}

function cellLabel(cell, o) {
  if (o.handshake) {
    const parts = [cell.tlsVersion];
    if (o.key.length > 1 || cell.key !== 'rsa') parts.push(cell.key);
    if (o.resume.length > 1 || cell.resume) parts.push(cell.resume ? 'resumed' : 'full');
    return parts.join(' ');
  }
  if (o.https) {
    const what = isDownload(cell)
      ? `${sizeLabel(cell.size)} download, MiB/s`
      : `${sizeLabel(cell.size)} x ${cell.concurrency} ${cell.proto === 'h2' ? 'streams' : 'conns'}, req/s`;
    const extra = [o.tls.length > 1 ? cell.tlsVersion : '', o.client.length > 1 ? `client=${cell.client}` : '']
      .filter(Boolean).join(' ');
    return `${cell.proto} ${what}${extra ? ` ${extra}` : ''}`;
  }
  const parts = [cell.tlsVersion, `frag=${cell.fragment}`, `recvbuf=${cell.recvbuflen}`];
  if (o.type.length > 1 || cell.type !== 'buf') parts.push(`type=${cell.type}`);
  return parts.join(' ');
}

// The executable and key=value args of one child. "bun" is node:tls under
// Bun; its --https load generator runs under our node, as the others' does.
function childCommand(o, impl, cell) {
  // tlswrap resumes the way a tlswrap program would: through its cache.
  if (impl === 'tlswrap' && cell.resume) return { exe: o.node, args: { impl, ...cell, cache: 1 } };
  if (impl !== 'bun') return { exe: o.node, args: { impl, ...cell } };
  const args = { impl: 'builtin', ...cell };
  if (o.https) args.loadnode = o.node;
  return { exe: o.bun, args };
}

function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

// Run one child; resolve (never reject) with { ok, result, error, code }.
function runChild(exe, script, args, o) {
  return new Promise((resolve) => {
    // Its own process group: a timeout kills what it started too (https.js's
    // load generator), which would otherwise hold the output pipes open and
    // this run with them.
    const child = spawn(exe, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    current = child;
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    // A hung child (e.g. an impl that never delivers data) must not hang the
    // whole comparison; the children have their own 15 s no-data guard, this
    // is the backstop.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, (o.dur + WARMUP + 30) * 1000);
    const finish = (code, signal, spawnErr) => {
      clearTimeout(timer);
      current = null;
      const lines = stdout.split('\n').filter((l) => l.trim());
      let result = null;
      try {
        result = lines.length ? JSON.parse(lines[lines.length - 1]) : null;
      } catch {
        result = null;
      }
      // Exit code 3 = result printed but the process did not exit by itself:
      // the number stands, the warning goes to the CSV.
      const ok = result !== null && (code === 0 || code === 3);
      let error = '';
      if (spawnErr) error = spawnErr.message;
      else if (timedOut) error = 'timed out (killed)';
      else if (ok && code === 3) error = 'did not exit by itself after printing its result';
      else if (!ok) {
        // An uncaught throw prints the source line and a caret first; the
        // "SomeError: message" line is the one worth showing.
        const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
        const msg = lines.find((l) => /^[\w.]*Error\b.*:/.test(l)) || lines[0];
        const how = signal ? `killed by ${signal}` : `exit code ${code}`;
        error = msg ? (signal ? `${how}: ${msg}` : msg) : `${how}, no result`;
      }
      resolve({ ok, result: ok ? result : null, error, code: spawnErr ? null : code });
    };
    child.on('error', (err) => finish(null, null, err));
    child.on('close', (code, signal) => finish(code, signal));
  });
}

let current = null; // the running child, killed on Ctrl-C

function mean(xs) {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

// Sample standard deviation: the runs are a sample of the machine's noise.
function sd(xs) {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

function fmt(x, digits) {
  return Number.isFinite(x) ? x.toFixed(digits) : '—';
}

// CSV: one row per child, written as it finishes so a Ctrl-C keeps them.
const CSV_COLUMNS = [
  'bench', 'impl', 'run', 'ok', 'tlsVersion', 'fragment', 'recvbuflen', 'type', 'proto', 'size', 'client', 'concurrency',
  'cipher', 'dur', 'value', 'unit', 'bytes', 'conns', 'elapsed', 'chunks', 'allocKiBPerMiB', 'allocBytes',
  'cpuUser', 'cpuSystem', 'peakRssMiB', 'maxRssMiB', 'majorGC', 'minorGC', 'gcMs', 'clientCpu', 'serverCpuMsPerConn',
  'cipherSuite', 'group',
  'runtime', 'tlsLibrary', 'node', 'openssl', 'unsupported', 'exitCode', 'error',
];

function csvField(v) {
  if (v === undefined || v === null) return '';
  const s = Array.isArray(v) ? v.join(' ') : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function machineLine(o) {
  // Ask the node that runs the children, which may not be this one.
  let v;
  try {
    v = execFileSync(o.node, ['-p', 'process.version + " (OpenSSL " + process.versions.openssl + ")"'], {
      encoding: 'utf8',
    }).trim();
  } catch (err) {
    throw new Error(`cannot run node binary "${o.node}": ${err.message}`);
  }
  if (o.bun) {
    try {
      const b = execFileSync(o.bun, ['--version'], { encoding: 'utf8' }).trim();
      v += `, bun ${b} (BoringSSL)`;
    } catch (err) {
      throw new Error(`cannot run bun binary "${o.bun}": ${err.message}`);
    }
  }
  const cpus = os.cpus();
  const model = cpus.length ? cpus[0].model.trim() : 'unknown CPU';
  return `${new Date().toISOString().slice(0, 10)}, node ${v}, ${model} x ${cpus.length}, ` +
    `${os.type()} ${os.release()}, ${os.arch()}`;
}

// The run's cipher alone in each runtime (cipher.js), so a table that sets
// two crypto libraries side by side says how fast each one's cipher code is.
function cipherLine(o) {
  const script = path.join(__dirname, 'cipher.js');
  const one = (exe, name) => {
    try {
      const r = JSON.parse(execFileSync(exe, [script, `cipher=${o.cipher}`], { encoding: 'utf8' }));
      return r.unsupported ? `${name} n/a (${r.error})` : `${name} ${fmt(r.sealMiBps, 0)} / ${fmt(r.openMiBps, 0)}`;
    } catch (err) {
      return `${name} failed (${err.message.split('\n')[0]})`;
    }
  };
  const parts = [one(o.node, 'node'), ...(o.bun ? [one(o.bun, 'bun')] : [])];
  return `${o.cipher} alone, seal / open MiB/s in 64 KiB updates (benchmark/cipher.js): ${parts.join('; ')}`;
}

// Per impl in a cell: the successful results and the failures.
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// The mean of a measure over the good runs; null if a run could not give it
// (a runtime without GC entries, say), so the table shows n/a, not 0.
function meanOf(good, f) {
  const xs = good.map(f);
  return xs.some((x) => x === null || x === undefined || Number.isNaN(x)) ? null : mean(xs);
}

function summarize(cellRuns, impl, o, cell) {
  const runs = cellRuns.filter((r) => r.impl === impl);
  const good = runs.filter((r) => r.ok).map((r) => r.result);
  const failed = runs.filter((r) => !r.ok);
  const s = { n: runs.length, good, failed };
  if (good.length === 0) return s;
  const cpu = (r) => (r.cpuUser === null || r.cpuSystem === null ? null : r.cpuUser + r.cpuSystem);
  const per = (x, n, scale) => (x === null || !(n > 0) ? null : (x / n) * scale);
  if (o.handshake) {
    s.values = good.map((r) => r.connsPerSec);
    // split: this process is the client alone; the server child reports its own.
    s.cpu = meanOf(good, (r) => per(cpu(r), r.conns, 1000));
    s.serverCpu = o.split ? meanOf(good, (r) => r.serverCpuMsPerConn) : null;
  } else if (o.https && !isDownload(cell)) {
    // The server's CPU per request, in microseconds.
    s.values = good.map((r) => r.reqPerSec);
    s.cpu = meanOf(good, (r) => per(cpu(r), r.requests, 1e6));
  } else {
    s.values = good.map((r) => r.mibps);
    s.cpu = meanOf(good, (r) => per(cpu(r), r.bytes / GiB, 1));
  }
  s.mean = mean(s.values);
  s.sd = sd(s.values);
  s.median = median(s.values);
  s.min = Math.min(...s.values);
  s.max = Math.max(...s.values);
  // --https: the server's CPU over the load generator's in the same run. The
  // load generator runs the same code against both servers, so this divides
  // out how busy the shared machine was during that run (both processes slow
  // down together); the median over runs.
  const relative = o.https ? good.map((r) => (r.clientCpu > 0 && cpu(r) !== null ? cpu(r) / r.clientCpu : null))
    .filter((x) => x !== null) : [];
  s.relCpu = relative.length ? median(relative) : null;
  s.rss = meanOf(good, (r) => r.peakRssMiB);
  s.majorGC = meanOf(good, (r) => r.majorGC);
  s.alloc = meanOf(good, (r) => r.allocKiBPerMiB);
  return s;
}

function printTable(o, cells, runsByCell, header) {
  const notes = []; // distinct failure messages and caveats, referenced as [n]
  const noteFor = (msg) => {
    let i = notes.indexOf(msg);
    if (i < 0) i = notes.push(msg) - 1;
    return `[${i + 1}]`;
  };
  const impls = o.impls;
  const digits = 1;
  // A cipher suite other than node:tls's in the same cell (Bun ignores the
  // TLS 1.3 `ciphers` option): the number stands, with a note.
  const cipherRefs = (s, b) => {
    const refs = [];
    for (const [field, what] of [['cipherSuite', ''], ['group', 'key exchange ']]) {
      const ref = b.good.length ? b.good[0][field] : undefined;
      const other = [...new Set(s.good.map((r) => r[field]).filter((c) => c && ref && c !== ref))];
      for (const c of other) refs.push(noteFor(`negotiated ${what}${c}, where node:tls negotiated ${ref}`));
      // Bun's getEphemeralKeyInfo() is empty in TLS 1.3: say so rather than
      // let equal groups be assumed (Node 24 uses X25519MLKEM768).
      if (ref && s.good.some((r) => !r[field])) {
        refs.push(noteFor(`${what || 'cipher suite'}not reported, where node:tls negotiated ${ref}`));
      }
    }
    return refs.join('');
  };
  const valueCell = (s, b) => {
    if (s.n === 0) return 'not run';
    const refs = [...new Set(s.failed.map((f) => noteFor(f.error)))].join('');
    if (s.good.length === 0) return `FAILED ${s.failed.length}/${s.n} ${refs}`;
    let t = o.https
      ? `${fmt(s.median, 0)} (${fmt(s.min, 0)}–${fmt(s.max, 0)})`
      : `${fmt(s.mean, digits)} ± ${fmt(s.sd, digits)}`;
    if (s.failed.length) t += ` (${s.failed.length}/${s.n} failed ${refs})`;
    if (s !== b) t += cipherRefs(s, b);
    return t;
  };
  const one = (s, key, d) => {
    if (!s.good.length) return '—';
    return s[key] === null ? 'n/a' : fmt(s[key], d);
  };
  const joined = (sums, key, d) => sums.map((s) => one(s, key, d)).join(' / ');
  const shorts = impls.map((i) => SHORT[i]).join(' / ');

  let unit = o.handshake ? 'conns/s' : 'MiB/s';
  let cpuHead = o.handshake ? `${o.split ? 'client ' : ''}CPU ms/conn` : 'CPU s/GiB';
  if (o.https) {
    unit = 'median (min–max)';
    cpuHead = 'server CPU µs/req or s/GiB';
  }
  const throughput = !o.handshake && !o.https;
  const head = [
    'cell', ...impls.map((i) => `${i} ${unit}`), 'ratio t/b', ...(o.bun ? ['ratio t/bun'] : []),
    `${cpuHead} (${shorts})`, ...(o.https ? [`server / client CPU (${shorts})`] : []),
    ...(o.split ? [`server CPU ms/conn (${shorts})`] : []),
    `peak RSS MiB (${shorts})`, `major GCs/run (${shorts})`,
    ...(throughput ? [`alloc KiB/MiB (${shorts})`] : []),
  ];
  // --https: the ratio of the medians (one slow run on a shared machine
  // should not decide a cell).
  const key = o.https ? 'median' : 'mean';
  const ratio = (t, x) => (t.good.length && x.good.length && x[key] > 0 ? fmt(t[key] / x[key], 2) : '—');
  const rows = [];
  for (const cell of cells) {
    const cellRuns = runsByCell.get(cell);
    if (!cellRuns || cellRuns.length === 0) continue;
    const sums = impls.map((i) => summarize(cellRuns, i, o, cell));
    const [b, t] = sums;
    rows.push([
      cellLabel(cell, o), ...sums.map((s) => valueCell(s, b)),
      ratio(t, b), ...(o.bun ? [ratio(t, sums[2])] : []),
      joined(sums, 'cpu', o.https && !isDownload(cell) ? 0 : 2), ...(o.https ? [joined(sums, 'relCpu', 3)] : []),
      ...(o.split ? [joined(sums, 'serverCpu', 2)] : []),
      joined(sums, 'rss', 0), joined(sums, 'majorGC', 1),
      ...(throughput ? [joined(sums, 'alloc', 0)] : []),
    ]);
  }
  // What a runtime could not measure, once.
  const missing = new Map();
  for (const runs of runsByCell.values()) {
    for (const r of runs) {
      if (r.ok && r.result.unsupported) {
        missing.set(r.impl, r.result.unsupported.map((u) => UNSUPPORTED[u] || u).join(', '));
      }
    }
  }
  for (const [impl, what] of missing) notes.push(`n/a for ${impl}: its runtime does not give ${what}`);

  // Markdown with padded columns: readable in a terminal, pasteable as is.
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cols) => `| ${cols.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  const out = [...header, '', line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`];
  for (const r of rows) out.push(line(r));
  if (notes.length) {
    out.push('');
    notes.forEach((n, i) => out.push(`[${i + 1}] ${n}`));
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

async function main() {
  let o;
  try {
    o = parseCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  const bench = o.https ? 'https' : o.handshake ? 'handshake' : 'throughput-s2c';
  const script = path.join(__dirname, `${bench}.js`);
  const cells = buildCells(o);
  const total = cells.length * o.runs * o.impls.length;

  const header = [
    `${bench}: ${machineLine(o)}`,
    `command: node benchmark/compare.js ${process.argv.slice(2).join(' ')}`.trimEnd(),
    o.handshake
      ? `${o.runs} runs per impl, ${o.dur} s each, ${o.concurrency} in flight, ${o.cipher}, mean ± sd, ` +
        (o.split ? 'the server in a child process' : 'both ends in one process (CPU is both ends\')')
      : o.https
        ? `${o.runs} runs per impl, ${o.dur} s each, ${o.cipher}, keep-alive, load generator in a child process ` +
          `(client: ${o.client.join(', ')}), median (min–max), ratio of medians`
        : `${o.runs} runs per impl, ${o.dur} s each, ${o.cipher}, 16 MiB writes, mean ± sd; ` +
          'alloc = KiB of ArrayBuffers behind the delivered chunks per MiB (benchmark/README.md)',
  ];
  if (o.bun) header.push('bun = node:tls under Bun (impl=builtin run by the --bun binary)');
  if (!o.handshake && !o.https) header.push(cipherLine(o));

  const resultsDir = path.join(__dirname, 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const csvPath = path.join(resultsDir, `compare-${stamp}.csv`);
  fs.writeFileSync(csvPath, `${CSV_COLUMNS.join(',')}\n`);

  const runsByCell = new Map(cells.map((c) => [c, []]));
  let interrupted = false;
  process.on('SIGINT', () => {
    // Stop after the current child; print what we have.
    interrupted = true;
    if (current) killGroup(current);
  });

  const eta = Math.ceil((total * (o.dur + WARMUP + OVERHEAD)) / 60);
  process.stderr.write(`${header[0]}\n${total} runs (${cells.length} cells x ${o.impls.length} impls x ${o.runs}), ` +
    `about ${eta} min. Ctrl-C prints the table so far.\n`);

  let k = 0;
  outer: for (const cell of cells) {
    for (let run = 1; run <= o.runs; run++) {
      for (const impl of o.impls) {
        if (interrupted) break outer;
        k++;
        const cmd = childCommand(o, impl, cell);
        const args = Object.entries(cmd.args).map(([key, v]) => `${key}=${v}`);
        const prefix = `[${String(k).padStart(String(total).length)}/${total}] ${cellLabel(cell, o)} ` +
          `${impl.padEnd(7)} run ${run}/${o.runs}`;
        process.stderr.write(`${prefix} ... `);
        const t0 = Date.now();
        const r = await runChild(cmd.exe, script, args, o);
        if (interrupted) {
          process.stderr.write('interrupted\n');
          break outer;
        }
        runsByCell.get(cell).push({ impl, run, ...r });

        const res = r.result || {};
        let value = o.handshake ? res.connsPerSec : res.mibps;
        let unit = o.handshake ? 'conns/s' : 'MiB/s';
        if (o.https && !isDownload(cell)) {
          value = res.reqPerSec;
          unit = 'req/s';
        }
        const secs = ((Date.now() - t0) / 1000).toFixed(1);
        process.stderr.write(r.ok
          ? `${value} ${unit} (${secs} s)${r.error ? ` warning: ${r.error}` : ''}\n`
          : `FAILED: ${r.error}\n`);

        // The cell's values come last so a failed run's row still says
        // which cell it was.
        const row = {
          ...res, ...cell, bench,
          impl, run, ok: r.ok, value, unit, exitCode: r.code, error: r.error,
        };
        fs.appendFileSync(csvPath, `${CSV_COLUMNS.map((c) => csvField(row[c])).join(',')}\n`);
      }
    }
  }

  printTable(o, cells, runsByCell, header);
  process.stderr.write(`raw runs: ${path.relative(process.cwd(), csvPath)}\n`);
  if (interrupted) process.exitCode = 130;
}

main().catch((err) => {
  process.stderr.write(`${err.message || err}\n`);
  process.exit(1);
});
