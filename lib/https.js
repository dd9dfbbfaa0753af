'use strict';

// tlswrap/https: node:https's names over tlswrap. The server is built the way
// node's https.Server is: a TLS server (tlswrap's) whose 'secureConnection'
// listener is node:http's own connection listener, with the HTTP options kept
// by node:http's own storeHTTPOptions. So parsing, keep-alive, the timeouts
// and connection tracking are node's, and every TLS event is the server's.
// The client side is node's https.Agent with tlswrap.connect under it and
// tlswrap's session cache in it.

const http = require('node:http');
const nodeHttps = require('node:https');
const nodeTls = require('node:tls');
const { URL, urlToHttpOptions } = require('node:url');
// Public since node 18 (node:https itself is built from these); nothing else
// gives an http.Server's behaviour to a server that is not a net.Server of
// plain sockets.
const {
  _connectionListener: httpConnectionListener,
  storeHTTPOptions,
  setupConnectionsTracking,
  httpServerPreClose,
} = require('node:_http_server');
const { connect } = require('./connect');
const { invalidArgType } = require('./errors');
const { identity } = require('./identity');
const { SessionCache } = require('./session_cache');
const { Server: TLSServer } = require('./server');

for (const [name, value] of Object.entries({
  _connectionListener: httpConnectionListener, storeHTTPOptions, setupConnectionsTracking, httpServerPreClose,
})) {
  if (typeof value !== 'function') {
    throw new Error(`tlswrap/https: this Node (${process.version}) does not export ${name} from node:_http_server`);
  }
}

function onTlsClientError(err, socket) {
  if (!this.emit('clientError', err, socket)) socket.destroy(err);
}

class Server extends TLSServer {
  constructor(options, requestListener) {
    // node:https offers http/1.1 unless the caller chose its own ALPN.
    let ALPNProtocols = ['http/1.1'];
    if (typeof options === 'function') {
      requestListener = options;
      options = {};
    } else if (options === undefined || options === null) {
      options = {};
    } else if (typeof options !== 'object' || Array.isArray(options)) {
      throw invalidArgType('options', 'Object', options);
    } else if (options.ALPNProtocols || options.ALPNCallback) {
      ALPNProtocols = undefined;
    }
    super({ noDelay: true, ALPNProtocols, ...options }, httpConnectionListener);
    storeHTTPOptions.call(this, options);

    this.httpAllowHalfOpen = false;
    if (requestListener) this.on('request', requestListener);
    this.on('tlsClientError', onTlsClientError);
    this.timeout = 0;
    this.maxHeadersCount = null;
    this.on('listening', setupConnectionsTracking);
  }

  close(...args) {
    httpServerPreClose(this);
    return super.close(...args);
  }
}

Server.prototype.setTimeout = http.Server.prototype.setTimeout;
Server.prototype.closeAllConnections = http.Server.prototype.closeAllConnections;
Server.prototype.closeIdleConnections = http.Server.prototype.closeIdleConnections;
// Symbol.asyncDispose (node 20 keys it with its own symbol): it calls close().
for (const key of Object.getOwnPropertySymbols(nodeHttps.Server.prototype)) {
  Object.defineProperty(Server.prototype, key, Object.getOwnPropertyDescriptor(nodeHttps.Server.prototype, key));
}

// As node's https.Server (and tls.Server here): callable without new.
const CallableServer = new Proxy(Server, {
  apply(target, thisArg, args) {
    return Reflect.construct(target, args);
  },
});

function createServer(options, requestListener) {
  return new Server(options, requestListener);
}

// A request that brings its own checkServerIdentity gets the sockets and
// sessions of that function: a keep-alive socket or a session verified by
// another one must not serve it (node 24 keeps such requests apart with an
// internal mark too). The same function (a pinning check, say) shares them.
const kOwnIdentityCheck = Symbol('tlswrap.https.ownIdentityCheck');

// The Agent's sessions live in a SessionCache (LRU, at most
// maxCachedSessions keys), keyed as connect({ sessionCache }) keys them, so a
// session never crosses servername, CA, client certificate, ALPN offer or
// verification settings, and only verified connections store one. connect()
// reaches it through _getSession/_cacheSession/_evictSession, node's names,
// so a program that overrides them still sees every session.
const kSessions = Symbol('tlswrap.https.sessions');
const kStore = Symbol('tlswrap.https.store');
const kViaProxy = Symbol('tlswrap.https.viaProxy');

// node's https.Agent is a function: it may be called without new, and an
// old-style subclass calls it on its own object (Agent.call(this, options),
// util.inherits), as proxy agents do. So is this one; its methods are the
// class's below.
function Agent(options) {
  if (!new.target && !(this instanceof Agent)) return new Agent(options);
  nodeHttps.Agent.call(this, options);
  // Set by node's constructor, never changed after.
  this[kViaProxy] = hasNodeProxy(this);
  const agent = this;
  this[kStore] = {
    get: (key) => agent._getSession(key),
    set: (key, session) => agent._cacheSession(key, session),
    delete: (key, session) => agent._evictSession(key, session),
  };
}

class AgentMethods extends nodeHttps.Agent {
  // node's { map: { key: session }, list: [keys, least recently used first] },
  // read from the cache (a copy: writing to it changes nothing; assigning a
  // new one replaces the cache's content, as node's constructor does).
  get _sessionCache() {
    const map = {};
    const list = [];
    if (this[kSessions]) {
      for (const [key, entry] of this[kSessions]._entries) {
        if (entry.sessions.length === 0) continue;
        list.push(key);
        map[key] = entry.sessions[0].der;
      }
    }
    return { map, list };
  }

