import type Database from 'better-sqlite3';
import type { Session, TranscriptEntry } from '../sessions/model.js';

// Sessions live in the same SQLite file as the cards: the record, its transcript (one
// row per entry, appended) and the provider's own durable state (one JSON blob); also each
// session's agent token and the watches the human approved (see src/relay/access.ts).

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  id          TEXT PRIMARY KEY,
  status      TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  data        TEXT NOT NULL,
  state       TEXT
);
CREATE TABLE IF NOT EXISTS agent_tokens (
  token       TEXT PRIMARY KEY,
  session_id  TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS watch_grants (
  watcher     TEXT NOT NULL,
  target      TEXT NOT NULL,
  granted_at  INTEGER NOT NULL,
  PRIMARY KEY (watcher, target)
);
CREATE TABLE IF NOT EXISTS transcript (
  session_id  TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  data        TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
);
`;

export type SessionPatch = Partial<Pick<Session, 'status' | 'error' | 'updatedAt' | 'model' | 'agentsMayAnswer'>>;

export class SessionStore {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    this.stmt = {
      insert: db.prepare('INSERT INTO sessions (id, status, created_at, data) VALUES (?, ?, ?, ?)'),
      get: db.prepare('SELECT data FROM sessions WHERE id = ?').pluck(),
      update: db.prepare('UPDATE sessions SET status = ?, data = ? WHERE id = ?'),
      list: db.prepare('SELECT data FROM sessions ORDER BY created_at, rowid').pluck(),
      active: db.prepare(`SELECT data FROM sessions WHERE status NOT IN ('stopped', 'failed') ORDER BY created_at`).pluck(),
      append: db.prepare(
        `INSERT INTO transcript (session_id, seq, data)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM transcript WHERE session_id = ?), ?)`,
      ),
      transcript: db.prepare('SELECT data FROM transcript WHERE session_id = ? ORDER BY seq').pluck(),
      getState: db.prepare('SELECT state FROM sessions WHERE id = ?').pluck(),
      setState: db.prepare('UPDATE sessions SET state = ? WHERE id = ?'),
      setToken: db.prepare('INSERT INTO agent_tokens (token, session_id) VALUES (?, ?) ON CONFLICT (session_id) DO NOTHING'),
      tokenOf: db.prepare('SELECT token FROM agent_tokens WHERE session_id = ?').pluck(),
      // A stopped or failed session's token is void: one query, no session record parsed.
      sessionOf: db.prepare(
        `SELECT t.session_id FROM agent_tokens t JOIN sessions s ON s.id = t.session_id
         WHERE t.token = ? AND s.status NOT IN ('stopped', 'failed')`,
      ).pluck(),
      grant: db.prepare('INSERT INTO watch_grants (watcher, target, granted_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
      watches: db.prepare('SELECT 1 FROM watch_grants WHERE watcher = ? AND target = ?').pluck(),
    };
  }

  insert(session: Session): void {
    const { transcript: _omit, ...record } = session;
    this.stmt.insert.run(session.id, session.status, Date.parse(session.createdAt), JSON.stringify(record));
  }

  /** The session record without its transcript. */
  get(id: string): Session | undefined {
    const data = this.stmt.get.get(id) as string | undefined;
    return data === undefined ? undefined : (JSON.parse(data) as Session);
  }

  update(id: string, patch: SessionPatch): Session | undefined {
    const current = this.get(id);
    if (!current) return undefined;
    const next = { ...current, ...patch };
    this.stmt.update.run(next.status, JSON.stringify(next), id);
    return next;
  }

  list(): Session[] {
    return (this.stmt.list.all() as string[]).map((d) => JSON.parse(d) as Session);
  }

  /** Sessions that were not stopped or failed: the ones to resume after a restart. */
  active(): Session[] {
    return (this.stmt.active.all() as string[]).map((d) => JSON.parse(d) as Session);
  }

  append(id: string, entry: TranscriptEntry): void {
    this.stmt.append.run(id, id, JSON.stringify(entry));
  }

  transcript(id: string): TranscriptEntry[] {
    return (this.stmt.transcript.all(id) as string[]).map((d) => JSON.parse(d) as TranscriptEntry);
  }

  loadState<T>(id: string): T | undefined {
    const data = this.stmt.getState.get(id) as string | null | undefined;
    return data ? (JSON.parse(data) as T) : undefined;
  }

  saveState(id: string, state: unknown): void {
    this.stmt.setState.run(JSON.stringify(state), id);
  }

  /** The session's agent token, made once and kept, so a resumed agent keeps the same one. */
  agentToken(id: string, make: () => string): string {
    const existing = this.stmt.tokenOf.get(id) as string | undefined;
    if (existing) return existing;
    this.stmt.setToken.run(make(), id);
    return this.stmt.tokenOf.get(id) as string;
  }

  /** The live session an agent token belongs to (none for a stopped or failed session's). */
  sessionOfToken(token: string): string | undefined {
    return (this.stmt.sessionOf.get(token) as string | undefined) ?? undefined;
  }

  grantWatch(watcher: string, target: string, now: number): void {
    this.stmt.grant.run(watcher, target, now);
  }

  watches(watcher: string, target: string): boolean {
    return this.stmt.watches.get(watcher, target) !== undefined;
  }
}
