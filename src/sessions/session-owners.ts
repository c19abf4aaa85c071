import type { LeaseClaim } from '../cluster/cluster.js';

// Which node runs which agent session, when several nodes share one database. A session's
// runner lives on one node, held by a lease; a message or stop that reaches another node is
// handed to that one, and a session whose node stopped is adopted by the node that takes its
// lease (src/cluster/lease-keeper.ts). The composition root builds this from the cluster.

export interface SessionOwners {
  /** This node's name. */
  readonly node: string;
  /** Takes (or renews) the session's lease for this node. */
  claim(id: string): Promise<LeaseClaim>;
  /** Gives the lease up (the session closed). */
  release(id: string): Promise<void>;
  /** The node whose lease on the session still runs. */
  holder(id: string): Promise<string | undefined>;
  /** Asks `node` to do `op` on the session; rejects with its error. */
  forward(node: string, op: 'message' | 'stop', args: { id: string; text?: string }): Promise<void>;
}