  set _sessionCache(value) {
    this[kSessions] = new SessionCache();
    const list = value && Array.isArray(value.list) ? value.list : [];
    for (const key of list) {
      const session = value.map && value.map[key];
      if (Buffer.isBuffer(session)) this._cacheSession(key, session);
    }
  }

  _getSession(key) {
    if (this.maxCachedSessions === 0) return undefined;
    return this[kSessions].get(key);
  }

  _cacheSession(key, session) {
    if (this.maxCachedSessions === 0) return;
    // Read at each store, as node does: a program may change it later.
    const max = this.maxCachedSessions;
    this[kSessions].max = typeof max === 'number' && max >= 1 ? max : 100;
    this[kSessions].set(key, session);
  }

  // (key) drops the key's sessions, as node's; (key, session) that one.
  _evictSession(key, session) {
    this[kSessions].delete(key, session);
  }

  // (options) | (port, host, options) as node's https.Agent takes them.
  createConnection(port, host, options) {
    // Through a proxy, node's own createConnection: it knows the proxy
    // rules (NO_PROXY, the CONNECT tunnel, its errors and timeout), and it
    // calls back once the tunnel is up, so every argument goes to it.
    if (this[kViaProxy]) return nodeHttps.Agent.prototype.createConnection.apply(this, arguments);
    if (port !== null && typeof port === 'object') {
      options = { ...port };
    } else if (host !== null && typeof host === 'object') {
      options = { ...host };
    } else {
      options = options !== null && typeof options === 'object' ? { ...options } : {};
    }
    if (typeof port === 'number') options.port = port;
    if (typeof host === 'string') options.host = host;

    // The session key holds the check function's identity too.
    if (options.sessionCache === undefined && options._agentKey && this.maxCachedSessions !== 0) {
      options.sessionCache = this[kStore];
    }
    return connect(options);
  }

  getName(options = {}) {
    const name = super.getName(options);
    return options[kOwnIdentityCheck] ? `${name}:csi${options[kOwnIdentityCheck]}` : name;
  }
}

// node's https.Agent (Node 24's built-in proxy support: `proxyEnv`,
// NODE_USE_ENV_PROXY) keeps an HTTPS proxy it was configured with under a
// private symbol, null when there is none. Read, never written: if a later
// node names it otherwise, agents connect directly as before.
function hasNodeProxy(agent) {
  const key = Object.getOwnPropertySymbols(agent).find((s) => s.description === 'kProxyConfig');
  return key !== undefined && agent[key] !== null && agent[key] !== undefined;
}

Object.setPrototypeOf(Agent, nodeHttps.Agent);
Agent.prototype = AgentMethods.prototype;
Object.defineProperty(Agent.prototype, 'constructor', { value: Agent, writable: true, configurable: true });

// node's https.globalAgent settings, with the proxy environment node's
// global agent has (NODE_USE_ENV_PROXY=1, --use-env-proxy).
function nodeGlobalProxyEnv() {
  const options = nodeHttps.globalAgent && nodeHttps.globalAgent.options;
  return options ? options.proxyEnv : undefined;
}
function makeGlobalAgent(proxyEnv) {
  const options = { keepAlive: true, scheduling: 'lifo', timeout: 5000 };
  if (proxyEnv) options.proxyEnv = proxyEnv;
  return new Agent(options);
}
const firstProxyEnv = nodeGlobalProxyEnv();
const firstGlobal = { agent: makeGlobalAgent(firstProxyEnv), proxyEnv: firstProxyEnv };
let ownGlobal = firstGlobal;

// The agent of a request that names none. Node 26's
// http.setGlobalProxyFromEnv() puts a proxied agent in node:https's
// globalAgent (and its restore function the old one back): ours follows, so
// such a program reaches its proxy through tlswrap/https too. An agent the
// program assigned to our globalAgent itself is left alone.
function defaultAgent() {
  const proxyEnv = nodeGlobalProxyEnv();
  if (module.exports.globalAgent === ownGlobal.agent && proxyEnv !== ownGlobal.proxyEnv) {
    ownGlobal = proxyEnv === firstGlobal.proxyEnv ? firstGlobal : { agent: makeGlobalAgent(proxyEnv), proxyEnv };
    module.exports.globalAgent = ownGlobal.agent;
  }
  return module.exports.globalAgent;
}

function isURL(value) {
  return Boolean(value && value.href && value.protocol && value.auth === undefined && value.path === undefined);
}

// [url][, options][, callback], as https.request takes them.
function request(...args) {
  let options = {};
  if (typeof args[0] === 'string') {
    options = urlToHttpOptions(new URL(args.shift()));
  } else if (isURL(args[0])) {
    options = urlToHttpOptions(args.shift());
  }
  if (args[0] && typeof args[0] !== 'function') Object.assign(options, args.shift());

  const fallbackAgent = defaultAgent();
  if (options.checkServerIdentity !== undefined && options.checkServerIdentity !== nodeTls.checkServerIdentity) {
    const agent = options.agent === undefined ? fallbackAgent : options.agent;
    const agentCheck = agent && agent.options ? agent.options.checkServerIdentity : undefined;
    // Not a function: connect() throws node's error for it.
    if (agentCheck !== options.checkServerIdentity && typeof options.checkServerIdentity === 'function') {
      options[kOwnIdentityCheck] = identity(options.checkServerIdentity);
    }
  }
  options._defaultAgent = fallbackAgent;
  args.unshift(options);
  return new http.ClientRequest(...args);
}

function get(...args) {
  const req = request(...args);
  req.end();
  return req;
}

module.exports = {
  Agent,
  globalAgent: firstGlobal.agent,
  Server: CallableServer,
  createServer,
  get,
  request,
};
