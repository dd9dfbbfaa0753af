'use strict';

// The key exchange group each server chose on its last verified TLS 1.3
// connection, per session cache key: the next connection under that key sends
// a key share for that group alone (Engine::PredictKeyShare), as rustls's
// client does with its session store. A hint, not a secret: the groups offered
// stay as configured, so a wrong guess costs a HelloRetryRequest, never a
// weaker group. Only with a session cache (opt-in, as resumption is); per
// thread, bounded, least recently stored dropped first.

const MAX_HINTS = 1024;
const hints = new Map();

function keyShareHint(key) {
  return hints.get(key);
}

function rememberKeyShare(key, group) {
  if (typeof group !== 'number' || group === 0 || hints.get(key) === group) return;
  hints.delete(key);
  hints.set(key, group);
  if (hints.size > MAX_HINTS) hints.delete(hints.keys().next().value);
}

module.exports = { keyShareHint, rememberKeyShare, MAX_HINTS };
