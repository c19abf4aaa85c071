import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import type { Session, TranscriptEntry } from './session-record.js';
import type { Async } from './store.js';
import { parseStored } from './stored-json.js';

/** A row of a JSON column with its id. */
type Row = { id: string; data: string };

// Sessions live in the same SQLite file as the cards: the record, its transcript (one
// row per entry, appended) and the provider's own durable state (one JSON blob); also the
// hash of each session's agent token and the watches the human approved (see
// src/relay/access.ts). A token itself is never stored: whoever reads the file cannot act
// as an agent with what they find.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  id          TEXT PRIMARY KEY,
  status      TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  data        TEXT NOT NULL,
  state       TEXT
);
CREATE TABLE IF NOT EXISTS agent_tokens (
  token_hash  TEXT PRIMARY KEY,
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

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Databases written before tokens were hashed hold them in a "token" column: each is
 * replaced by its hash, with the freed bytes zeroed (secure_delete) and the -wal folded
 * back and emptied, so no copy of the plain token is left in either file.
 */
function hashPlainTokens(db: Database.Database): void {
  const plain = () => (db.prepare(`SELECT name FROM pragma_table_info('agent_tokens')`).pluck().all() as string[]).includes('token');
  if (!plain()) return;
  const secure = db.pragma('secure_delete', { simple: true });
  db.pragma('secure_delete = ON');
  try {
    db.transaction(() => {
      // Asked again under the write lock: another relay opening the same file may have done it.
      if (!plain()) return;
      const rows = db.prepare('SELECT token, session_id AS id FROM agent_tokens').all() as { token: string; id: string }[];
      const set = db.prepare('UPDATE agent_tokens SET token = ? WHERE session_id = ?');
      for (const { token, id } of rows) set.run(tokenHash(token), id);
      db.exec('ALTER TABLE agent_tokens RENAME COLUMN token TO token_hash');
    }).immediate();
  } finally {
    db.pragma(`secure_delete = ${secure ? 'ON' : 'OFF'}`);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
}

export type SessionPatch = Partial<Pick<Session, 'status' | 'error' | 'updatedAt' | 'model' | 'agentsMayAnswer'>>;

export class SessionStore {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    hashPlainTokens(db);
    this.stmt = {
      insert: db.prepare('INSERT INTO sessions (id, status, created_at, data) VALUES (?, ?, ?, ?)'),
      get: db.prepare('SELECT data FROM sessions WHERE id = ?').pluck(),
      update: db.prepare('UPDATE sessions SET status = ?, data = ? WHERE id = ?'),
      list: db.prepare('SELECT id, data FROM sessions ORDER BY created_at, rowid'),
      active: db.prepare(`SELECT id, data FROM sessions WHERE status NOT IN ('stopped', 'failed') ORDER BY created_at`),
      append: db.prepare(
        `INSERT INTO transcript (session_id, seq, data)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM transcript WHERE session_id = ?), ?)`,
      ),
      transcript: db.prepare('SELECT seq, data FROM transcript WHERE session_id = ? ORDER BY seq'),
      getState: db.prepare('SELECT state FROM sessions WHERE id = ?').pluck(),
      setState: db.prepare('UPDATE sessions SET state = ? WHERE id = ?'),
      setToken: db.prepare(
        `INSERT INTO agent_tokens (token_hash, session_id) VALUES (?, ?)
         ON CONFLICT (session_id) DO UPDATE SET token_hash = excluded.token_hash WHERE token_hash <> excluded.token_hash`,
      ),
      // A stopped or failed session's token is void: one query, no session record parsed.
      sessionOf: db.prepare(
        `SELECT t.session_id FROM agent_tokens t JOIN sessions s ON s.id = t.session_id
         WHERE t.token_hash = ? AND s.status NOT IN ('stopped', 'failed')`,
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
    return data === undefined ? undefined : parseStored<Session>('sessions', id, data);
  }

  update(id: string, patch: SessionPatch): Session | undefined {
    const current = this.get(id);
    if (!current) return undefined;
    const next = { ...current, ...patch };
    this.stmt.update.run(next.status, JSON.stringify(next), id);
    return next;
  }

  list(): Session[] {
    return (this.stmt.list.all() as Row[]).map((r) => parseStored<Session>('sessions', r.id, r.data));
  }

  /** Sessions that were not stopped or failed: the ones to resume after a restart. */
  active(): Session[] {
    return (this.stmt.active.all() as Row[]).map((r) => parseStored<Session>('sessions', r.id, r.data));
  }

  append(id: string, entry: TranscriptEntry): void {
    this.stmt.append.run(id, id, JSON.stringify(entry));
  }

  transcript(id: string): TranscriptEntry[] {
    return (this.stmt.transcript.all(id) as { seq: number; data: string }[]).map((r) => parseStored<TranscriptEntry>('transcript', `${id}/${r.seq}`, r.data));
  }

  loadState<T>(id: string): T | undefined {
    const data = this.stmt.getState.get(id) as string | null | undefined;
    return data ? (JSON.parse(data) as T) : undefined;
  }

  saveState(id: string, state: unknown): void {
    this.stmt.setState.run(JSON.stringify(state), id);
  }

  /** Keeps the hash of the session's agent token (replacing an earlier one). */
  setAgentToken(id: string, token: string): void {
    this.stmt.setToken.run(tokenHash(token), id);
  }

  /** The live session an agent token belongs to (none for a stopped or failed session's). */
  sessionOfToken(token: string): string | undefined {
    return (this.stmt.sessionOf.get(tokenHash(token)) as string | undefined) ?? undefined;
  }

  grantWatch(watcher: string, target: string, now: number): void {
    this.stmt.grant.run(watcher, target, now);
  }

  watches(watcher: string, target: string): boolean {
    return this.stmt.watches.get(watcher, target) !== undefined;
  }
}

/**
 * The session store with every call a promise, as PostgreSQL serves it
 * (src/store/postgres/postgres-session-store.ts). loadState is spelled out: the mapped type
 * would lose its type parameter.
 */
export type AsyncSessionStore = Omit<Async<SessionStore>, 'loadState'> & {
  loadState<T>(id: string): Promise<T | undefined>;
};

/** The embedded store behind the asynchronous interface (the same semantics, resolved at once). */
export function asyncSessions(store: SessionStore): AsyncSessionStore {
  return {
    insert: async (session) => store.insert(session),
    get: async (id) => store.get(id),
    update: async (id, patch) => store.update(id, patch),
    list: async () => store.list(),
    active: async () => store.active(),
    append: async (id, entry) => store.append(id, entry),
    transcript: async (id) => store.transcript(id),
    loadState: async <T>(id: string) => store.loadState<T>(id),
    saveState: async (id, state) => store.saveState(id, state),
    setAgentToken: async (id, token) => store.setAgentToken(id, token),
    sessionOfToken: async (token) => store.sessionOfToken(token),
    grantWatch: async (watcher, target, now) => store.grantWatch(watcher, target, now),
    watches: async (watcher, target) => store.watches(watcher, target),
  };
}
