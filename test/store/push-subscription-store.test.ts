import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/postgres/migrations.js';
import { PostgresPushSubscriptionStore } from '../../src/store/postgres/postgres-push-subscription-store.js';
import { asyncPush, PushSubscriptionStore, type AsyncPushSubscriptionStore, type PushSubscriptionRecord } from '../../src/store/push-subscription-store.js';
import { freshDatabase, type FreshDatabase, testPool } from '../support/postgres.js';

// The push subscriptions' contract, run against both stores: the embedded SQLite file and a
// real PostgreSQL database (a fresh one per test, dropped afterwards). The push routes add
// and remove; the push sender lists for every card event, checks `has` before each attempt
// and removes a subscription its push service says is gone.

interface Harness {
  store: AsyncPushSubscriptionStore;
  /** A second, independent handle on the same data: another process, another node. */
  other(): Promise<AsyncPushSubscriptionStore>;
  dispose(): Promise<void>;
}

const STORES: Record<string, () => Promise<Harness>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-push-'));
    const file = join(dir, 'askrelay.sqlite');
    const connections: Database.Database[] = [];
    const open = () => {
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      connections.push(db);
      return asyncPush(new PushSubscriptionStore(db));
    };
    return {
      store: open(),
      other: async () => open(),
      dispose: async () => {
        for (const db of connections) db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  postgres: async () => {
    const db: FreshDatabase = await freshDatabase();
    const pools = [testPool(db.url)];
    await migrate(pools[0]);
    return {
      store: new PostgresPushSubscriptionStore(pools[0]),
      other: async () => new PostgresPushSubscriptionStore(pools[pools.push(testPool(db.url)) - 1]),
      dispose: async () => {
        for (const pool of pools) await pool.end();
        await db.drop();
      },
    };
  },
};

const sub = (name: string, keys = 'k1'): PushSubscriptionRecord => ({
  endpoint: `https://push.example/${name}`,
  keys: { p256dh: `p256dh-${name}-${keys}`, auth: `auth-${name}-${keys}` },
});
const endpoints = (list: PushSubscriptionRecord[]) => list.map((s) => s.endpoint.split('/').at(-1));

for (const [name, open] of Object.entries(STORES)) {
  describe(`push subscription store: ${name}`, () => {
    let h: Harness;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it('stores one row per endpoint: new keys replace the old ones, and `created` says which happened', async () => {
      expect(await h.store.list()).toEqual([]);
      expect(await h.store.has(sub('a').endpoint)).toBe(false);
      expect(await h.store.add(sub('a'))).toEqual({ created: true });
      expect(await h.store.has(sub('a').endpoint)).toBe(true);
      expect(await h.store.list()).toEqual([sub('a')]);
      // The browser subscribed again with new keys: the same subscription, its keys replaced.
      expect(await h.store.add(sub('a', 'k2'))).toEqual({ created: false });
      expect(await h.store.list()).toEqual([sub('a', 'k2')]);
    });

    it('lists by when each was first stored, ties in the order stored; new keys keep the place', async () => {
      await h.store.add(sub('late'), 2_000);
      await h.store.add(sub('first'), 1_000);
      await h.store.add(sub('second'), 1_000); // same time as first: insertion order
      await h.store.add(sub('middle'), 1_500);
      expect(endpoints(await h.store.list())).toEqual(['first', 'second', 'middle', 'late']);
      await h.store.add(sub('first', 'k2'), 9_000);
      const list = await h.store.list();
      expect(endpoints(list)).toEqual(['first', 'second', 'middle', 'late']);
      expect(list[0]).toEqual(sub('first', 'k2'));
    });

    it('remove says whether there was one to remove, and leaves the others', async () => {
      expect(await h.store.remove(sub('a').endpoint)).toBe(false);
      for (const n of ['a', 'b', 'c']) await h.store.add(sub(n));
      expect(await h.store.remove(sub('b').endpoint)).toBe(true);
      expect(await h.store.remove(sub('b').endpoint)).toBe(false);
      expect(await h.store.has(sub('b').endpoint)).toBe(false);
      expect(await h.store.list()).toEqual([sub('a'), sub('c')]);
      // Stored again after its removal, it is a new subscription.
      expect(await h.store.add(sub('b'))).toEqual({ created: true });
      expect(endpoints(await h.store.list())).toEqual(['a', 'c', 'b']);
    });

    it('another handle (another node) sees what this one added and removed', async () => {
      const other = await h.other();
      await h.store.add(sub('a'));
      expect(await other.has(sub('a').endpoint)).toBe(true);
      expect(await other.list()).toEqual([sub('a')]);
      expect(await other.add(sub('a', 'k2'))).toEqual({ created: false });
      expect(await other.remove(sub('a').endpoint)).toBe(true);
      expect(await h.store.has(sub('a').endpoint)).toBe(false);
      expect(await h.store.remove(sub('a').endpoint)).toBe(false);
    });

    it('eight handles storing one endpoint at once: one is created, one row is left; removed at once: one removes it', async () => {
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 7 }, () => h.other())))];
      // Every handle connected first, so the adds really arrive together.
      for (const s of handles) expect(await s.has(sub('race').endpoint)).toBe(false);
      const added = await Promise.all(handles.map((s, i) => s.add(sub('race', `k${i}`))));
      expect(added.filter((r) => r.created)).toHaveLength(1);
      const list = await h.store.list();
      expect(list).toHaveLength(1);
      expect(handles.map((_, i) => sub('race', `k${i}`))).toContainEqual(list[0]);
      const removed = await Promise.all(handles.map((s) => s.remove(sub('race').endpoint)));
      expect(removed.filter(Boolean)).toHaveLength(1);
      expect(await h.store.list()).toEqual([]);
    });
  });
}

describe('push subscription store: postgres, several nodes', () => {
  let db: FreshDatabase;
  let pools: pg.Pool[];
  beforeEach(async () => {
    db = await freshDatabase();
    pools = [testPool(db.url), testPool(db.url)];
    await migrate(pools[0]);
  });
  afterEach(async () => {
    for (const pool of pools) await pool.end();
    await db.drop();
  });

  // SQLite's store caches its list (one process owns the file, and every change goes through
  // it); a node on a shared database must not, or it pushes to a removed subscription and
  // misses a new one.
  it("a node's list follows another node's changes at once", async () => {
    const [a, b] = pools.map((p) => new PostgresPushSubscriptionStore(p));
    await a.add(sub('a'));
    expect(await a.list()).toEqual([sub('a')]);
    await b.add(sub('b'));
    await b.add(sub('a', 'k2'));
    expect(await a.list()).toEqual([sub('a', 'k2'), sub('b')]);
    await b.remove(sub('a').endpoint);
    expect(await a.list()).toEqual([sub('b')]);
  });
});
