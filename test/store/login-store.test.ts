import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asyncLogins, type AsyncLoginStore } from '../../src/store/login-store.js';
import { migrate } from '../../src/store/postgres/migrations.js';
import { PostgresLoginStore } from '../../src/store/postgres/postgres-login-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { freshDatabase, testPool } from '../support/postgres.js';

// The page's logins, one contract for both stores: the embedded SQLite file and a real
// PostgreSQL database (a fresh one per test, dropped afterwards). With several nodes, a
// login made on one is honoured on every other, and a logout on one ends it on all.

interface Harness {
  store: AsyncLoginStore;
  /** A second, independent handle on the same data: another process, another node. */
  other(): Promise<AsyncLoginStore>;
  dispose(): Promise<void>;
}

const STORES: Record<string, () => Promise<Harness>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-logins-'));
    const file = join(dir, 'askrelay.sqlite');
    const opened = [new SqliteStore(file)];
    return {
      store: asyncLogins(opened[0].logins),
      other: async () => asyncLogins(opened[opened.push(new SqliteStore(file)) - 1].logins),
      dispose: async () => {
        for (const s of opened) s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  postgres: async () => {
    const db = await freshDatabase();
    const pools: pg.Pool[] = [];
    const node = async () => {
      const pool = testPool(db.url);
      pools.push(pool);
      await migrate(pool);
      return new PostgresLoginStore(pool);
    };
    const store = await node();
    return {
      store,
      other: node,
      dispose: async () => {
        await Promise.all(pools.map((p) => p.end()));
        await db.drop();
      },
    };
  },
};

/** A login made at a time with milliseconds, beyond 32 bits: it must come back as this very number. */
const T = 1_764_504_000_123;
const key = (n: number) => `login-key-${n}`;

for (const [name, open] of Object.entries(STORES)) {
  describe(`login store: ${name}`, () => {
    let h: Harness;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it('keeps when each login was made, as a number of milliseconds', async () => {
      expect(await h.store.createdAt(key(1))).toBeUndefined();
      await h.store.add(key(1), T);
      expect(await h.store.createdAt(key(1))).toBe(T);
      expect(await h.store.createdAt(key(2))).toBeUndefined();
      // Without a time, now.
      const before = Date.now();
      await h.store.add(key(2));
      const made = await h.store.createdAt(key(2));
      expect(made).toBeGreaterThanOrEqual(before);
      expect(made).toBeLessThanOrEqual(Date.now());
      // The same key again starts that login anew.
      await h.store.add(key(1), T + 5_000);
      expect(await h.store.createdAt(key(1))).toBe(T + 5_000);
    });

    it('ends a login once: whether there was one to end', async () => {
      await h.store.add(key(1), T);
      await h.store.add(key(2), T);
      expect(await h.store.remove(key(1))).toBe(true);
      expect(await h.store.createdAt(key(1))).toBeUndefined();
      expect(await h.store.remove(key(1))).toBe(false);
      expect(await h.store.remove(key(9))).toBe(false);
      expect(await h.store.createdAt(key(2))).toBe(T);
    });

    it('prunes the logins made before a time, keeping those made at it or after', async () => {
      await h.store.add(key(1), T - 1);
      await h.store.add(key(2), T);
      await h.store.add(key(3), T + 1);
      await h.store.prune(T);
      expect(await h.store.createdAt(key(1))).toBeUndefined();
      expect(await h.store.createdAt(key(2))).toBe(T);
      expect(await h.store.createdAt(key(3))).toBe(T + 1);
      await h.store.prune(0);
      expect(await h.store.createdAt(key(2))).toBe(T);
    });

    it('a login made on one node holds on another, and one logout on several nodes at once ends it once', async () => {
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 3 }, () => h.other())))];
      await handles[1].add(key(1), T);
      for (const s of handles) expect(await s.createdAt(key(1))).toBe(T);
      const ended = await Promise.all(Array.from({ length: 12 }, (_, i) => handles[i % handles.length].remove(key(1))));
      expect(ended.filter(Boolean)).toHaveLength(1);
      for (const s of handles) expect(await s.createdAt(key(1))).toBeUndefined();
    });
  });
}
