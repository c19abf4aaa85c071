import type Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import type { Async } from './store.js';

// The relay's people (docs/routing.md): each a name and a personal token, kept only as its
// SHA-256 (a token is 192 random bits: a plain hash is enough, and the database file alone
// gives no working token). A personal token is a human principal named by the person.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  name        TEXT PRIMARY KEY,
  token_hash  TEXT NOT NULL UNIQUE,
  created_at  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS user_links (
  link  TEXT PRIMARY KEY,
  name  TEXT NOT NULL
);
`;

/** What every personal token starts with (agent tokens start with `asa_`). */
export const PERSONAL_TOKEN_PREFIX = 'asp_';
/** A new personal token: `asp_` and 32 base64url characters (192 bits). */
export const newPersonalToken = () => `${PERSONAL_TOKEN_PREFIX}${randomBytes(24).toString('base64url')}`;
/** What the store keeps of a personal token. */
export const personalTokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export interface UserRecord {
  name: string;
  /** ms since the epoch. */
  createdAt: number;
  /** Chat users recorded as this person: "telegram:42", "slack:U123". */
  links: string[];
}

export class UserStore {
  private readonly stmt;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.stmt = {
      add: db.prepare('INSERT INTO users (name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING'),
      list: db.prepare('SELECT name, created_at AS createdAt FROM users ORDER BY name'),
      links: db.prepare('SELECT link, name FROM user_links ORDER BY link'),
      byToken: db.prepare('SELECT name FROM users WHERE token_hash = ?').pluck(),
      byLink: db.prepare('SELECT name FROM user_links WHERE link = ?').pluck(),
      exists: db.prepare('SELECT 1 FROM users WHERE name = ?').pluck(),
      link: db.prepare('INSERT INTO user_links (link, name) VALUES (?, ?) ON CONFLICT (link) DO UPDATE SET name = excluded.name'),
      unlink: db.prepare('DELETE FROM user_links WHERE link = ? AND name = ?'),
      remove: db.prepare('DELETE FROM users WHERE name = ?'),
      removeLinks: db.prepare('DELETE FROM user_links WHERE name = ?'),
    };
    this.removeTx = db.transaction((name: string) => {
      this.stmt.removeLinks.run(name);
      return this.stmt.remove.run(name).changes > 0;
    });
  }

  private readonly removeTx: (name: string) => boolean;

  /** False when a person of that name exists already. */
  add(name: string, tokenHash: string, now = Date.now()): boolean {
    return this.stmt.add.run(name, tokenHash, now).changes === 1;
  }

  list(): UserRecord[] {
    const links = this.stmt.links.all() as { link: string; name: string }[];
    return (this.stmt.list.all() as Omit<UserRecord, 'links'>[]).map((u) => ({ ...u, links: links.filter((l) => l.name === u.name).map((l) => l.link) }));
  }

  /** Records chat user `link` as this person (moving it from anyone it named before); false for an unknown person. */
  link(name: string, link: string): boolean {
    if (!this.stmt.exists.get(name)) return false;
    this.stmt.link.run(link, name);
    return true;
  }

  /** Whether this person had that link. */
  unlink(name: string, link: string): boolean {
    return this.stmt.unlink.run(link, name).changes > 0;
  }

  /** The person a chat user is linked to, if any. */
  nameOfLink(link: string): string | undefined {
    return (this.stmt.byLink.get(link) as string | undefined) ?? undefined;
  }

  /** The person whose token hashes to this, if any. */
  nameOfToken(tokenHash: string): string | undefined {
    return (this.stmt.byToken.get(tokenHash) as string | undefined) ?? undefined;
  }

  /** Whether there was such a person to remove. */
  remove(name: string): boolean {
    return this.removeTx(name);
  }
}

/** The user store with every call a promise, as PostgreSQL serves it (src/store/postgres/postgres-user-store.ts). */
export type AsyncUserStore = Async<UserStore>;

export function asyncUsers(store: UserStore): AsyncUserStore {
  return {
    add: async (name, hash, now) => store.add(name, hash, now),
    list: async () => store.list(),
    nameOfToken: async (hash) => store.nameOfToken(hash),
    link: async (name, link) => store.link(name, link),
    unlink: async (name, link) => store.unlink(name, link),
    nameOfLink: async (link) => store.nameOfLink(link),
    remove: async (name) => store.remove(name),
  };
}
