import type pg from 'pg';
import type { AsyncLoginStore } from '../login-store.js';

// The page's logins in PostgreSQL, with the SQLite store's semantics
// (src/store/login-store.ts): one row per login, keyed by a keyed hash of the cookie's login
// id, so any node recognises a cookie another node issued, and a logout on one ends it on all.

export class PostgresLoginStore implements AsyncLoginStore {
  /** The pool is shared with the other stores: whoever made it ends it. */
  constructor(private readonly pool: pg.Pool) {}

  async add(key: string, now = Date.now()): Promise<void> {
    // SQLite's INSERT OR REPLACE: the same key again starts its login anew.
    await this.pool.query(
      'INSERT INTO web_logins (key, created_at) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET created_at = EXCLUDED.created_at',
      [key, now],
    );
  }

  /** When the login was made (ms since the epoch), or undefined when there is none. */
  async createdAt(key: string): Promise<number | undefined> {
    // BIGINT comes back from pg as a string.
    const { rows } = await this.pool.query<{ created_at: string }>('SELECT created_at FROM web_logins WHERE key = $1', [key]);
    return rows[0] ? Number(rows[0].created_at) : undefined;
  }

  /** Whether there was such a login to end (true for one of several nodes ending it at once). */
  async remove(key: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM web_logins WHERE key = $1', [key]);
    return (rowCount ?? 0) > 0;
  }

  /** Forgets the logins made before `before`, which no cookie can still present. */
  async prune(before: number): Promise<void> {
    await this.pool.query('DELETE FROM web_logins WHERE created_at < $1', [before]);
  }
}
