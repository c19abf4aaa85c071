import type { Card } from '../cards/model.js';
import type { Relay } from '../relay/relay.js';
import { RESYNC, type Cluster } from './cluster.js';

// The relay's events across nodes. What the others commit comes in as the relay's own
// events, marked remote (relay.hear): streams, long polls, MCP calls, push and the chat
// channels of every node see every change; after a lost connection the relay re-reads what
// it may have missed. What this node commits goes out: a card change from its own
// transaction, where the store announces it (PostgreSQL: its NOTIFY commits with the change,
// so a node killed right after a commit has told the others already); everything else
// (sessions) from here, in the order it happened (one publish after the other; one that
// fails, the database being away, is tried again before any later one). A change published
// from here is acknowledged to its caller only once its event left (or after CARRY_MS, the
// database being away).

const RETRY_MS = { first: 100, max: 5000 };
/** How long a change waits for its event to leave before it is acknowledged anyway (the database being away). */
const CARRY_MS = 2000;
/** Events kept while the database is away; past this the oldest go (the others resync on reconnect). */
const MAX_QUEUED = 10_000;

export interface EventBridge {
  /** Resolves once everything emitted so far has been published, or after `timeoutMs`. */
  idle(timeoutMs?: number): Promise<void>;
  stop(): void;
}

export function bridgeEvents(relay: Relay, cluster: Cluster, log: (line: string) => void): EventBridge {
  const queue: { name: string; data: unknown; ref: string }[] = [];
  let pumping: Promise<void> | undefined;
  let stopped = false;
  // Events handed to the queue, and those published (or given up) since: a change waits
  // until the count reached its own event (relay.events.carried()).
  let queued = 0;
  let done = 0;
  const carriedWaits: { upTo: number; resolve(): void }[] = [];
  const settle = () => {
    done += 1;
    while (carriedWaits.length && carriedWaits[0].upTo <= done) carriedWaits.shift()!.resolve();
  };

  const pump = async () => {
    let retryMs = RETRY_MS.first;
    while (queue.length && !stopped) {
      const event = queue[0];
      try {
        await cluster.publish(event.name, event.data, event.ref);
        queue.shift();
        settle();
        retryMs = RETRY_MS.first;
      } catch (err) {
        if (retryMs === RETRY_MS.first) log(`event bus: could not tell the other nodes of ${event.name} ${event.ref} (${(err as Error).message}); trying again`);
        await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
        retryMs = Math.min(retryMs * 2, RETRY_MS.max);
      }
    }
  };
  const stopLocal = relay.events.subscribe((name, data, remote) => {
    if (remote || stopped || (cluster.announcesCards && name !== 'session.updated')) return;
    if (queue.length >= MAX_QUEUED) {
      queue.shift();
      settle();
    }
    queue.push({ name, data, ref: (data as { id: string }).id });
    queued += 1;
    pumping ??= pump().finally(() => (pumping = undefined));
  });
  const stopCarry = relay.events.carry(async () => {
    if (stopped || done >= queued) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => carriedWaits.push({ upTo: queued, resolve })),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CARRY_MS))),
    ]);
    clearTimeout(timer);
  });
  const stopRemote = cluster.subscribe(({ name, data }) => {
    if (name === 'card.created' || name === 'card.updated' || name === 'card.late' || name === 'card.delivery' || name === 'card.escalated') relay.hear(name, data as Card);
    else if (name === 'session.updated') relay.events.emit('session.updated', data, true);
    else if (name === RESYNC) relay.resync({ reset: true }).catch((err: unknown) => log(`event bus: could not reload after reconnecting: ${(err as Error).message}`));
  });
  return {
    idle: async (timeoutMs = 2000) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pumping, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
    stop: () => {
      stopped = true;
      carriedWaits.splice(0).forEach((wait) => wait.resolve());
      stopCarry();
      stopLocal();
      stopRemote();
    },
  };
}
