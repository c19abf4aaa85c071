import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asyncLogins, type AsyncLoginStore } from '../../src/store/login-store.js';
import { PostgresLoginStore } from '../../src/store/postgres/postgres-login-store.js';
import { bothStores, type StoreHarness } from '../support/store-harness.js';

// The page's logins, one contract for both stores: the embedded SQLite file and a real
// PostgreSQL database (a fresh one per test, dropped afterwards). With several nodes, a
// login made on one is honoured on every other, and a logout on one ends it on all.

const STORES = bothStores<AsyncLoginStore>({ sqlite: (s) => asyncLogins(s.logins), postgres: (pool) => new PostgresLoginStore(pool) });

/** A login made at a time with milliseconds, beyond 32 bits: it must come back as this very number. */
const T = 1_764_504_000_123;
const key = (n: number) => `login-key-${n}`;

for (const [name, open] of Object.entries(STORES)) {
  describe(`login store: ${name}`, () => {
    let h: StoreHarness<AsyncLoginStore>;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it('keeps when each login was made, as a number of milliseconds', async () => {
      expect(await h.store.find(key(1))).toBeUndefined();
      await h.store.add(key(1), T);
      expect(await h.store.find(key(1))).toEqual({ createdAt: T });
      expect(await h.store.find(key(2))).toBeUndefined();
      // Without a time, now.
      const before = Date.now();
      await h.store.add(key(2));
      const made = (await h.store.find(key(2)))!.createdAt;
      expect(made).toBeGreaterThanOrEqual(before);
      expect(made).toBeLessThanOrEqual(Date.now());
      // The same key again starts that login anew.
      await h.store.add(key(1), T + 5_000);
      expect(await h.store.find(key(1))).toEqual({ createdAt: T + 5_000 });
    });

    it('keeps the person a login signs in as, and ends all of a person\'s logins at once', async () => {
      await h.store.add(key(1), T, 'ada');
      await h.store.add(key(2), T, 'ada');
      await h.store.add(key(3), T);
      expect(await h.store.find(key(1))).toEqual({ createdAt: T, who: 'ada' });
      await h.store.removeWho('ada');
      expect([await h.store.find(key(1)), await h.store.find(key(2))]).toEqual([undefined, undefined]);
      expect(await h.store.find(key(3))).toEqual({ createdAt: T });
    });

    it('ends a login once: whether there was one to end', async () => {
      await h.store.add(key(1), T);
      await h.store.add(key(2), T);
      expect(await h.store.remove(key(1))).toBe(true);
      expect(await h.store.find(key(1))).toBeUndefined();
      expect(await h.store.remove(key(1))).toBe(false);
      expect(await h.store.remove(key(9))).toBe(false);
      expect((await h.store.find(key(2)))?.createdAt).toBe(T);
    });

    it('prunes the logins made before a time, keeping those made at it or after', async () => {
      await h.store.add(key(1), T - 1);
      await h.store.add(key(2), T);
      await h.store.add(key(3), T + 1);
      await h.store.prune(T);
      expect(await h.store.find(key(1))).toBeUndefined();
      expect((await h.store.find(key(2)))?.createdAt).toBe(T);
      expect((await h.store.find(key(3)))?.createdAt).toBe(T + 1);
      await h.store.prune(0);
      expect((await h.store.find(key(2)))?.createdAt).toBe(T);
    });

    it('a login made on one node holds on another, and one logout on several nodes at once ends it once', async () => {
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 3 }, () => h.other())))];
      await handles[1].add(key(1), T);
      for (const s of handles) expect(await s.find(key(1))).toEqual({ createdAt: T });
      const ended = await Promise.all(Array.from({ length: 12 }, (_, i) => handles[i % handles.length].remove(key(1))));
      expect(ended.filter(Boolean)).toHaveLength(1);
      for (const s of handles) expect(await s.find(key(1))).toBeUndefined();
    });
  });
}
