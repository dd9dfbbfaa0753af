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
