'use strict';

// Writes to the module's DEFAULT_* / CLIENT_RENEG_* properties are passed on
// to lib/index.mjs, whose named exports are `let` bindings: ESM importers see
// the new value at once instead of a copy taken at import time.

const listeners = [];

module.exports = {
  onDefaultSet(fn) {
    listeners.push(fn);
  },
  defaultSet(name, value) {
    for (const fn of listeners) fn(name, value);
  },
};
