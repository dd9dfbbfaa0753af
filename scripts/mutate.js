'use strict';

// Mutation check of the test suite: each entry of MUTATIONS is a small
// deliberate bug. One at a time, it is applied to a temporary copy of the
// repository, the addon is rebuilt there, and the suite runs on both
// transports (mocha --bail), after the engine's C++ tests for a mutation in
// src/engine. A mutation the suite does not notice "survived":
// some promise has no test that can fail. Usage:
//
//   npm run mutate                 every mutation (about 1-2 min each)
//   npm run mutate -- NAME [NAME]  only these
//   npm run mutate -- --list       the list, nothing run
//
// A search string that is not found (or found twice) is an error: the list
// must follow the code. Environment: MUTATE_TIMEOUT (seconds per mocha run,
// default 600), MUTATE_KEEP=1 keeps the temporary copy, MUTATE_SPEC="test/a.test.js
// test/b.test.js" runs only those files (to check that a new test kills a
// mutation, quicker than the whole suite), MUTATE_JOBS (node-gyp's -j, default 2).
//
// An entry may end with { node: MAJOR, tests: FILE }: its tests can only fail
// on a Node that has the feature (FILE's tests skip where it lacks it), so its
// mocha runs use build-node/MAJOR's binary (the one npm run test:node24
// installs; installed here too if missing), whatever Node runs this script.
// The addon is Node-API, so the copy's one build loads there. A major is not
// enough (an older 24.x lacks what a later one has), so before any mutation
// runs, FILE runs once unmutated under that Node and every test in it must
// run, none pending. If that Node cannot be had, or FILE's tests skip there,
// the mutation is reported "skipped", never killed or survived.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { nodeOfMajor, run, testsAllRun } = require('./mutate_run');

const root = path.join(__dirname, '..');

