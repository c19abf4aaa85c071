import type { Channels } from '../channels/service.js';
import type { Relay } from '../relay/relay.js';
import type { SessionManager } from '../sessions/manager.js';
import type { SessionOwners } from '../sessions/session-owners.js';
import { sessionLease, type Cluster } from './cluster.js';
import { bridgeEvents } from './event-bridge.js';
import { LeaseKeeper } from './lease-keeper.js';
import { NodeCalls } from './node-calls.js';
import { holdsOf, type NodeLoad } from './node-load.js';

// The composition root's part for several nodes: the relay's events across nodes, calls to
// the node that runs a session, and the leases on the work that has one owner. On the
// embedded store the cluster is this node alone, and all of it is quiet.

const QUEUED = 'channels.queued';

export interface NodeWiring {
  /** For the session manager: which node runs which session. */
  owners: SessionOwners;
  /** Whether this node sends the pushes now. */
  sends(): boolean;
  /** Tells the node holding the channels that jobs were queued. */
  queued(): void;
  /** Starts keeping the leases (once the relay listens: the channels need its address). */
  start(parts: { sessions: SessionManager; channels: Channels; url(): string | undefined; load: NodeLoad }): Promise<void>;
  stop(): Promise<void>;
}

export async function wireNodes(cluster: Cluster, relay: Relay, log: (line: string) => void): Promise<NodeWiring> {
  // Alone on the embedded store there is nobody to carry events to: no bridge, so a change
  // is acknowledged without a trip through its (empty) queue.
  const bridge = cluster.kind === 'sqlite' ? undefined : bridgeEvents(relay, cluster, log);
  const calls = new NodeCalls(cluster);
  // Claimed now, so that pushes for what relay.start() expires go out from here when this
  // node holds the push queue (the keeper renews it from then on).
  let sending = (await cluster.claim('push')).held;
  let keeper: LeaseKeeper | undefined;
  let stopListening = () => {};
  return {
    owners: {
      node: cluster.node,
      claim: (id) => cluster.claim(sessionLease(id)),
      release: (id) => cluster.release(sessionLease(id)),
      holder: (id) => cluster.holder(sessionLease(id)),
      forward: (node, op, args) => calls.call(node, `session.${op}`, args, `session ${args.id}`),
    },
    sends: () => sending,
    queued: () => void cluster.publish(QUEUED, {}, QUEUED).catch(() => {}),
    async start({ sessions, channels, url, load }) {
      calls.handle('session.message', async (args) => {
        const { id, text } = args as { id: string; text: string };
        await sessions.message(id, text);
      });
      calls.handle('session.stop', async (args) => void (await sessions.stop((args as { id: string }).id)));
      stopListening = cluster.subscribe(({ name }) => name === QUEUED && channels.deliverNow());
      keeper = new LeaseKeeper(cluster, {
        works: [
          { name: 'push', gained: () => void (sending = true), lost: () => void (sending = false) },
          // Only a node with chat channels configured competes for them.
          ...(channels.ids.length ? [{ name: 'channels', gained: () => channels.start(), lost: () => channels.pause() }] : []),
        ],
        // One node alone adopts nothing while it runs: it resumed everything at start.
        ...(cluster.kind === 'postgres' ? { sessions, nodeLeft: () => relay.resync({ reset: false }) } : {}),
        holds: () => holdsOf(sessions, load),
        url,
        log,
      });
      await keeper.start();
    },
    async stop() {
      await keeper?.stop();
      stopListening();
      calls.stop();
      await bridge?.idle();
      bridge?.stop();
    },
  };
}
