import type Database from 'better-sqlite3';
import type { Async } from './store.js';

// The page's logins: one row per POST /api/login, deleted by POST /api/logout. The cookie
// carries a random login id; only a keyed hash of it is kept here (src/server/auth.ts makes
// it), so the database file alone does not give a working cookie.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS web_logins (
  key         TEXT PRIMARY KEY,
  created_at  INTEGER NOT NULL
);
`;

export class LoginStore {
  private readonly stmt;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.stmt = {
      add: db.prepare('INSERT OR REPLACE INTO web_logins (key, created_at) VALUES (?, ?)'),
      createdAt: db.prepare('SELECT created_at FROM web_logins WHERE key = ?').pluck(),
      remove: db.prepare('DELETE FROM web_logins WHERE key = ?'),
      prune: db.prepare('DELETE FROM web_logins WHERE created_at < ?'),
    };
  }

  add(key: string, now = Date.now()): void {
    this.stmt.add.run(key, now);
  }

  /** When the login was made (ms since the epoch), or undefined when there is none. */
  createdAt(key: string): number | undefined {
    return (this.stmt.createdAt.get(key) as number | undefined) ?? undefined;
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
    add: async (key, now) => store.add(key, now),
    createdAt: async (key) => store.createdAt(key),
    remove: async (key) => store.remove(key),
    prune: async (before) => store.prune(before),
  };
}
