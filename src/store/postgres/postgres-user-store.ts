import type pg from 'pg';
import type { AsyncUserStore, UserRecord } from '../user-store.js';

// The relay's people in PostgreSQL, with the SQLite store's semantics (src/store/user-store.ts):
// a person made on one node signs in on every node, and one removed on one is gone on all.

export class PostgresUserStore implements AsyncUserStore {
  /** The pool is shared with the other stores: whoever made it ends it. */
  constructor(private readonly pool: pg.Pool) {}

  async add(name: string, tokenHash: string, now = Date.now()): Promise<boolean> {
    const { rowCount } = await this.pool.query('INSERT INTO users (name, token_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [name, tokenHash, now]);
    return (rowCount ?? 0) === 1;
  }

  async list(): Promise<UserRecord[]> {
    const [{ rows }, links] = await Promise.all([
      this.pool.query<{ name: string; created_at: string }>('SELECT name, created_at FROM users ORDER BY name'),
      this.pool.query<{ link: string; name: string }>('SELECT link, name FROM user_links ORDER BY link'),
    ]);
    return rows.map((r) => ({ name: r.name, createdAt: Number(r.created_at), links: links.rows.filter((l) => l.name === r.name).map((l) => l.link) }));
  }

  async link(name: string, link: string): Promise<boolean> {
    // Only for a person that exists, in one statement: a person removed meanwhile gets no link.
    const { rowCount } = await this.pool.query(
      'INSERT INTO user_links (link, name) SELECT $1, name FROM users WHERE name = $2 ON CONFLICT (link) DO UPDATE SET name = EXCLUDED.name',
      [link, name],
    );
    return (rowCount ?? 0) > 0;
  }

  async unlink(name: string, link: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM user_links WHERE link = $1 AND name = $2', [link, name]);
    return (rowCount ?? 0) > 0;
  }

  async nameOfLink(link: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ name: string }>('SELECT name FROM user_links WHERE link = $1', [link]);
    return rows[0]?.name;
  }

  async nameOfToken(tokenHash: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ name: string }>('SELECT name FROM users WHERE token_hash = $1', [tokenHash]);
    return rows[0]?.name;
  }

  async remove(name: string): Promise<boolean> {
    // The links go with the person (ON DELETE CASCADE).
    const { rowCount } = await this.pool.query('DELETE FROM users WHERE name = $1', [name]);
    return (rowCount ?? 0) > 0;
  }
}
