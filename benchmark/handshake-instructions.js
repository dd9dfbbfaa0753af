'use strict';

// Instructions per new TLS connection, full handshake against resumed, both
// ends in one process, counted by valgrind (callgrind): the ratio issue 10
// asks of CPU time, without this machine's timing noise.
//
//   node benchmark/handshake-instructions.js [impl=tlswrap]
//     [tlsVersion=TLSv1.3] [key=rsa] [groups=] [conns=100]
//
// Each of full (resume=0) and resumed (resume=1; tlswrap through its
// session cache, cache=1; node:tls with `session` passed by hand) runs
// handshake.js under callgrind twice, making `conns` and then 3 x `conns`
// connections one at a time. The difference of the totals over the extra
// connections cancels start-up and the first JIT tiers. Every thread of the
// process is counted (OpenSSL, V8, node, the addon, libc); the kernel is not
// (TCP connect, accept and close, which a resumed connection costs as much
// as a full one, so the CPU-time ratio is higher than this one). A few
// minutes per impl. Prints one JSON line per handshake kind, then the ratio.

const path = require('node:path');
const common = require('./common.js');

const { opts } = common.setup({
  impl: 'tlswrap',
  tlsVersion: 'TLSv1.3',
  key: 'rsa',
  groups: '',
  conns: 100,
}, (o) => {
  common.checkInt(o, 'conns', 1);
});

common.checkValgrind();
const script = path.join(__dirname, 'handshake.js');
const perConn = {};
for (const resume of [0, 1]) {
  const args = [script, `impl=${opts.impl}`, `tlsVersion=${opts.tlsVersion}`, `key=${opts.key}`, 'concurrency=1',
    `resume=${resume}`, ...(resume && opts.impl === 'tlswrap' ? ['cache=1'] : []),
    ...(opts.groups ? [`groups=${opts.groups}`] : [])];
  const short = common.callgrindEvents([...args, `conns=${opts.conns}`]).Ir;
  const long = common.callgrindEvents([...args, `conns=${3 * opts.conns}`]).Ir;
  const kind = resume ? 'resumed' : 'full';
  perConn[kind] = (long - short) / (2 * opts.conns);
  console.log(JSON.stringify({
    bench: 'handshake-instructions', impl: opts.impl, tlsVersion: opts.tlsVersion, key: opts.key,
    groups: opts.groups || 'default', handshake: kind, conns: opts.conns,
    instructionsPerConnection: Math.round(perConn[kind]), ...common.runtimeInfo(),
  }));
}
console.log(JSON.stringify({ ratio: 'resumed/full', instructions: +(perConn.resumed / perConn.full).toFixed(3) }));
