import type pg from 'pg';
import type { Cluster, ClusterEvent } from '../../cluster/cluster.js';
import { RESYNC } from '../../cluster/cluster.js';
import { PostgresEventBus } from './event-bus.js';
import { PostgresLeases } from './leases.js';
import { PostgresNodes } from './nodes.js';

// The nodes sharing one PostgreSQL database (see src/cluster/cluster.ts): leases and the node
// list are rows, events travel by LISTEN/NOTIFY. Times are the database's clock, one for
// every node.

export interface PostgresClusterOptions {
  node: string;
  leaseMs: number;
  /** Loads an event's data that was too big to travel whole, by its name and id. */
  load(name: string, ref: string): Promise<unknown>;
  log?: (line: string) => void;
}

/** Messages between nodes bigger than this wait in bus_payloads; NOTIFY carries only their id. */
const MAX_MESSAGE_BYTES = 6000;
const KEEP_PAYLOAD_MS = 10 * 60_000;

export async function postgresCluster(pool: pg.Pool, url: string, options: PostgresClusterOptions): Promise<Cluster> {
  const { node, leaseMs } = options;
  const leases = new PostgresLeases(pool);
  const nodes = new PostgresNodes(pool);
  const handlers = new Set<(event: ClusterEvent) => void>();
  const bus = new PostgresEventBus(pool, url, {
    node,
    load: options.load,
    ...(options.log ? { log: options.log } : {}),
    // Events of the other nodes went unheard while the connection was away.
    resync: () => handlers.forEach((handler) => handler({ name: RESYNC, data: null })),
  });
  await bus.start();
  const hand = (event: ClusterEvent) => handlers.forEach((handler) => handler(event));
  bus.subscribe((event) => {
    const parked = (event.data as { parked?: string } | null)?.parked;
    if (!parked) return hand(event);
    pool
      .query<{ data: string }>('SELECT data FROM bus_payloads WHERE id = $1', [parked])
      .then(({ rows }) => rows[0] && hand({ name: event.name, data: JSON.parse(rows[0].data) }))
      .catch((err: Error) => options.log?.(`event bus: could not read ${event.name} ${parked}: ${err.message}`));
  });
  // Cards and sessions too big for NOTIFY are read back from their tables (load); other
  // messages (calls between nodes) park in bus_payloads.
  const park = async (data: unknown): Promise<unknown> => {
    const text = JSON.stringify(data);
    if (Buffer.byteLength(text) <= MAX_MESSAGE_BYTES) return data;
    const now = Date.now();
    await pool.query('DELETE FROM bus_payloads WHERE created_at < $1', [now - KEEP_PAYLOAD_MS]);
    const { rows } = await pool.query<{ id: string }>('INSERT INTO bus_payloads (data, created_at) VALUES ($1, $2) RETURNING id', [text, now]);
    return { parked: rows[0].id };
  };
  return {
    kind: 'postgres',
    node,
    leaseMs,
    announcesCards: true,
    claim: async (name) => {
      const lease = await leases.acquire(name, node, leaseMs);
      return { held: lease !== undefined, ...(lease?.previous ? { from: lease.previous } : {}) };
    },
    release: (name) => leases.release(name, node),
    holder: (name) => leases.holder(name),
    leases: async () => (await leases.running()).map(({ name, holder, expiresAt }) => ({ name, holder, expiresAt })),
    publish: async (name, data, ref) => bus.publish(name, name.startsWith('card.') || name.startsWith('session.') ? data : await park(data), ref),
    subscribe: (handler) => {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    heartbeat: (at, holds) => nodes.heartbeat(node, at, holds),
    nodes: () => nodes.live(leaseMs),
    close: async () => {
      await bus.stop();
      // Its sessions' leases run out instead: a node restarted within a lease resumes them,
      // even those whose engine keeps its state on this node's disk.
      await leases.releaseAll(node, 'session:').catch(() => {});
      await nodes.leave(node).catch(() => {});
    },
  };
}
