import { Hono } from 'hono';
import type { Cluster } from '../cluster/cluster.js';
import { operatorOnly, type AuthEnv } from './auth.js';

// GET /api/nodes, for the operator only (src/relay/access.ts operatorRefusal): the nodes on this relay's store heard from within a lease,
// each with its last heartbeat, what it holds (sessions, MCP calls, streams) and its leases.
// An embedded relay lists itself. The answering node shows what it holds right now; the
// others, what their last heartbeat said.
export function nodeRoutes(cluster: Pick<Cluster, 'node' | 'kind' | 'nodes' | 'leases'>, holdsNow?: () => Record<string, number>) {
  const app = new Hono<AuthEnv>();
  app.use('*', operatorOnly);
  app.get('/', async (c) => {
    const [nodes, leases] = await Promise.all([cluster.nodes(), cluster.leases()]);
    return c.json({
      node: cluster.node,
      store: cluster.kind,
      nodes: nodes.map((n) => ({
        id: n.id,
        ...(n.url ? { url: n.url } : {}),
        startedAt: new Date(n.startedAt).toISOString(),
        heartbeatAt: new Date(n.heartbeatAt).toISOString(),
        holds: n.id === cluster.node && holdsNow ? holdsNow() : n.holds,
        leases: leases.filter((l) => l.holder === n.id).map((l) => l.name),
      })),
    });
  });
  return app;
}
