import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { z } from 'zod';

// The audit log: every card event (created, answered, skipped, expired, cancelled) and
// every refused attempt, appended with its time, actor and surface. Each entry carries the
// hash of the one before it, and a one-row head holds the last sequence number and hash,
// so `verify` finds an edited row (its hash no longer matches), a removed row (a gap in the
// sequence, a broken link) and a removed tail (the head points past the end).
//
// The relay's own events go through `enqueue`: entries of one turn of the event loop are
// written together in one transaction right after it, so auditing adds no write to the
// request that caused the event (and expiring 10,000 cards at start is one write, not
// 10,000). Reads flush first; a crash can lose at most the entries of that one turn.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit (
  seq       INTEGER PRIMARY KEY,
  data      TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_head (
  one  INTEGER PRIMARY KEY CHECK (one = 1),
  seq  INTEGER NOT NULL,
  hash TEXT NOT NULL
);
`;

export const AuditEventSchema = z.enum([
  'card.created',
  'card.answered',
  'card.skipped',
  'card.expired',
  'card.cancelled',
  'card.refused',
  'session.permission',
]);

export const AuditEntrySchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  event: AuditEventSchema,
  cardId: z.string().optional(),
  sessionId: z.string().nullable().optional(),
  actor: z.object({ kind: z.enum(['human', 'agent', 'system']), id: z.string() }),
  surface: z.string(),
  /** What was refused and why, the answer's shape, a setting's new value… */
  detail: z.record(z.string(), z.unknown()).optional(),
  prevHash: z.string(),
  hash: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;
export type AuditRecord = Omit<AuditEntry, 'seq' | 'prevHash' | 'hash'>;

const GENESIS = '0'.repeat(64);

/** The hash of an entry: the previous hash and the entry's own fields, in a fixed order. */
export function hashEntry(entry: Omit<AuditEntry, 'hash'>): string {
  const { seq, at, event, cardId, sessionId, actor, surface, detail, prevHash } = entry;
  const canonical = JSON.stringify([seq, at, event, cardId ?? null, sessionId ?? null, actor.kind, actor.id, surface, detail ?? null, prevHash]);
  return createHash('sha256').update(canonical).digest('hex');
}

export interface AuditCheck {
  ok: boolean;
  entries: number;
  /** One sentence per problem found, e.g. "entry 12 was edited". */
  problems: string[];
}

export class AuditStore {
  private readonly stmt;
  private readonly appendTx;
  private queued: AuditRecord[] = [];
  private flushing?: NodeJS.Immediate;

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    this.stmt = {
      head: db.prepare('SELECT seq, hash FROM audit_head WHERE one = 1'),
      insert: db.prepare('INSERT INTO audit (seq, data, prev_hash, hash) VALUES (?, ?, ?, ?)'),
      setHead: db.prepare('INSERT INTO audit_head (one, seq, hash) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash'),
      page: db.prepare('SELECT data FROM audit WHERE seq > ? ORDER BY seq LIMIT ?').pluck(),
      all: db.prepare('SELECT seq, data, prev_hash AS prevHash, hash FROM audit ORDER BY seq'),
    };
    this.appendTx = db.transaction((records: AuditRecord[]): AuditEntry[] => {
      let head = this.stmt.head.get() as { seq: number; hash: string } | undefined;
      const entries = records.map((record) => {
        const base = { seq: (head?.seq ?? 0) + 1, ...record, prevHash: head?.hash ?? GENESIS };
        const entry: AuditEntry = { ...base, hash: hashEntry(base) };
        this.stmt.insert.run(entry.seq, JSON.stringify(entry), entry.prevHash, entry.hash);
        head = entry;
        return entry;
      });
      if (head) this.stmt.setHead.run(head.seq, head.hash);
      return entries;
    });
  }

  /** Appends now (after whatever is queued) and returns the entry. */
  append(record: AuditRecord): AuditEntry {
    return this.write([...this.take(), record]).at(-1)!;
  }

  /** Appends right after this turn of the event loop, together with the rest of the turn's entries. */
  enqueue(record: AuditRecord): void {
    this.queued.push(record);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** Writes what is queued (reads and close do this first). */
  flush(): void {
    const records = this.take();
    if (records.length) this.write(records);
  }

  private take(): AuditRecord[] {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    const records = this.queued;
    this.queued = [];
    return records;
  }

  private write(records: AuditRecord[]): AuditEntry[] {
    // IMMEDIATE: the read of the head and the appends are one step, even across processes.
    return this.appendTx.immediate(records);
  }

  /** Entries after `after` (a sequence number), oldest first. */
  list(after = 0, limit = 1000): AuditEntry[] {
    this.flush();
    return (this.stmt.page.all(after, limit) as string[]).map((data) => JSON.parse(data) as AuditEntry);
  }

  verify(): AuditCheck {
    this.flush();
    const rows = this.stmt.all.all() as { seq: number; data: string; prevHash: string; hash: string }[];
    const problems: string[] = [];
    let prev = GENESIS;
    let expected = 1;
    for (const row of rows) {
      if (row.seq !== expected) {
        problems.push(row.seq - 1 === expected ? `entry ${expected} was removed` : `entries ${expected}-${row.seq - 1} were removed`);
      }
      let entry: AuditEntry | undefined;
      try {
        entry = AuditEntrySchema.parse(JSON.parse(row.data));
      } catch {
        problems.push(`entry ${row.seq} is not a valid entry`);
      }
      if (entry) {
        const { hash: _stored, ...fields } = entry;
        const mismatch = entry.seq !== row.seq || entry.prevHash !== row.prevHash || entry.hash !== row.hash;
        if (mismatch || hashEntry(fields) !== row.hash) problems.push(`entry ${row.seq} was edited`);
      }
      if (row.prevHash !== prev && row.seq === expected) problems.push(`entry ${row.seq} does not follow entry ${row.seq - 1}`);
      prev = row.hash;
      expected = row.seq + 1;
    }
    const head = this.stmt.head.get() as { seq: number; hash: string } | undefined;
    const last = rows.at(-1);
    if (head && (!last || head.seq !== last.seq || head.hash !== last.hash)) {
      problems.push(head.seq > (last?.seq ?? 0) ? `entries after ${last?.seq ?? 0} (up to ${head.seq}) were removed` : 'the log head was edited');
    }
    if (!head && rows.length) problems.push('the log head was removed');
    return { ok: problems.length === 0, entries: rows.length, problems };
  }
}
