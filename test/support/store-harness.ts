import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { migrate } from '../../src/store/postgres/migrations.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { freshDatabase, testPool } from './postgres.js';

// The store contract suites run every test against both stores. A harness opens the store
// under test on a fresh SQLite file or a fresh PostgreSQL database, can open further
// independent handles on the same data (another process, another node: each its own
// SqliteStore on the file, or its own pool that migrates at start as a node does), and
// removes everything afterwards.

export interface StoreHarness<T> {
  store: T;
  /** A second, independent handle on the same data. */
  other(): Promise<T>;
  /** What lies behind the store, for tests that read or tamper behind its back. */
  backend: { kind: 'sqlite'; file: string } | { kind: 'postgres'; pool: pg.Pool };
  dispose(): Promise<void>;
}

export interface StoreMakers<T> {
  sqlite(store: SqliteStore): T;
  postgres(pool: pg.Pool): T | Promise<T>;
}

/** One harness maker per store kind, for `for (const [name, open] of Object.entries(…))`. */
export function bothStores<T>(make: StoreMakers<T>): Record<'sqlite' | 'postgres', () => Promise<StoreHarness<T>>> {
  return {
    sqlite: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'askrelay-store-'));
      const file = join(dir, 'askrelay.sqlite');
      const opened: SqliteStore[] = [];
      const open = async () => make.sqlite(opened[opened.push(new SqliteStore(file)) - 1]);
      return {
        store: await open(),
        other: open,
        backend: { kind: 'sqlite', file },
        dispose: async () => {
          for (const s of opened) s.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    postgres: async () => {
      const db = await freshDatabase();
      const pools: pg.Pool[] = [];
      const open = async () => {
        const pool = testPool(db.url);
        pools.push(pool);
        await migrate(pool);
        return make.postgres(pool);
      };
      const store = await open();
      return {
        store,
        other: open,
        backend: { kind: 'postgres', pool: pools[0] },
        dispose: async () => {
          await Promise.all(pools.map((p) => p.end()));
          await db.drop();
        },
      };
    },
  };
}