// [name, file, search, replacement, description, { node: MAJOR, tests: FILE }?]
// Node 24.19+ (not the major alone) has certificate compression in node:tls.
const NODE24 = { node: 24, tests: 'test/cert-compression.test.js' };
const MUTATIONS = [
  // ---- coalescing ----
  ['one-record-per-read', 'src/engine/engine.cc',
    '      read_fill_ = fill;\n    }',
    '      read_fill_ = fill;\n      break;\n    }',
    'ClearOut stops after one SSL_read: no coalescing of buffered records'],
  ['chunk-256k', 'src/engine/engine.h',
    'kMaxClearChunk = 64 * 1024;', 'kMaxClearChunk = 256 * 1024;',
    'coalesced plaintext chunks up to 256 KiB instead of 64 KiB'],
  ['onread-no-copy', 'src/binding/tls_wrap_delegate.cc',
    'std::memcpy(dest, data, n);', '(void)dest;',
    'onread: the later parts of a burst split by an event are not copied into the buffer onread gives'],
  ['onread-rest-in-place', 'src/binding/tls_wrap_delegate.cc',
    'bool later = onread_rest_batch_ == batch.data && from >= onread_rest_from_;', 'bool later = false;',
    'onread: the rest of a split burst is read from the buffer the first callback was given (and kept)'],
  ['onread-echo-by-reference', 'src/binding/tls_wrap_delegate.cc',
    '  if (read_buffer_.IsEmpty()) return;\n  source->CopyWithin', '  return;\n  source->CopyWithin',
    "onread: a write of onread's buffer waits by reference, and the next decrypt overwrites it"],
  ['pin-through-array', 'src/binding/js_write_source.h',
    'refs_.push_back(piece.copied ? Napi::ObjectReference()', 'refs_.push_back(true ? Napi::ObjectReference()',
    'a waiting write keeps no reference to its chunks'],
  ['onread-no-direct', 'src/engine/engine.cc',
    'if (user_buffers_ || (established() && buffered >= kWholeRecord)) {',
    'if (established() && buffered >= kWholeRecord) {',
    'onread: small bursts are decrypted into scratch, then dropped (no user buffer asked)'],
  // ---- ordering ----
  ['events-before-data', 'src/binding/tls_wrap_cycle.cc',
    'size_t at = std::min(next.offset, batch.len);', 'size_t at = 0;',
    'events of a batch are delivered before the plaintext that preceded them'],
  ['event-offset-zero', 'src/engine/engine.cc',
    'events_.push_back(Event{type, read_fill_,', 'events_.push_back(Event{type, 0,',
    'events are stamped at offset 0 instead of where they happened'],
  ['reneg-not-queued', 'src/engine/engine_control.cc',
    '    renegotiate_wanted_ = true;\n', '    SSL_renegotiate(ssl());\n',
    'renegotiation starts at once, ahead of the writes queued before it'],
  ['hello-request-before-writes', 'src/engine/engine_callbacks.cc',
    '      engine->writes_first_ = true;\n', '',
    "a TLS 1.2 client's 'secureConnect' write waits behind a HelloRequest read with the server's Finished"],
  ['write-refused-fails-at-once', 'lib/socket_errors.js',
    '      if (this._inWrite) {', '      if (false) {',
    "a write refused inside write() fails the socket there: 'error' before the callbacks of the writes after it"],
  ['write-done-early', 'src/engine/engine_writes.cc',
    'done_.front().ciphertext_end <= flushed_', 'true',
    'a write callback runs before its ciphertext reached the transport'],
  // ---- lifetime ----
  ['write-source-ignores-js', 'src/binding/js_write_source.h',
    'if (piece.copied || (!pinned_ && entries_ == js_entries)) {', 'if (piece.copied || !pinned_) {',
    "a write's chunk pointers are used after JavaScript ran (and could detach them) within write()"],
  ['write-source-not-pinned', 'src/binding/js_write_source.h',
    '    if (pinned_) return;\n    pinned_ = true;\n', '    if (pinned_) return;\n',
    "a write still queued when write() returns keeps reading through the call's pointers"],
  ['calljs-not-noted', 'src/binding/js_call.cc',
    '  NoteJsEntry();\n', '',
    "entering JavaScript through CallJs does not invalidate a write's chunk pointers"],
  ['idle-sweep-frees-nothing', 'src/binding/idle_sweep.cc',
    '    entry->engine->FreeIdleBuffers();\n', '',
    "idle connections keep OpenSSL's record buffers (the sweep's tick frees nothing)"],
  ['destroy-never-releases', 'src/binding/tls_wrap.cc',
    '  if (depth_ == 0) Release();\n  return Napi::Boolean::New(env, flushed);\n}',
    '  return Napi::Boolean::New(env, flushed);\n}',
    'destroy() outside a callback never frees the native object'],
  ['scope-never-releases', 'src/binding/tls_wrap_cycle.cc',
    'if (--wrap_->depth_ == 0 && wrap_->destroyed_) wrap_->Release();', '--wrap_->depth_;',
    'destroy() from inside a handler never frees the native object'],
  ['self-ref-kept', 'src/binding/tls_wrap.cc',
    '    self_ref_ = false;\n    Unref();', '    self_ref_ = false;',
    'the strong self-reference is never dropped (leak)'],
  ['release-under-openssl', 'src/binding/tls_wrap.cc',
    '  if (depth_ == 0) Release();\n  return Napi::Boolean::New(env, flushed);\n}',
    '  Release();\n  return Napi::Boolean::New(env, flushed);\n}',
    'destroy() from a callback under OpenSSL (ALPNCallback) frees at once, not on the way out'],
  ['client-sessions-never-asked', 'lib/socket.js',
    "this._handle.enableSessionEvents(true, false);", '/* not asked */',
    "a client's 'session' listener never turns the engine's session events on"],
  ['client-sessions-unasked', 'src/engine/engine_callbacks.cc',
    '  if (!engine->new_session_events_) return 0;\n', '',
    'every new session is encoded and emitted, a listener or not (and holds back the reads behind it)'],
  ['keylog-never-installed', 'src/engine/engine_callbacks.cc',
    '    SSL_CTX_set_keylog_callback(ctx, KeylogCallback);\n', '',
    "a 'keylog' listener never installs OpenSSL's keylog callback"],
  ['h2-write-not-recorded', 'lib/http2.js',
    '      this[kCurrentWriteRequest] = req;\n      if (reading)', '      if (reading)',
    "tlswrap/http2's direct write does not record itself as the wrapper's write in flight"],
  ['unauthorized-session-cached', 'lib/connect.js',
    'if (socket.authorized && !(handPassed', 'if (!(handPassed',
    'sessionCache keeps the session of a connection that failed verification'],
  ['hand-passed-session-cached', 'lib/connect.js',
    'if (socket.authorized && !(handPassed && socket.isSessionReused()))', 'if (socket.authorized)',
    "sessionCache keeps the tickets of a connection that resumed a hand-passed session"],
  ['destroy-keeps-output', 'src/engine/engine.cc',
    '  events_.clear();\n  enc_out_.Clear();\n}', '  events_.clear();\n}',
    'destroy() keeps already encrypted output queued for the transport'],
  ['destroy-sent-write-canceled', 'lib/socket.js',
    'writeSent ? undefined : writeCanceledError()', 'writeCanceledError()',
    'a write that destroy() sends on its way out (the peer gets it) is called back with ECANCELED'],
  ['raw-destroy-ends-late', 'lib/transport_takeover.js',
    '    if (transport !== null) transportDestroyed(owner, transport, transport.errored);\n', '',
    'a destroyed net.Socket under a taken-over connection: the TLS socket goes on sending until its close'],
  ['transport-error-unreleased', 'lib/transport.js',
    "  if (owner._errorsReleased) owner.emit('error', err);", "  owner.emit('error', err);",
    "a socket made by hand gets its net.Socket's destroy(err) as 'error', where node:tls gives only '_tlsError'"],
  ['raw-eof-ends-raw', 'lib/transport.js',
    '  if (chunk === null && owner._handle !== null) {', '  if (false) {',
    "generic transport: the peer's FIN reaches the net.Socket under a TLS socket, which emits 'end' (node:tls's does not)"],
  ['raw-shutdown-by-end', 'lib/transport.js',
    '  if (!carriedByPush(transport) || transportEnded(transport)', '  if (true',
    "generic transport: the FIN is sent by the net.Socket's end(), which emits 'finish' (node:tls's does not)"],
  ['raw-read-error-passed-on', 'lib/transport.js',
    '    if (err !== owner._ignoredTransportError && !owner.destroyed) owner.destroy(err);\n',
    '    if (err !== owner._ignoredTransportError && !owner.destroyed) emitTransportError(owner, err);\n',
    "generic transport: a failed read of the net.Socket under a TLS socket made by hand is '_tlsError' alone, not its 'error'"],
  ['raw-read-error-raw-fails', 'lib/transport.js',
    '    return net.Socket.prototype._destroy.call(this, null, cb);\n',
    '    return net.Socket.prototype._destroy.call(this, err, cb);\n',
    "generic transport: a peer's reset is also the net.Socket's 'error' and 'close' with hadError (node:tls's gets neither)"],
  ['second-wrap-keeps-first', 'lib/transport.js',
    "    previous.destroy(systemError('read', 'EALREADY'));\n", '',
    'a second TLS socket over a net.Socket leaves the first open (generic transport: for good), or both fail'],
  ['raw-destroy-js-closes-late', 'lib/transport.js',
    '  if (transport._destroy === net.Socket.prototype._destroy) transport._destroy = destroyCarried;\n', '',
    "generic transport: a net.Socket the program destroys closes before its TLS socket (node:tls's closes after it)"],
  ['raw-destroy-in-read-is-io', 'lib/transport.js',
    '    transport[kInRead] = args[0] === undefined;\n', '    transport[kInRead] = true;\n',
    "generic transport: a net.Socket destroyed with an error from a 'data' listener passes for a failed read (hadError true)"],
  ['takeover-output-not-held', 'src/binding/tls_wrap_cycle.cc',
    'if (!transport_ || engine_->transport_held()) return false;', 'if (!transport_) return false;',
    "a takeover's engine writes its first flight while node's own bytes are still queued (they interleave)"],
  ['takeover-close-not-held', 'src/engine/engine.cc',
    '!output_held() &&\n      !transport_held_) {', '!output_held()) {',
    "end() during a takeover half-closes the connection before node's queued bytes are out"],
  ['takeover-starts-late', 'lib/transport_takeover.js',
    '    socket._handover = false;\n    if (socket._startWanted) socket._start();\n  });', '  });',
    "a takeover's engine starts once node's bytes are out: a peer that never reads them and sends 64 KiB is never seen"],
  // ---- write grouping ----
  ['no-staging', 'src/engine/engine_writes.cc',
    'if (rest >= kStageThreshold || w->piece + 1 == w->source->count()) {', 'if (true) {',
    'small chunks of one writev are encrypted one record per chunk'],
  ['no-write-slices', 'src/engine/engine_writes.cc',
    'len = std::min(rest, kWriteSlice);', 'len = rest;',
    'a large write is encrypted whole instead of in bounded slices'],
  ['js-backpressure-ignored', 'src/transport_js.cc',
    'return !more.IsBoolean() || more.As<Napi::Boolean>().Value();', 'return true;',
    "generic transport ignores the Duplex's write() === false"],
  ['nodelay-dropped', 'src/transport_uv.cc',
    'uv_tcp_nodelay(&tcp_, enable ? 1 : 0)', '0',
    'setNoDelay() on the native transport does nothing'],
  ['keepalive-dropped', 'src/transport_uv.cc',
    'uv_tcp_keepalive(&tcp_, enable ? 1 : 0, delay_seconds)', '0',
    'setKeepAlive() on the native transport does nothing'],
  // ---- verification ----
  ['socket-host-ignored', 'lib/session_state.js',
    ' || (options.socket && options.socket._host)', '',
    "connect({ socket }) without servername checks 'localhost', not the socket's host"],
  ['reject-env-ignored', 'lib/connect.js',
    "process.env.NODE_TLS_REJECT_UNAUTHORIZED === '0';", 'false;',
    'NODE_TLS_REJECT_UNAUTHORIZED=0 is not honoured'],
  ['no-name-check', 'lib/connect.js',
    'verifyError = checkIdentity(this, check, serverIdentity(options));',
    'void serverIdentity;',
    'the server name is never checked'],
  ['client-cert-optional', 'src/engine/engine_control.cc',
    'if (request_cert && reject_unauthorized) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;', '',
    'requestCert + rejectUnauthorized accepts a client without certificate'],
  ['session-key-ignores-context', 'lib/session_cache.js',
    'parts.push(`context=${context}`);', "parts.push('context=');",
    'a cached session crosses context options (CA sets, partial chains, the default store)'],
  ['session-key-ignores-alpn', 'lib/session_cache.js',
    "`alpn=${alpn.ALPNProtocols ? alpn.ALPNProtocols.toString('hex') : ''}`,", "'alpn=',",
    'a cached session crosses ALPN offers'],
  ['psk-throw-swallowed', 'lib/psk.js',
    '    return psk;\n  } catch (err) {\n    socket.destroy(err);',
    '    return psk;\n  } catch (err) {\n    void err;',
    "a server pskCallback that throws is treated as an unknown identity, its error lost"],
  ['ocsp-staple-lost', 'src/engine/engine_callbacks.cc',
    'bool stapled = resp != nullptr && len >= 0;', 'bool stapled = false;',
    "the client reports no staple although the server sent one"],
  ['psk-dropped-key-counts', 'src/engine/engine_callbacks.cc',
    'if (len > 0 && KeyKeptByOpenSsl(ssl)) engine->psk_key_given_ = true;',
    'if (len > 0) engine->psk_key_given_ = true;',
    "a TLS 1.3 key OpenSSL drops unchecked authorizes the foreign ticket it takes instead"],
  ['unnamed-sessions-unbound', 'src/engine/engine_callbacks.cc',
    'if (!name.empty() || (bind_unnamed_ && !id.empty())) {', 'if (!name.empty()) {',
    "a session with no server name is bound to the context as given where node:tls 22.23.5+/24.22.3+ binds it " +
    'to the empty name: such sessions do not cross between their servers and tlswrap\'s'],
  // ---- error handling ----
  ['error-queue-dirty', 'src/engine/openssl_ptr.h',
    '~ErrorQueueGuard() { Clear(); }', '~ErrorQueueGuard() {}',
    "OpenSSL's error queue is left with tlswrap's errors on exit"],
  ['data-lost-before-error', 'src/engine/engine.cc',
    '  if (fill > 0) {\n    if (direct) {', '  if (fill > 0 && err != SSL_ERROR_SSL) {\n    if (direct) {',
    'plaintext decrypted before a bad record is dropped with the error'],
  ['no-eof-without-close-notify', 'src/engine/engine.cc',
    'err == SSL_ERROR_WANT_READ && transport_eof_ && !full', 'false',
    "a peer's FIN without close_notify never ends the stream"],
  ['reneg-with-partial-record', 'src/engine/engine.cc',
    'if (renegotiate_wanted_ && phase_ != Phase::kFailed', 'if (false && renegotiate_wanted_ && phase_ != Phase::kFailed',
    'a renegotiation is asked for while OpenSSL holds part of a record (it stays pending)'],
  ['server-reneg-waits-for-empty-buffer', 'src/engine/engine.cc',
    'phase_ != Phase::kFailed && !is_server() &&', 'phase_ != Phase::kFailed &&',
    "a server's renegotiation waits until its peer stops sending"],
  ['input-kept-after-close', 'src/engine/engine.cc',
    '    enc_in_.Clear();\n    return false;\n  }\n  const bool paused', '    return false;\n  }\n  const bool paused',
    'ciphertext that arrives after close_notify or a fatal error piles up in enc_in'],
  ['paused-handshake-misses-eof', 'src/engine/engine.cc',
    '  if (reading_ && paused && transport_eof_) {', '  if (false) {',
    'a client that leaves while an SNICallback or session listener has not answered goes unnoticed'],
  ['new-session-hold-outlives-client', 'src/engine/engine.h',
    'return new_sessions_pending_ > 0 && !transport_eof_;', 'return new_sessions_pending_ > 0;',
    "a 'newSession' listener that never answers keeps the server socket open after the client left"],
  ['session-key-without-name', 'lib/session_cache.js',
    '    `name=${serverIdentity(options)}`,\n', '',
    'a session a custom check passed for one host name resumes, unchecked, for another on the same path'],
  ['h2-read-write-finished-late', 'lib/http2.js',
    '        } else if (reading) {\n', '        } else if (false) {\n',
    "tlswrap/http2 finishes a write made during a read (input held back) after the ticks: a client reports a GOAWAY before the body's 'end'"],
  ['h2-read-write-not-early', 'lib/http2.js',
    '  wrapper.finishWrite(wrapper._handle, 0);\n', '',
    "tlswrap/http2's 'stream' handlers run while the read's write is unfinished: a destroy() at once there loses the response"],
  ['h2-write-not-held', 'lib/http2.js',
    '      if (this[kUnsent] !== null) {', '      if (false) {',
    "tlswrap/http2 writes while a write it finished early is still with the TLS socket: two writes in flight"],
  ['h2-write-finished-late', 'lib/http2.js',
    'queueMicrotask(() => finishReadWriteNT(this, handle, req));', 'setImmediate(finishWriteNT, this, handle, req, 0);',
    "tlswrap/http2 finishes nghttp2's own writes from an immediate: a session destroy()ed from an immediate sends no GOAWAY"],
  ['h2-input-unpaced', 'lib/h2_pacing.js',
    '        if (opens && i < end) {', '        if (false) {',
    'tlswrap/http2 feeds a whole chunk of HEADERS frames before any handler runs: maxSessionMemory is bypassed'],
  ['h2-goaway-uncut', 'lib/h2_pacing.js',
    'chunk[i + 3] === kGoaway &&\n', 'false &&\n',
    "tlswrap/http2 feeds a GOAWAY with the frames before it: 'goaway' comes before the last stream's 'close'"],
  ['h2-held-start-lost', 'lib/h2_pacing.js',
    'wrapper[kReading] && wrapper.stream.isPaused()) wrapper.stream.resume();', 'false) wrapper.stream.resume();',
    "nghttp2's start, put off while a cut chunk waited, is dropped: the session stops reading"],
  ['h2-rest-before-microtasks', 'lib/h2_pacing.js',
    'process.nextTick(feedPendingLaterNT, wrapper);', 'process.nextTick(feedPendingNT, wrapper);',
    "the rest of a cut chunk is fed before the microtasks: `await once(req, 'response')` misses the stream's 'end'"],
  ['h2-eof-overtakes', 'lib/h2_pacing.js',
    'if (wrapper[kPending] !== null) wrapper[kAfterPending].push(', 'if (false) wrapper[kAfterPending].push(',
    "the TLS socket's end reaches nghttp2 before the frames held back: a closing server's GOAWAY is lost"],
  ['write-progress-ignored', 'lib/net_surface.js',
    '&& handle.writeProgressed()) {', '&& false) {',
    'the idle timeout fires in the middle of a large write a slow reader keeps taking'],
  ['stale-write-front', 'src/engine/engine_writes.cc',
    '    w = &writes_.front();\n', '',
    'ClearIn goes on with its pointer into the write queue after a callback under SSL_write grew it'],
  ['roots-first-match-only', 'src/engine/root_store.cc',
    '    if (added && first == nullptr) first = e.cert.get();\n',
    '    if (added && first == nullptr) first = e.cert.get();\n    if (first != nullptr) break;\n',
    'the default store offers verification only the first root of a name (a renewed root is never tried)'],
  ['roots-lookup-keeps-reference', 'src/engine/root_store.cc',
    '  X509_free(found);\n', '',
    'each root lookup leaks a reference to the certificate it returns'],
  ['roots-read-trusted-blocks', 'src/engine/root_store.cc',
    'return blocks == RootCertificates::Blocks::kWithTrustSettings &&',
    'return true ||',
    'TRUSTED CERTIFICATE blocks join the default store without their rejected uses (node skips them)'],
  ['ca-drops-trust-settings', 'src/engine/root_store.cc',
    'e.cert.reset(blocks_ == Blocks::kWithTrustSettings ? d2i_X509_AUX(nullptr, &p, len)',
    'e.cert.reset(false ? d2i_X509_AUX(nullptr, &p, len)',
    'a TRUSTED CERTIFICATE block in `ca` is decoded without its trust settings (trusted for what it rejects)'],
  ['ca-list-first-text-only', 'src/binding/secure_context.cc',
    'for (uint32_t i = 0; i < list.Length(); i++) texts.push_back(TextOf(list.Get(i)));',
    'if (list.Length() > 0) texts.push_back(TextOf(list.Get(0u)));',
    'only the first entry of a `ca` array is trusted'],
  ['ca-no-client-names', 'src/engine/context_config.cc',
    '  if (set->size() == 0) return true;',
    '  return true;',
    'a server with `ca` names no acceptable client CAs in its CertificateRequest'],
  // ---- certificate compression (the tests skip before Node 24.19: run on 24) ----
  ['cert-compression-on-by-default', 'src/binding/secure_context.cc',
    '  cert_compression::Disable(ctx);\n', '',
    "every client offers OpenSSL 3.2+'s certificate compression, which node:tls leaves off", NODE24],
  ['certs-not-compressed', 'lib/context.js',
    '  if (compress !== null) context.compressCertificates();\n', '',
    'certificateCompression is offered but the certificate is never sent compressed', NODE24],
  ['server-drops-cert-compression', 'lib/server.js',
    '      certificateCompression: options.certificateCompression,\n', '',
    "createServer() ignores certificateCompression", NODE24],
  ['sni-drops-compressed-cert', 'src/engine/engine_control.cc',
    ' || !cert_compression::CopyCompressed(ctx, ssl())', '',
    "a context chosen by SNI sends its certificate uncompressed though it has it compressed", NODE24],
  ['sni-compresses-unasked', 'src/engine/cert_compression.cc',
    'const uintptr_t chosen = Chosen(ctx);', 'const uintptr_t chosen = ~uintptr_t{0};',
    'a context chosen by SNI sends its certificate compressed without having asked (OpenSSL compresses it per connection)',
    NODE24],
  ['cert-compression-shares-context', 'lib/context_cache.js',
    "  'blockList',\n", "  'blockList', 'certificateCompression',\n",
    'connect() shares one client context between different certificateCompression choices', NODE24],
  ['cert-compression-any-range', 'lib/context.js',
    '  if (maxVersion !== 0 && maxVersion < TLS1_3_VERSION) {', '  if (false) {',
    'certificateCompression is accepted for a TLS 1.2-only context, as node:tls does not', NODE24],
  ['own-store-drops-roots', 'src/binding/secure_context.cc',
    '    AttachDefaultRoots(store);\n  }\n  return SSL_CTX_get_cert_store(ctx);',
    '  }\n  return SSL_CTX_get_cert_store(ctx);',
    'a context that makes a store of its own (crl, allowPartialTrustChain) stops trusting the default roots not yet decoded'],
  ['stage-whole-slice', 'src/engine/engine_writes.cc',
    'staging_.reserve(want);', 'staging_.reserve(kWriteSlice);',
    'a small write makes (and, idle, frees) a whole 256 KiB staging block per request'],
  ['default-name-check-skipped', 'lib/connect.js',
    'if (leaf !== undefined && check(hostname, sharedCertificate(leaf)) === undefined) return undefined;',
    'if (leaf !== undefined) return undefined;',
    'with node\'s checkServerIdentity (the default) the name is never checked'],
  ['identity-any-function-shared', 'lib/connect.js',
    "if (typeof fn !== 'function') return false;", "return typeof fn === 'function';",
    'a wrapper installed as tls.checkServerIdentity before loading is handed the shared, non-detailed parse'],
  ['identity-error-shared-cert', 'lib/connect.js',
    'if (leaf !== undefined && check(hostname, sharedCertificate(leaf)) === undefined) return undefined;',
    'if (leaf !== undefined) return check(hostname, sharedCertificate(leaf));',
    "a failed name check's err.cert is the cached parse: no chain, and a program's edits reach later connections"],
  ['stage-no-record-fill', 'src/engine/engine_writes.cc',
    'if (partial != 0) total += kStageThreshold - partial;', '(void)partial;',
    'a frame header before a large payload goes out as a TLS record of its own'],
  ['one-record-per-cycle', 'src/engine/engine_writes.cc',
    'if (encrypted >= kWriteSlice) return true;', 'return true;',
    'each staged record leaves in a transport write of its own'],
  ['session-memo-by-length', 'src/binding/addon.cc',
    'std::string key(reinterpret_cast<const char*>(der), len);', 'std::string key = std::to_string(len);',
    'a decoded session is found by the DER\'s length, not its bytes (a changed ticket resumes)'],
  ['read-after-eof', 'src/transport_uv.cc',
    'reading_ || read_done_) return;', 'reading_) return;',
    'the native transport reads again after EOF (a half-open socket spins)'],
  ['error-code-case', 'src/binding/errors.cc',
    "c = c == ' ' ? '_' : static_cast<char>(std::toupper(c));", "c = c == ' ' ? '_' : c;",
    'error codes keep the reason\'s lower case (ERR_SSL_wrong_version_number)'],
  ['ocsp-empty-staples', 'src/engine/engine_callbacks.cc',
    'if (response.empty()) return SSL_TLSEXT_ERR_NOACK;\n  // OpenSSL takes the memory over (and frees it with OPENSSL_free).\n' +
      '  auto* copy = static_cast<unsigned char*>(OPENSSL_malloc(response.size()));',
    'auto* copy = static_cast<unsigned char*>(OPENSSL_malloc(response.empty() ? 1 : response.size()));',
    'an empty OCSPRequest answer is stapled as an empty CertificateStatus (clients fail the handshake)'],
  ['issuer-repeats', 'src/binding/tls_wrap_info.cc',
    'if (X509_cmp(issuer.get(), cert) == 0) break;', '(void)0;',
    'a trusted certificate that may not sign repeats in getPeerCertificate(true) up to the depth limit'],
  ['self-ref-from-birth', 'src/binding/tls_wrap.cc',
    '  napi_add_env_cleanup_hook(env, CleanupHook, this);\n  cleanup_hook_ = true;\n}',
    '  Ref();\n  self_ref_ = true;\n  napi_add_env_cleanup_hook(env, CleanupHook, this);\n  cleanup_hook_ = true;\n}',
    'every native object keeps itself alive until destroy(): sockets dropped on a JS Duplex are never collected'],
  ['js-transport-waits-for-drain', 'src/transport_js.cc',
    'if (idle()) return true;', '(void)0;',
    "a Duplex whose write() calls back yet answers false stalls the engine until a 'drain' that never comes"],
];

