import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Card } from '../cards/model.js';
import { PushSubscriptionStore } from './push-subscription-store.js';
import { AuditStore } from './audit-store.js';
import { CallStore } from './call-store.js';
import { ChannelStore } from './channel-store.js';
import { LoginStore } from './login-store.js';
import { UserStore } from './user-store.js';
import { PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE, privateFileIfExists } from './secret-file.js';
import { SessionStore } from './session-store.js';
import { openSqlite, refuseUnwritable } from './sqlite-file.js';
import { cardAuditRecord, type CardChange } from './card-audit.js';
import { closed, pendingRead, type AmendKind, type CardClose, type CardFilter, type CardStore, type CloseResult, type InsertResult, type PendingDeadline } from './store.js';
import { parseStored } from './stored-json.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS cards (
  id          TEXT PRIMARY KEY,
  session_id  TEXT,
  status      TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  answer_key  TEXT,
  data        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cards_pending ON cards (status, expires_at);
CREATE INDEX IF NOT EXISTS cards_session ON cards (session_id, created_at);
`;

export interface SqliteOptions {
  /** "full" fsyncs every commit (survives power loss); "normal" survives process crashes. */
  sync?: 'normal' | 'full';
  /** The audit log's key, kept outside the database (see audit-chain.ts). */
  auditKey?: Buffer;
  /** Told when the audit entries of a turn could not be written (they wait for the next write); default stderr. */
  onAuditError?: (err: Error) => void;
  /** How long a write waits for another connection's lock (default BUSY_TIMEOUT_MS, 5 s). */
  busyTimeoutMs?: number;
}

export class SqliteStore implements CardStore {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<SqliteStore['statements']>;
  private readonly changeTx: Database.Transaction<(work: () => { result: unknown; changes: [CardChange, Card][] }) => unknown>;
  readonly sessions: SessionStore;
  readonly calls: CallStore;
  readonly audit: AuditStore;
  readonly push: PushSubscriptionStore;
  readonly channels: ChannelStore;
  readonly logins: LoginStore;
  readonly users: UserStore;

  constructor(file: string, options: SqliteOptions = {}) {
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_FOLDER_MODE });
      // A file someone made read-only is refused before anything touches it (its mode included).
      refuseUnwritable(file);
      // The file holds answers, push keys and the audit log: made (or tightened to) 0600
      // before SQLite opens it, whatever the umask. SQLite gives the -wal and -shm it
      // creates the database's mode.
      closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
      privateFileIfExists(file);
    }
    // A damaged or locked file stops here with the sentence saying so (see sqlite-file.ts).
    const { db, prepared } = openSqlite(file, { sync: options.sync ?? 'normal', busyMs: options.busyTimeoutMs }, (db) => {
      // Those an older relay left behind keep the mode they were made with.
      if (file !== ':memory:') for (const suffix of ['-wal', '-shm']) privateFileIfExists(`${file}${suffix}`);
      db.exec(SCHEMA);
      return {
        stmt: this.statements(db),
        sessions: new SessionStore(db),
        calls: new CallStore(db),
        audit: new AuditStore(db, { key: options.auditKey, ...(options.onAuditError ? { onError: options.onAuditError } : {}) }),
        push: new PushSubscriptionStore(db),
        channels: new ChannelStore(db),
        logins: new LoginStore(db),
        users: new UserStore(db),
      };
    });
    this.db = db;
    this.changeTx = db.transaction((work: () => { result: unknown; changes: [CardChange, Card][] }) => {
      const { result, changes } = work();
      this.audit.appendWithin(changes.map(([change, card]) => cardAuditRecord(change, card)).filter((r) => r !== undefined));
      return result;
    });
    ({ stmt: this.stmt, sessions: this.sessions, calls: this.calls, audit: this.audit, push: this.push, channels: this.channels, logins: this.logins, users: this.users } = prepared);
  }

  private statements(db: Database.Database) {
    return {
      insert: db.prepare(
        `INSERT INTO cards (id, session_id, status, created_at, expires_at, data)
         VALUES (@id, @sessionId, @status, @createdAt, @expiresAt, @data) ON CONFLICT (id) DO NOTHING`,
      ),
      get: db.prepare('SELECT data FROM cards WHERE id = ?').pluck(),
      key: db.prepare('SELECT answer_key FROM cards WHERE id = ?').pluck(),
      update: db.prepare(
        `UPDATE cards SET status = @status, answer_key = @key, data = @data WHERE id = @id AND status = 'pending'`,
      ),
      amend: db.prepare(`UPDATE cards SET data = @data WHERE id = @id`),
      expire: db.prepare(
        `UPDATE cards SET status = 'expired',
           data = json_set(data, '$.status', 'expired', '$.closedAt', strftime('%Y-%m-%dT%H:%M:%fZ', expires_at / 1000.0, 'unixepoch'))
         WHERE status = 'pending' AND expires_at <= ? AND json_type(data, '$.onExpiry') IS NULL RETURNING data`,
      ).pluck(),
      // SQLite's json_set above would stop on such a row with a bare "malformed JSON".
      brokenOverdue: db.prepare(`SELECT id, data FROM cards WHERE status = 'pending' AND expires_at <= ? AND NOT json_valid(data) LIMIT 1`),
      deadlines: db.prepare(`SELECT id, expires_at AS expiresAt FROM cards WHERE status = 'pending'`),
    };
  }

  /**
   * Runs `work` in one IMMEDIATE transaction (the write lock taken before any read, so the
   * read-check-write is atomic against other processes too), with the audit entries of the
   * changes it returns. The transaction function is made once: this is every change's path.
   */
  private change<T>(work: () => { result: T; changes: [CardChange, Card][] }): T {
    return this.changeTx.immediate(work) as T;
  }

  /** The routes live beside this one file, never replaced behind its back: `routesAt` needs no check. */
  insertCard(card: Card, _routesAt?: number | null): InsertResult {
    return this.change<InsertResult>(() => {
      const info = this.stmt.insert.run({
        id: card.id,
        sessionId: card.sessionId,
        status: card.status,
        createdAt: Date.parse(card.createdAt),
        expiresAt: Date.parse(card.expiresAt),
        data: JSON.stringify(card),
      });
      if (info.changes === 1) return { result: { card, created: true }, changes: [['created', card]] };
      return { result: { card: this.getCard(card.id)!, created: false }, changes: [] };
    });
  }

  getCard(id: string): Card | undefined {
    const data = this.stmt.get.get(id) as string | undefined;
    return data === undefined ? undefined : parseStored<Card>('cards', id, data);
  }

  listCards(filter: CardFilter = {}): Card[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.sessionId) {
      where.push('session_id = ?');
      params.push(filter.sessionId);
    }
    const direction = filter.order === 'newest' ? 'DESC' : 'ASC';
    const sql = `SELECT id, data FROM cards ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY created_at ${direction}, rowid ${direction} LIMIT ?`;
    params.push(filter.limit ?? -1);
    const rows = this.db.prepare(sql).all(...params) as { id: string; data: string }[];
    return rows.map((r) => parseStored<Card>('cards', r.id, r.data));
  }

  closeCard(id: string, close: CardClose, read?: Card): CloseResult | undefined {
    const known = pendingRead(id, read);
    return this.change<CloseResult | undefined>(() => {
      // The UPDATE … WHERE status = 'pending' is the compare-and-set; with the caller's read
      // of the pending card, no read of our own.
      const current = known ?? this.getCard(id);
      if (!current) return { result: undefined, changes: [] };
      if (current.status === 'pending') {
        const card = closed(current, close);
        if (this.stmt.update.run({ id, status: card.status, key: close.idempotencyKey ?? null, data: JSON.stringify(card) }).changes === 1) {
          return { result: { changed: true, card }, changes: [['closed', card]] };
        }
      }
      return { result: { changed: false, card: known ? this.getCard(id)! : current }, changes: [] };
    });
  }

  amendCard(id: string, change: (card: Card) => Card | undefined, kind: AmendKind): CloseResult | undefined {
    return this.change<CloseResult | undefined>(() => {
      const current = this.getCard(id);
      if (!current) return { result: undefined, changes: [] };
      const card = change(current);
      if (!card) return { result: { changed: false, card: current }, changes: [] };
      this.stmt.amend.run({ id, data: JSON.stringify(card) });
      return { result: { changed: true, card }, changes: [[kind, card]] };
    });
  }

  answerKey(id: string): string | undefined {
    return (this.stmt.key.get(id) as string | null | undefined) ?? undefined;
  }

  expireOverdue(now: number): Card[] {
    return this.change(() => {
      const broken = this.stmt.brokenOverdue.get(now) as { id: string; data: string } | undefined;
      if (broken) parseStored('cards', broken.id, broken.data);
      const cards = (this.stmt.expire.all(now) as string[]).map((data) => JSON.parse(data) as Card);
      return { result: cards, changes: cards.map((card): [CardChange, Card] => ['closed', card]) };
    });
  }

  pendingDeadlines(): PendingDeadline[] {
    return this.stmt.deadlines.all() as PendingDeadline[];
  }

  close(): void {
    try {
      this.audit.flush();
    } finally {
      this.db.close();
    }
  }
}
