// tlswrap's types: node:tls's declarations from @types/node, which tlswrap
// mirrors name for name, plus the names newer Nodes added to node:tls that an
// older @types/node may not declare. Each of those exists at run time only
// where the running Node's node:tls has it.

export * from 'node:tls';

/** Node 22.15+ / 24: the certificates of a store, one PEM string each. */
export function getCACertificates(type?: 'default' | 'system' | 'bundled' | 'extra'): string[];
/** Node 22.15+ / 24: replaces the default store of contexts created afterwards. */
export function setDefaultCACertificates(certs: ReadonlyArray<string | NodeJS.ArrayBufferView>): void;
/** Node 24: always [] in tlswrap (the certificateCompression option is not implemented). */
export function getCertificateCompressionAlgorithms(): string[];

/**
 * tlswrap's client session cache (LRU over keys that cover everything a
 * session must match: peer, servername, ALPN offer, trust settings, client
 * certificate, versions and ciphers). Pass it as `connect({ sessionCache })`,
 * or `sessionCache: true` for a default one per thread.
 */
export class SessionCache implements SessionStore {
  constructor(options?: { max?: number });
  readonly max: number;
  readonly size: number;
  get(key: string): Buffer | undefined;
  set(key: string, session: Buffer): void;
  delete(key: string, session?: Buffer): void;
  clear(): void;
}

/** A store of your own for `connect({ sessionCache })`; `get` answers synchronously. */
export interface SessionStore {
  get(key: string): Buffer | undefined;
  set(key: string, session: Buffer): void;
  delete?(key: string, session?: Buffer): void;
}

declare module 'node:tls' {
  interface ConnectionOptions {
    /** tlswrap: resume through this cache (true: the default one). Off unless given. */
    sessionCache?: SessionStore | boolean;
  }
}
