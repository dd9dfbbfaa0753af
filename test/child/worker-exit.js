'use strict';

// A worker thread opens a tlswrap server and client, exchanges data, and
// then ends with both connections still open. The main thread waits for the
// worker's exit and then ends by itself: an abort (a libuv handle left open
// at the worker's teardown) or a hang fails the test that runs this file.

const { Worker, isMainThread, parentPort } = require('node:worker_threads');

if (isMainThread) {
  const how = process.argv[2] || 'exit';
  const worker = new Worker(__filename, { argv: [how] });
  worker.on('message', (m) => process.stdout.write(`${m}\n`));
  worker.on('error', (err) => {
    process.stdout.write(`worker error ${err.message}\n`);
    process.exitCode = 1;
  });
  worker.on('exit', (code) => process.stdout.write(`worker exit ${code}\n`));
  if (how === 'terminate') {
    worker.on('message', (m) => {
      if (m === 'connected') worker.terminate();
    });
  }
} else {
  const { tlswrap, serverOptions, clientOptions } = require('../common');
  const how = process.argv[2];
  const server = tlswrap.createServer(serverOptions(), (socket) => socket.write('hello'));
  server.listen(0, '127.0.0.1', () => {
    const client = tlswrap.connect(clientOptions(server.address().port));
    client.once('data', () => {
      parentPort.postMessage(`connected native=${client._native}`);
      parentPort.postMessage('connected');
      // Leave with the server listening and both ends of the connection open.
      if (how === 'exit') process.exit(0);
    });
  });
}
