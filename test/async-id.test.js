'use strict';

// A socket's handle tells its async id, as node's TLSWrap does: node:http's
// keep-alive agent calls socket._handle.getAsyncId() when a response ends
// (to trigger the socket's 'free' tick), and async_hooks users match it
// against the TLSWRAP resource they saw created.

const assert = require('node:assert');
const asyncHooks = require('node:async_hooks');
const { makePair, release } = require('./common');

describe('handle async id', function () {
  it("getAsyncId() is the id of the connection's TLSWRAP resource, on both ends", async function () {
    const types = new Map();
    const hook = asyncHooks.createHook({ init(id, type) { types.set(id, type); } }).enable();
    let pair;
    try {
      pair = await makePair();
    } finally {
      hook.disable();
    }
    const { server, client, sock } = pair;
    try {
      for (const socket of [client, sock]) {
        const id = socket._handle.getAsyncId();
        assert.strictEqual(typeof id, 'number');
        assert.strictEqual(types.get(id), 'TLSWRAP');
        assert.strictEqual(socket._handle.getAsyncId(), id);
      }
      assert.notStrictEqual(client._handle.getAsyncId(), sock._handle.getAsyncId());
    } finally {
      await release([client, sock], null, server);
    }
  });
});

// node:http's keep-alive agent calls handle.asyncReset(resource) when it
// reuses a socket for a new request: the handle gets a new async id, and the
// socket's callbacks run in the context of whoever reset it.
describe('handle asyncReset', function () {
  const { AsyncLocalStorage } = asyncHooks;

  it('asyncReset(resource): a new TLSWRAP id, init seen with the resource, data in the resetter\'s context', async function () {
    const { server, client, sock } = await makePair();
    try {
      const als = new AsyncLocalStorage();
      const before = client._handle.getAsyncId();
      const inits = [];
      const resource = { reused: true };
      const hook = asyncHooks.createHook({ init(id, type, trigger, res) { if (res === resource) inits.push({ id, type }); } }).enable();
      try {
        als.run('second request', () => client._handle.asyncReset(resource));
      } finally {
        hook.disable();
      }
      const after = client._handle.getAsyncId();
      assert.notStrictEqual(after, before);
      assert.deepStrictEqual(inits, [{ id: after, type: 'TLSWRAP' }]);
      const seen = new Promise((resolve) => client.once('data', () => resolve(als.getStore())));
      sock.write('x');
      assert.strictEqual(await seen, 'second request');
    } finally {
      await release([client, sock], null, server);
    }
  });
});
