import type pg from 'pg';
import type { AsyncLoginStore, Login } from '../login-store.js';

// The page's logins in PostgreSQL, with the SQLite store's semantics
// (src/store/login-store.ts): one row per login, keyed by a keyed hash of the cookie's login
// id, so any node recognises a cookie another node issued, and a logout on one ends it on all.

export class PostgresLoginStore implements AsyncLoginStore {
  /** The pool is shared with the other stores: whoever made it ends it. */
  constructor(private readonly pool: pg.Pool) {}

  async add(key: string, now = Date.now(), who?: string): Promise<void> {
    // SQLite's INSERT OR REPLACE: the same key again starts its login anew.
    await this.pool.query(
      'INSERT INTO web_logins (key, created_at, who) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET created_at = EXCLUDED.created_at, who = EXCLUDED.who',
      [key, now, who ?? null],
    );
  }

  /** The login, or undefined when there is none. */
  async find(key: string): Promise<Login | undefined> {
    // BIGINT comes back from pg as a string.
    const { rows } = await this.pool.query<{ created_at: string; who: string | null }>('SELECT created_at, who FROM web_logins WHERE key = $1', [key]);
    const row = rows[0];
    return row && { createdAt: Number(row.created_at), ...(row.who ? { who: row.who } : {}) };
  }

  /** Ends every login of a person (removed: their cookies stop working at once, on every node). */
  async removeWho(who: string): Promise<void> {
    await this.pool.query('DELETE FROM web_logins WHERE who = $1', [who]);
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