function log(...args) {
  process.stdout.write(args.join(' ') + '\n');
}

// Applies `m` to the text of its file in `dir`; throws if the search string
// is not there exactly once.
function checkedReplace(text, m) {
  const [name, file, search, replacement] = m;
  const at = text.indexOf(search);
  if (at < 0) throw new Error(`mutation ${name}: search string not found in ${file}`);
  if (text.indexOf(search, at + 1) >= 0) throw new Error(`mutation ${name}: search string not unique in ${file}`);
  return text.slice(0, at) + replacement + text.slice(at + search.length);
}

function nodeGyp() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  return path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules',
    'node-gyp', 'bin', 'node-gyp.js');
}

function firstFailure({ output, code, signal }) {
  const report = (output.split(/\d+ failing/)[1] || '').split('\n');
  const first = report.findIndex((line) => /^\s+1\) /.test(line));
  if (first >= 0) {
    // The outermost suite and the test: mocha indents each nested title
    // deeper than the one before, and the error message less.
    const indent = (line) => line.search(/\S/);
    let last = first;
    const deeper = (i) => indent(report[i + 1]) > indent(report[i]) + (i === first ? '1) '.length : 0);
    while (last + 1 < report.length && deeper(last)) last++;
    const outer = report[first].replace(/^\s+1\) /, '');
    // A hook or a top-level test: its title, then its error's first line.
    if (last === first) last = Math.min(first + 1, report.length - 1);
    return `${outer} / ${report[last].trim()}`.slice(0, 110);
  }
  // No failure report: mocha itself died (a crash under a test).
  const lines = output.trim().split('\n');
  return `mocha ${signal || `exit ${code}`} after: ${(lines[lines.length - 1] || '').trim()}`.slice(0, 110);
}

