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
