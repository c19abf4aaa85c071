import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { sessionLease, type Cluster } from '../../src/cluster/cluster.js';
import { Relay } from '../../src/relay/relay.js';
import { SessionManager } from '../../src/sessions/manager.js';
import type { RunnerFactory } from '../../src/sessions/runner.js';
import type { SessionOwners } from '../../src/sessions/session-owners.js';
import type { AsyncSessionStore } from '../../src/store/session-store.js';
import { postgresStores } from '../../src/store/postgres/postgres-stores.js';
import type { Stores } from '../../src/store/stores.js';
import { freshDatabase, type FreshDatabase } from '../support/postgres.js';

// A session started on node A must not also be run by node B: B's lease round adopts the
// active sessions no node holds, so A holds the session's lease before B can find the
// session in the store. (Found by the two-node run of the feature suites: a Grok session
// ran its turn twice, once on each node.) Here B's round runs exactly when A has stored the
// session, the moment a busy machine leaves between the two.
//
// Nor by its own node: A's lease round adopts every active session not live on A, and A holds
// the lease, so until the runner is made the session must count as A's (seen as session D of
// test/sessions/relay-tool.test.ts answering 'Done.' twice under load). Two adopt() calls at
// once (the round, and a message finding the session unheld) resume it once.

const HOUR = 3_600_000;

let db: FreshDatabase;
const open: { stores: Stores; cluster: Cluster; relay: Relay; manager: SessionManager }[] = [];

beforeEach(async () => {
  db = await freshDatabase();
});
afterEach(async () => {
  for (const node of open.splice(0)) {
    await node.manager.close();
    node.relay.stop();
    await node.cluster.close();
    await node.stores.close();
  }
  await db.drop();
});

/** A runner that says which node started it and never ends its turn (the test only counts starts). */
function counting(node: string, started: string[]): RunnerFactory {
  return {
    engines: ['messages'],
    movable: ['messages'],
    defaultModel: () => 'm',
    // The turn never ends, so the session stays running (a session found idle is resumed without a turn).
    create: () => ({ start: () => (started.push(node), new Promise<void>(() => {})), send: async () => {}, stop: async () => {} }),
  };
}

/** A runner whose turns end at once: its session is idle between them. */
function idling(node: string, started: string[]): RunnerFactory {
  return { ...counting(node, started), create: () => ({ start: async () => void started.push(node), send: async () => {}, stop: async () => {} }) };
}

async function node(id: string, started: string[], wrap: (store: AsyncSessionStore) => AsyncSessionStore = (s) => s, factory = counting(id, started)) {
  const stores = await postgresStores(db.url, randomBytes(32), () => {});
  const cluster = await stores.joinCluster(id, 1500, () => {});
  const relay = new Relay({ store: stores.cards, waits: { default: HOUR } });
  await relay.start();
  const owners: SessionOwners = {
    node: id,
    claim: (sid) => cluster.claim(sessionLease(sid)),
    release: (sid) => cluster.release(sessionLease(sid)),
    holder: (sid) => cluster.holder(sessionLease(sid)),
    forward: async () => {
      throw new Error('not forwarded in this test');
    },
  };
  const manager = new SessionManager({ relay, store: wrap(stores.sessions), providers: { claude: factory }, owners, log: () => {} });
  open.push({ stores, cluster, relay, manager });
  return manager;
}

it('a session started on one node is not adopted by the other in the moment after it was stored', async () => {
  const started: string[] = [];
  const b = await node('node-b', started);
  // A's store, with B's lease round run right after the session's row is written.
  const a = await node('node-a', started, (store) => afterInsert(store, () => b.adopt()));
  const session = await a.start({ provider: 'claude', engine: 'messages', prompt: 'go' });
  expect(a.liveIds()).toEqual([session.id]);
  expect(b.liveIds()).toEqual([]);
  expect(started).toEqual(['node-a']);
});

it("a session being started is not adopted by its own node's lease round in the moment after it was stored", async () => {
  const started: string[] = [];
  let a: SessionManager | undefined;
  // A's own lease round (it adopts every active session not live on A) runs right after the row is written.
  a = await node('node-a', started, (store) => afterInsert(store, () => a!.adopt()));
  const session = await a.start({ provider: 'claude', engine: 'messages', prompt: 'go' });
  expect(a.liveIds()).toEqual([session.id]);
  expect(started).toEqual(['node-a']);
});

it('two adopt() calls at once on one node resume a session once', async () => {
  const started: string[] = [];
  // Both calls read the active sessions before either goes on.
  let arrived = 0;
  let bothArrived = () => {};
  const barrier = new Promise<void>((resolve) => (bothArrived = resolve));
  const a = await node('node-a', started, (store) =>
    new Proxy(store, {
      get(target, name, receiver) {
        if (name !== 'active') return Reflect.get(target, name, receiver);
        return async () => {
          const found = await target.active();
          if (++arrived === 2) bothArrived();
          await barrier;
          return found;
        };
      },
    }),
  );
  const session = await a.start({ provider: 'claude', engine: 'messages', prompt: 'go' });
  // As after a restart: the session is stored and running, and no runner of this manager has it.
  await a.drop(session.id);
  started.length = 0;
  // The lease round and a message that finds the session unheld (forwarded()) adopt at once.
  await Promise.all([a.adopt(), a.adopt()]);
  expect(a.liveIds()).toEqual([session.id]);
  expect(started).toEqual(['node-a']);
});

it('a session being started is counted among the live ones, so the lease round renews its lease meanwhile', async () => {
  const started: string[] = [];
  const seen: string[][] = [];
  let a: SessionManager | undefined;
  a = await node('node-a', started, (store) => afterInsert(store, async () => void seen.push(a!.liveIds())));
  const session = await a.start({ provider: 'claude', engine: 'messages', prompt: 'go' });
  expect(seen).toEqual([[session.id]]);
});

it("a session stopped while its own node's lease round adopts it is not run again (found by a loaded run)", async () => {
  const started: string[] = [];
  let during: (() => Promise<unknown>) | undefined;
  // The round reads the active sessions, then the session is stopped, then the round goes on.
  const a: SessionManager = await node(
    'node-a',
    started,
    (store) =>
      new Proxy(store, {
        get(target, name, receiver) {
          if (name !== 'active') return Reflect.get(target, name, receiver);
          return async () => {
            const found = await target.active();
            await during?.();
            return found;
          };
        },
      }),
    idling('node-a', started),
  );
  const session = await a.start({ provider: 'claude', engine: 'messages', prompt: 'go' });
  await a.get(session.id);
  expect((await a.get(session.id)).status).toBe('idle');
  during = () => a.stop(session.id);
  await a.adopt();
  expect((await a.get(session.id)).status).toBe('stopped');
  expect(a.liveIds()).toEqual([]);
  expect(started).toEqual(['node-a']);
});

/** The store, with `then` run right after a session's row is written. */
function afterInsert(store: AsyncSessionStore, then: () => Promise<void>): AsyncSessionStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name !== 'insert') return Reflect.get(target, name, receiver);
      return async (...args: Parameters<AsyncSessionStore['insert']>) => {
        await target.insert(...args);
        await then();
      };
    },
  });
}