function makeCopy() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tlswrap-mutate-'));
  // Build outputs stay behind: their dependency files name this checkout's
  // paths, so a mutated header would not rebuild what includes it there.
  // build-node/'s Node binaries (a few hundred MiB) run from this checkout.
  const topSkip = new Set(['build', 'build-engine', 'build-asan', 'build-fuzz', 'build-node', '.git']);
  fs.cpSync(root, dir, {
    recursive: true,
    filter: (src) => path.basename(src) !== 'node_modules' &&
      !(path.dirname(src) === root && topSkip.has(path.basename(src))),
  });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

// The headers the repository's own build used (npm passes its nodedir to
// scripts; run directly, take it from build/config.gypi).
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  try {
    const gypi = fs.readFileSync(path.join(root, 'build', 'config.gypi'), 'utf8');
    const m = /"nodedir": "([^"]+)"/.exec(gypi);
    return m ? [`--nodedir=${m[1]}`] : [];
  } catch {
    return [];
  }
}

async function build(dir, full) {
  const jobs = String(Number(process.env.MUTATE_JOBS) || 2);
  const args = [nodeGyp(), full ? 'rebuild' : 'build', '-j', jobs, ...(full ? nodedirArgs() : [])];
  return run(process.execPath, args, { cwd: dir, env: process.env, limitSec: 900 });
}

