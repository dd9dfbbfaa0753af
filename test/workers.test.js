'use strict';

// Worker threads: many TLS connections between workers, then workers that
// are terminate()d mid-transfer or call process.exit() with connections
// open. The process that hosts them must not crash or hang, and every fd the
// workers opened must be closed once they are gone. Runs in a child process
// (a crash or hang there fails the test, not mocha) that counts its own
// /proc/self/fd.

const assert = require('node:assert');
const fs = require('node:fs');
const { runChild, describeExit } = require('./run-child');

describe('worker threads', function () {
  this.timeout(30000);

  it('8 workers x 100 connections among themselves; terminate() and process.exit() mid-transfer: no crash, no fd left', async function () {
    if (!fs.existsSync('/proc/self/fd')) this.skip();
    const run = await runChild('workers-fd.js', [100], { limitMs: 25000 });
    assert.ok(run.code === 0 && run.result, describeExit(run));
    const { before, after, exits, errors } = run.result;
    assert.deepStrictEqual(errors, []);
    // terminate() ends a worker with code 1, process.exit(0) with 0.
    assert.deepStrictEqual(exits, [1, 1, 1, 0, 0, 0, 0, 0]);
    // Fewer is fine (node may close one of its own lazily); more is a leak.
    assert.ok(after <= before, `fds before the workers: ${before}, after: ${after}`);
  });
});

// Small 'data' chunks of all connections are slices of one shared block, as
// small Buffers share node's pool (PERFORMANCE.md, "Memory of delivered chunks").
// Like node's pool, the block is untransferable: a program that posts one
// connection's chunk.buffer to a worker gets a copy (Node 20) or a
// DataCloneError (Node 21+), and no other connection's chunk is detached.
describe("a 'data' chunk's buffer posted to another thread", function () {
  const { once } = require('node:events');
  const { MessageChannel } = require('node:worker_threads');
  const { builtin, tlswrap, serverOptions, clientOptions, listen, release } = require('./common');

  it("never detaches another connection's chunk", async function () {
    // node:tls 24 on hands out views of a shared 64 KiB buffer that it does
    // not protect: its transfer detaches the other chunk.
    if (builtin && Number(process.versions.node.split('.')[0]) >= 24) this.skip();
    const server = tlswrap.createServer(serverOptions(), (sock) => {
      sock.once('data', (d) => sock.write(`reply to ${d}`));
    });
    const port = await listen(server);
    const sockets = [];
    const chunkOf = async (tag) => {
      const client = tlswrap.connect(clientOptions(port));
      sockets.push(client);
      await once(client, 'secureConnect');
      client.write(tag);
      const [chunk] = await once(client, 'data');
      return chunk;
    };
    const { port1, port2 } = new MessageChannel();
    try {
      const chunkB = await chunkOf('B');
      const chunkA = await chunkOf('A');
      assert.strictEqual(chunkB.toString(), 'reply to B');
      let posted = true;
      try {
        port1.postMessage(chunkA.buffer, [chunkA.buffer]);
      } catch (err) {
        assert.strictEqual(err.name, 'DataCloneError');
        posted = false;
      }
      if (posted) {
        const [received] = await once(port2, 'message');
        assert.ok(received.byteLength >= chunkA.length);
      }
      assert.strictEqual(chunkB.toString(), 'reply to B', "the other connection's chunk");
      // A copy (Node 20), or nothing: A's own chunk stays, too, as node's
      // pooled Buffers do.
      if (!builtin) assert.strictEqual(chunkA.toString(), 'reply to A');
    } finally {
      port1.close();
      port2.close();
      await release(sockets, null, server);
    }
  });
});
