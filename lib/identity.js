'use strict';

// A stable number for an object (a SecureContext, a function): where a cache
// key can compare such things only by identity, not by content. Held weakly,
// so a key never keeps its object alive.

let nextId = 1;
const ids = new WeakMap();

function identity(object) {
  let id = ids.get(object);
  if (id === undefined) {
    id = nextId++;
    ids.set(object, id);
  }
  return id;
}

module.exports = { identity };