async function main() {
  const argv = process.argv.slice(2);
  // Every entry must still match the code, whichever are run.
  for (const m of MUTATIONS) checkedReplace(fs.readFileSync(path.join(root, m[1]), 'utf8'), m);
  const names = new Set(MUTATIONS.map((m) => m[0]));
  if (names.size !== MUTATIONS.length) throw new Error('two mutations share a name');
  for (const [name, , , , , opts] of MUTATIONS) {
    const valid = opts === undefined ||
      (Object.keys(opts).sort().join() === 'node,tests' && Number.isInteger(opts.node) && opts.node >= 20 &&
       typeof opts.tests === 'string' && fs.existsSync(path.join(root, opts.tests)));
    if (!valid) {
      throw new Error(`mutation ${name}: its options are not { node: MAJOR, tests: FILE } with FILE in the repository`);
    }
  }
  if (argv.includes('--list')) {
    for (const [name, file, , , what, opts] of MUTATIONS) {
      log(`${name.padEnd(28)} ${file.padEnd(32)} ${opts ? `[Node ${opts.node}, ${opts.tests} all run] ` : ''}${what}`);
    }
    return;
  }
  for (const n of argv) if (!names.has(n)) throw new Error(`no mutation named ${n} (see --list)`);
  const chosen = argv.length ? MUTATIONS.filter((m) => argv.includes(m[0])) : MUTATIONS;
  const limitSec = Number(process.env.MUTATE_TIMEOUT) || 600;
  const started = Date.now();

  // The Nodes the chosen entries need, before anything is built.
  const nodes = new Map();
  for (const m of chosen) {
    const major = m[5] && m[5].node;
    if (major && !nodes.has(major)) {
      const n = await nodeOfMajor(major);
      log(n.error ? `skipping what needs Node ${major}: ${n.error}` : `Node ${major}: ${n.bin} (${n.version})`);
      nodes.set(major, n);
    }
  }
  const current = { bin: process.execPath, version: process.version };

  const dir = makeCopy();
  log(`copy: ${dir}; building the addon there`);
  const base = await build(dir, true);
  if (base.code !== 0) throw new Error(`the unmutated copy does not build:\n${base.output}`);

  const env = { ...process.env };
  delete env.TLSWRAP_TEST_BUILTIN;
  delete env.TLSWRAP_ADDON;
  delete env.TLSWRAP_TRANSPORT;
  const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');

  // Each gated entry's tests, unmutated, on its Node: a mutation whose tests
  // would all skip there can neither be killed nor survive.
  const gates = new Map();
  for (const m of chosen) {
    const opts = m[5];
    if (!opts || nodes.get(opts.node).error) continue;
    const key = `${opts.node} ${opts.tests}`;
    if (!gates.has(key)) {
      const g = await testsAllRun(nodes.get(opts.node), mocha, dir, env, opts.tests, limitSec);
      log(g.error ? `skipping what needs ${opts.tests} on Node ${opts.node}: ${g.error}` :
        `${opts.tests}: all ${g.tests} tests run on ${nodes.get(opts.node).version}`);
      gates.set(key, g);
    }
  }
  const spec = (process.env.MUTATE_SPEC || '').split(/\s+/).filter(Boolean);
  const specArgs = spec.length ? ['--no-config', '--timeout', '30000', ...spec] : [];
  const results = [];
  let stale = false;
  try {
    for (const m of chosen) {
      const [name, file] = m;
      const node = m[5] && m[5].node ? nodes.get(m[5].node) : current;
      const gate = m[5] && !node.error ? gates.get(`${m[5].node} ${m[5].tests}`) : {};
      const unmet = node.error || gate.error;
      if (unmet) {
        results.push([m, { status: 'skipped', by: unmet, secs: 0, node: node.version || '' }]);
        log(`skipped  ${name}: ${unmet}`);
        continue;
      }
      const target = path.join(dir, file);
      const original = fs.readFileSync(target, 'utf8');
      const t0 = Date.now();
      let result;
      try {
        fs.writeFileSync(target, checkedReplace(original, m));
        // A C++ file restored after the previous mutation is rebuilt too.
        if (!file.startsWith('lib/') || stale) {
          const b = await build(dir, false);
          if (b.code !== 0) result = { status: 'killed', by: 'build failed' };
        }
        stale = !file.startsWith('lib/');
        // An engine mutation meets the engine's own tests first: some engine
        // promises (nothing kept after Destroy()) cannot be seen from JS.
        if (!result && file.startsWith('src/engine/') && !spec.length) {
          const r = await run('bash', [path.join(dir, 'scripts', 'test-engine.sh')], { cwd: dir, env, limitSec });
          const failed = /^FAIL (.*)$/m.exec(r.output);
          if (r.timedOut) result = { status: 'killed', by: `engine: timed out after ${limitSec}s` };
          else if (r.code !== 0) result = { status: 'killed', by: `engine: ${failed ? failed[1] : `exit ${r.code}`}`.slice(0, 110) };
        }
        for (const transport of ['native', 'js']) {
          if (result) break;
          // The copy's conventions test would find this mutation's search
          // string gone and fail, killing every mutation the tests before it
          // miss: it skips its mutation-list check under a mutation.
          const runEnv = { ...env, TLSWRAP_MUTATION: name };
          if (transport === 'js') runEnv.TLSWRAP_TRANSPORT = 'js';
          else delete runEnv.TLSWRAP_TRANSPORT;
          // --exit: a test that failed under the mutation may leave its
          // server open, and the run would wait out limitSec for nothing.
          const r = await run(node.bin, [mocha, '--bail', '--exit', ...specArgs], { cwd: dir, env: runEnv, limitSec });
          if (r.timedOut) result = { status: 'killed', by: `${transport}: timed out after ${limitSec}s` };
          else if (r.code !== 0) result = { status: 'killed', by: `${transport}: ${firstFailure(r)}` };
        }
        if (!result) result = { status: 'SURVIVED', by: '' };
      } finally {
        fs.writeFileSync(target, original);
      }
      result.secs = Math.round((Date.now() - t0) / 1000);
      result.node = node.version;
      results.push([m, result]);
      log(`${result.status.padEnd(8)} ${name} (${result.secs}s, ${node.version}) ${result.by}`);
    }
  } finally {
    if (process.env.MUTATE_KEEP) log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }

  log('\n| mutation | file | node | result | first failing test | s |');
  log('|---|---|---|---|---|---|');
  for (const [[name, file], r] of results) log(`| ${name} | ${file} | ${r.node} | ${r.status} | ${r.by} | ${r.secs} |`);
  const named = (status) => results.filter(([, r]) => r.status === status).map(([m]) => m[0]);
  const survivors = named('SURVIVED');
  const skipped = named('skipped');
  log(`\n${named('killed').length}/${results.length} killed in ${Math.round((Date.now() - started) / 1000)}s` +
      (survivors.length ? `; survived: ${survivors.join(', ')}` : '') +
      (skipped.length ? `; skipped (not run): ${skipped.join(', ')}` : ''));
  // A mutation not run is not a pass either.
  process.exitCode = survivors.length || skipped.length ? 1 : 0;
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exitCode = 2;
});
