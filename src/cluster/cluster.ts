// Several relay nodes on one database act as one relay. What a node needs from the others
// is here, behind one interface: leases (work that must have one owner: a session's runner,
// the chat channels, the push queue), the event bus (changes made on other nodes), and the
// node list (who is alive, and what each holds). The embedded SQLite store has one node,
// `soloCluster`: it holds every lease and hears no one. PostgreSQL brings the real one
// (src/store/postgres/postgres-cluster.ts).

/** The event a node hears after its connection to the others was lost and is back: reload. */
export const RESYNC = 'cluster.resync';

export interface ClusterEvent {
  name: string;
  data: unknown;
}

export interface LeaseClaim {
  /** Whether this node holds the lease now. */
  held: boolean;
  /** The node that held it before, when another one did (its work is being taken over). */
  from?: string;
}

export interface LeaseRecord {
  name: string;
  holder: string;
  expiresAt: number;
}

export interface NodeRecord {
  id: string;
  url?: string;
  startedAt: number;
  heartbeatAt: number;
  /** What the node holds, e.g. {sessions: 2, mcpCalls: 1, streams: 5}. */
  holds: Record<string, number>;
}

export interface Cluster {
  readonly kind: 'sqlite' | 'postgres';
  /** This node's name (ASKRELAY_NODE_ID, default host:port). */
  readonly node: string;
  /** How long a lease lasts unless its holder renews it; nodes renew at a third of it. */
  readonly leaseMs: number;
  /** Takes the lease, or renews it when this node holds it. */
  claim(name: string): Promise<LeaseClaim>;
  /** Gives the lease up at once (a clean stop), so no one waits it out. */
  release(name: string): Promise<void>;
  /** The node holding the lease while it runs; undefined once it ran out. */
  holder(name: string): Promise<string | undefined>;
  /** Every lease that still runs. */
  leases(): Promise<LeaseRecord[]>;
  /**
   * The card store tells the other nodes of every card change itself, in the change's own
   * transaction: the event bridge carries only the other events (sessions).
   */
  readonly announcesCards: boolean;
  /** Tells every other node; `ref` finds the data again when it is too big to travel. */
  publish(name: string, data: unknown, ref: string): Promise<void>;
  /** Hears every other node's events, in the order each published them. */
  subscribe(handler: (event: ClusterEvent) => void): () => void;
  /** Says this node is alive, and what it holds. */
  heartbeat(url: string | undefined, holds: Record<string, number>): Promise<void>;
  /** The nodes heard from within a lease. */
  nodes(): Promise<NodeRecord[]>;
  /** Leaves: every lease released, the node off the list, no more events. */
  close(): Promise<void>;
}

/** The one node of an embedded relay: every lease is its own, no one else publishes. */
export function soloCluster(node: string, leaseMs: number, now: () => number = Date.now): Cluster {
  const startedAt = now();
  let last: { url?: string; holds: Record<string, number>; at: number } = { holds: {}, at: startedAt };
  const held = new Set<string>();
  return {
    kind: 'sqlite',
    node,
    leaseMs,
    announcesCards: false,
    claim: async (name) => (held.add(name), { held: true }),
    release: async (name) => void held.delete(name),
    holder: async () => node,
    leases: async () => [...held].sort().map((name) => ({ name, holder: node, expiresAt: now() + leaseMs })),
    publish: async () => {},
    subscribe: () => () => {},
    heartbeat: async (url, holds) => {
      last = { ...(url ? { url } : {}), holds, at: now() };
    },
    nodes: async () => [{ id: node, ...(last.url ? { url: last.url } : {}), startedAt, heartbeatAt: last.at, holds: last.holds }],
    close: async () => held.clear(),
  };
}

/** The lease on a session's runner. */
export const sessionLease = (id: string) => `session:${id}`;
