// tlswrap/https has node:https's names and shapes (its sockets are tlswrap's).
export * from 'node:https';
