import type { Card } from '../cards/model.js';
import type { Relay } from '../relay/relay.js';
import { RESYNC, type Cluster } from './cluster.js';

// The relay's events across nodes: what this node commits goes out to the others, in the
// order it happened (one publish after the other), and what the others commit comes in as
// the relay's own events, marked remote (relay.hear): streams, long polls, MCP calls, push
// and the chat channels of every node see every change. After a lost connection the relay
// re-reads what it may have missed.

export interface EventBridge {
  /** Resolves once everything emitted so far has been published (tests, shutdown). */
  idle(): Promise<void>;
  stop(): void;
}

export function bridgeEvents(relay: Relay, cluster: Cluster, log: (line: string) => void): EventBridge {
  let sent: Promise<void> = Promise.resolve();
  const stopLocal = relay.events.subscribe((name, data, remote) => {
    if (remote) return;
    const ref = (data as { id: string }).id;
    sent = sent.then(() => cluster.publish(name, data, ref)).catch((err: unknown) => log(`event bus: could not tell the other nodes of ${name} ${ref}: ${(err as Error).message}`));
  });
  const stopRemote = cluster.subscribe(({ name, data }) => {
    if (name === 'card.created' || name === 'card.updated') relay.hear(name, data as Card);
    else if (name === 'session.updated') relay.events.emit('session.updated', data, true);
    else if (name === RESYNC) relay.resync().catch((err: unknown) => log(`event bus: could not reload after reconnecting: ${(err as Error).message}`));
  });
  return {
    idle: () => sent,
    stop: () => {
      stopLocal();
      stopRemote();
    },
  };
}
