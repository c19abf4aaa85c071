import type Database from 'better-sqlite3';
import type { Async } from './store.js';

// The page's logins: one row per POST /api/login, deleted by POST /api/logout. The cookie
// carries a random login id; only a keyed hash of it is kept here (src/server/auth.ts makes
// it), so the database file alone does not give a working cookie.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS web_logins (
  key         TEXT PRIMARY KEY,
  created_at  INTEGER NOT NULL,
  who         TEXT
);
`;

/** A login: when it was made, and the person it signs in as (none: the operator). */
export interface Login {
  createdAt: number;
  who?: string;
}

export class LoginStore {
  private readonly stmt;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    // A file an older relay made lacks the column: every login in it is the operator's.
    const columns = db.prepare('PRAGMA table_info(web_logins)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'who')) db.exec('ALTER TABLE web_logins ADD COLUMN who TEXT');
    this.stmt = {
      add: db.prepare('INSERT OR REPLACE INTO web_logins (key, created_at, who) VALUES (?, ?, ?)'),
      find: db.prepare('SELECT created_at AS createdAt, who FROM web_logins WHERE key = ?'),
      remove: db.prepare('DELETE FROM web_logins WHERE key = ?'),
      removeWho: db.prepare('DELETE FROM web_logins WHERE who = ?'),
      prune: db.prepare('DELETE FROM web_logins WHERE created_at < ?'),
    };
  }

  add(key: string, now = Date.now(), who?: string): void {
    this.stmt.add.run(key, now, who ?? null);
  }

  /** The login, or undefined when there is none. */
  find(key: string): Login | undefined {
    const row = this.stmt.find.get(key) as { createdAt: number; who: string | null } | undefined;
    return row && { createdAt: row.createdAt, ...(row.who ? { who: row.who } : {}) };
  }

  /** Ends every login of a person (removed: their cookies stop working at once). */
  removeWho(who: string): void {
    this.stmt.removeWho.run(who);
  }

  /** Whether there was such a login to end. */
  remove(key: string): boolean {
    return this.stmt.remove.run(key).changes > 0;
  }

  /** Forgets the logins made before `before`, which no cookie can still present. */
  prune(before: number): void {
    this.stmt.prune.run(before);
  }
}

/** The login store with every call a promise, as PostgreSQL serves it (src/store/postgres/postgres-login-store.ts). */
export type AsyncLoginStore = Async<LoginStore>;

/** The embedded store behind the asynchronous interface (the same semantics, resolved at once). */
export function asyncLogins(store: LoginStore): AsyncLoginStore {
  return {
    add: async (key, now, who) => store.add(key, now, who),
    find: async (key) => store.find(key),
    removeWho: async (who) => store.removeWho(who),
    remove: async (key) => store.remove(key),
    prune: async (before) => store.prune(before),
  };
}
