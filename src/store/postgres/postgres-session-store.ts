import { createHash } from 'node:crypto';
import type pg from 'pg';
import { transaction } from './transaction.js';
import type { Session, TranscriptEntry } from '../session-record.js';
import type { AsyncSessionStore, SessionPatch } from '../session-store.js';
import { parseStored } from '../stored-json.js';

// The sessions in PostgreSQL, with the SQLite store's semantics (src/store/session-store.ts):
// the record as JSON text (key order kept), its transcript one row per entry, the provider's
// state one JSON blob, the hash of each agent token (never the token) and the watch grants.
// SQLite has one writer at a time; here several nodes write at once, so the two
// read-then-write steps are made safe: an update locks the session's row, and an append
// takes a per-session advisory lock before it counts MAX(seq) + 1.

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
const parse = (id: string, data: string) => parseStored<Session>('sessions', id, data);

/**
 * The first key of the transcript's advisory lock (the second is the session id's hash).
 * Distinct from the migrations' one-key lock; two sessions whose ids hash alike merely take
 * turns appending.
 */
const TRANSCRIPT_LOCK = 7_070_002;

/** unique_violation */
const UNIQUE_VIOLATION = '23505';


export class PostgresSessionStore implements AsyncSessionStore {
  /** The pool is shared with the other stores: whoever made it ends it. */
  constructor(private readonly pool: pg.Pool) {}

  async insert(session: Session): Promise<void> {
    const { transcript: _omit, ...record } = session;
    await this.pool.query('INSERT INTO sessions (id, status, created_at, data) VALUES ($1, $2, $3, $4)', [
      session.id,
      session.status,
      Date.parse(session.createdAt),
      JSON.stringify(record),
    ]);
  }

  /** The session record without its transcript. */
  async get(id: string): Promise<Session | undefined> {
    const { rows } = await this.pool.query<{ data: string }>('SELECT data FROM sessions WHERE id = $1', [id]);
    return rows[0] ? parse(id, rows[0].data) : undefined;
  }

  async update(id: string, patch: SessionPatch): Promise<Session | undefined> {
    // The row stays locked from the read to the write: a patch another node makes at the
    // same moment is applied after this one, onto it, and neither is lost.
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{ data: string }>('SELECT data FROM sessions WHERE id = $1 FOR UPDATE', [id]);
      if (!rows[0]) return undefined;
      const next = { ...parse(id, rows[0].data), ...patch };
      await client.query('UPDATE sessions SET status = $2, data = $3 WHERE id = $1', [id, next.status, JSON.stringify(next)]);
      return next;
    });
  }

  async list(): Promise<Session[]> {
    const { rows } = await this.pool.query<{ id: string; data: string }>('SELECT id, data FROM sessions ORDER BY created_at, seq');
    return rows.map((r) => parse(r.id, r.data));
  }

  /** Sessions that were not stopped or failed: the ones to resume after a restart. */
  async active(): Promise<Session[]> {
    const { rows } = await this.pool.query<{ id: string; data: string }>(
      `SELECT id, data FROM sessions WHERE status NOT IN ('stopped', 'failed') ORDER BY created_at, seq`,
    );
    return rows.map((r) => parse(r.id, r.data));
  }

  async append(id: string, entry: TranscriptEntry): Promise<void> {
    // MAX(seq) + 1 is only right with one writer per session at a time: the lock makes it
    // so, and it is taken in a statement of its own so the INSERT's snapshot, taken after
    // it, sees every entry committed before the lock was granted.
    await transaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [TRANSCRIPT_LOCK, id]);
      await client.query(
        `INSERT INTO transcript (session_id, seq, data)
         VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM transcript WHERE session_id = $1), $2)`,
        [id, JSON.stringify(entry)],
      );
    });
  }

  async transcript(id: string): Promise<TranscriptEntry[]> {
    const { rows } = await this.pool.query<{ seq: string; data: string }>('SELECT seq, data FROM transcript WHERE session_id = $1 ORDER BY seq', [id]);
    return rows.map((r) => parseStored<TranscriptEntry>('transcript', `${id}/${r.seq}`, r.data));
  }

  async loadState<T>(id: string): Promise<T | undefined> {
    const { rows } = await this.pool.query<{ state: string | null }>('SELECT state FROM sessions WHERE id = $1', [id]);
    const data = rows[0]?.state;
    return data ? (JSON.parse(data) as T) : undefined;
  }

  async saveState(id: string, state: unknown): Promise<void> {
    await this.pool.query('UPDATE sessions SET state = $2 WHERE id = $1', [id, JSON.stringify(state)]);
  }

  /** Keeps the hash of the session's agent token (replacing an earlier one). */
  async setAgentToken(id: string, token: string): Promise<void> {
    const upsert = () =>
      this.pool.query(
        `INSERT INTO agent_tokens (token_hash, session_id) VALUES ($1, $2)
         ON CONFLICT (session_id) DO UPDATE SET token_hash = EXCLUDED.token_hash WHERE agent_tokens.token_hash <> EXCLUDED.token_hash`,
        [tokenHash(token), id],
      );
    try {
      await upsert();
    } catch (err) {
      // Every node stores a session's token on first use. When two insert the same row at
      // once, ON CONFLICT settles only its own index (session_id): the other unique index,
      // token_hash, reports the twin as a violation. Once more, the row is there and the
      // upsert sees it; a hash truly held by another session fails again, as in SQLite.
      if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
      await upsert();
    }
  }

  /** The live session an agent token belongs to (none for a stopped or failed session's). */
  async sessionOfToken(token: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ session_id: string }>(
      `SELECT t.session_id FROM agent_tokens t JOIN sessions s ON s.id = t.session_id
       WHERE t.token_hash = $1 AND s.status NOT IN ('stopped', 'failed')`,
      [tokenHash(token)],
    );
    return rows[0]?.session_id;
  }

  async grantWatch(watcher: string, target: string, now: number): Promise<void> {
    await this.pool.query('INSERT INTO watch_grants (watcher, target, granted_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      watcher,
      target,
      now,
    ]);
  }

  async watches(watcher: string, target: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM watch_grants WHERE watcher = $1 AND target = $2', [watcher, target]);
    return (rowCount ?? 0) > 0;
  }
}
