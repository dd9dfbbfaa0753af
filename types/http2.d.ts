// tlswrap/http2 has node:http2's names and shapes (its TLS sockets are tlswrap's).
export * from 'node:http2';
