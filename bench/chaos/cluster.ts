import pg from 'pg';
import { startLoadBalancer, type LoadBalancer } from '../../test/support/load-balancer.js';
import { NODES_TOKEN, startNodes, type RelayNodes } from '../../test/support/relay-nodes.js';
import type { ChaosOptions } from './options.js';

// The relay a chaos run breaks: real `askrelay serve` nodes on a fresh PostgreSQL database
// behind a real HAProxy configured as docs/deploy.md says (the cluster tests' harness), and
// a connection of the run's own to that database, for the faults and the checks.

export interface ChaosCluster {
  /** The balancer: every client goes through it. */
  url: string;
  token: string;
  nodes: RelayNodes;
  balancer: LoadBalancer;
  /** The run's own pool on the nodes' database (application_name askrelay-chaos). */
  db: pg.Pool;
  /** What node i's connections call themselves in pg_stat_activity. */
  appName(i: number): string;
  /** Node i answers /api/health with 200, asked directly (not through the balancer). */
  healthy(i: number): Promise<boolean>;
  stop(): Promise<void>;
}

/** The database name of a URL: the run terminates and locks only there. */
export const databaseOf = (url: string) => new URL(url).pathname.slice(1);

export async function startChaosCluster(options: ChaosOptions): Promise<ChaosCluster> {
  const appName = (i: number) => `askrelay-chaos-node-${i}`;
  const nodes = await startNodes(options.nodes, {
    lease: `${options.leaseMs}ms`,
    env: { ASKRELAY_WAIT: `${options.mcpWaitMs}ms`, ASKRELAY_LOG: 'warn' },
    // node-postgres names its connections after PGAPPNAME: how the faults find a node's.
    nodeEnv: (i) => ({ PGAPPNAME: appName(i) }),
  });
  let balancer: LoadBalancer;
  try {
    balancer = await startLoadBalancer(nodes.nodes.map((n) => n.url));
  } catch (err) {
    await nodes.stop();
    throw err;
  }
  const db = new pg.Pool({ connectionString: nodes.db.url, application_name: 'askrelay-chaos', max: 4, statement_timeout: 60_000 });
  // A dropped database ends these connections from the server's side at the very end.
  db.on('error', () => {});
  return {
    url: balancer.url,
    token: NODES_TOKEN,
    nodes,
    balancer,
    db,
    appName,
    async healthy(i) {
      try {
        const res = await fetch(new URL('/api/health', nodes.url(i)), { signal: AbortSignal.timeout(2_000) });
        await res.body?.cancel();
        return res.status === 200;
      } catch {
        return false;
      }
    },
    async stop() {
      await balancer.stop();
      await db.end().catch(() => {});
      await nodes.stop();
    },
  };
}
