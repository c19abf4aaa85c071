import type { Server } from 'node:http';

// How long a node keeps an idle HTTP connection open. A load balancer reuses its idle
// connections to the nodes; a request it sends on one just as the node closes it is lost
// (it was sent, so the balancer cannot retry it: the client gets a 502). So the balancer
// must always be the side that closes an idle connection: docs/deploy.md's HAProxy closes
// them after 10 s (`timeout http-keep-alive`, with `http-reuse never` binding each one to
// its client's connection), nginx's upstream `keepalive_timeout` is 60 s by default, and a
// node waits longer than both. The margin also covers a node that froze for a while (a
// SIGSTOP, a long pause): Node's keep-alive timer runs out during the freeze and fires at
// the thaw before the request waiting on the connection is read, which would lose it too.
export const KEEP_ALIVE_MS = 75_000;

/** Sets the node's keep-alive; the headers timeout (60 s) counts from a request's first byte, so it needs no change. */
export function keepIdleConnections(server: Pick<Server, 'keepAliveTimeout'>): void {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
}
