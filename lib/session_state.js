'use strict';

// node:tls's wrapped client sessions. Since 24.22 node:tls hands a client
// its session as a prefix, the name the server was verified for and then
// the DER, and takes one back only for a connection to that same name
// (node skips the name check on a resumed connection, so a session must not
// cross names). tlswrap hands out the DER and checks the name on every
// connection, resumed or not; it takes node's form too, so sessions a
// program kept from node:tls still resume, and only for their name. And
// which node:tls binds server sessions to the server name, and how.

const nodeTls = require('node:tls');

const kPrefix = Buffer.from('\0nodejs:tls:session:1\0', 'latin1');

// The name a client connection verifies, as node:tls and onConnectSecure
// pick it.
function serverIdentity(options) {
  return (options && (options.servername || options.host || (options.socket && options.socket._host))) ||
    'localhost';
}

// The DER to offer for `session` (a Buffer) on a client connection with
// these options: the session itself, or what node's form wraps; undefined
// when node's form names another server.
function sessionForReuse(session, options) {
  if (session.length < kPrefix.length + 2 || kPrefix.compare(session, 0, kPrefix.length) !== 0) return session;
  const start = kPrefix.length + 2;
  const end = start + session.readUInt16BE(kPrefix.length);
  if (session.length < end) return session;
  if (session.toString('utf8', start, end) !== serverIdentity(options)) return undefined;
  return session.subarray(end);
}

// Whether node:tls's server binds each session to the server name, as
// SHA-256(sessionIdContext, NUL, name), the name empty when the client sent
// none; before, and on 20 and 26, it binds to the sessionIdContext as
// given. tlswrap binds named sessions always, and unnamed ones as the
// running node:tls does, so that a fleet of both shares sessions with
// clients that send no name. Each release at the boundary was run for it:
// 22.23.3 and 24.22.1 do not bind, 22.23.5 and 24.22.3 do (22.23.4 and
// 24.22.2 are not on npm), 20.20.2 and 26.12.1 do not.
const [nodeMajor, nodeMinor, nodePatch] = process.versions.node.split('.').map(Number);
const nodeBindsSessionsToNames =
  (nodeMajor === 22 && (nodeMinor > 23 || (nodeMinor === 23 && nodePatch >= 5))) ||
  (nodeMajor === 24 && (nodeMinor > 22 || (nodeMinor === 22 && nodePatch >= 3)));

// node:tls's connect() takes a string session (as latin1) where it wraps
// sessions; before, its handle refuses one.
const nodeTakesStringSessions = /getSessionForReuse|wrapSessionState/.test(
  Function.prototype.toString.call(nodeTls.TLSSocket.prototype.setSession));

module.exports = { nodeBindsSessionsToNames, nodeTakesStringSessions, serverIdentity, sessionForReuse };
