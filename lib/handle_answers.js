'use strict';

// What the handle answered when OpenSSL failed the handshake. node:tls
// keeps its handle through the 'error' (a server's 'tlsClientError') of
// such a failure, so the protocol, cipher, certificates... a program logs
// there are still known; tlswrap's engine is gone by then, so the answers
// are taken before it goes and kept until 'close'.
const kAnswered = ['getProtocol', 'getCipher', 'getEphemeralKeyInfo', 'getSharedSigalgs', 'getFinished',
  'getPeerFinished', 'isSessionReused', 'getSession', 'getTLSTicket', 'getPeerLeaf', 'getCertificate'];
function answersOf(handle) {
  // Taken on the way to 'error': a question the failed engine cannot
  // answer must not turn into a throw there, so it answers null.
  const ask = (name, ...args) => {
    try {
      return handle[name](...args);
    } catch {
      return null;
    }
  };
  const answers = {};
  for (const name of kAnswered) {
    const value = ask(name);
    answers[name] = () => value;
  }
  const chain = ask('getPeerCertChain') || [];
  const rawChain = ask('getPeerCertChain', true) || [];
  answers.getPeerCertChain = (raw) => (raw ? rawChain : chain);
  return answers;
}

// The live handle, else the answers kept from a failed handshake, else null.
function answering(socket) {
  if (socket._handle !== null) return socket._handle;
  return socket._answersAfterError;
}

module.exports = { answersOf, answering };
