import type Database from 'better-sqlite3';
import { GENESIS, auditKey, checkChain, keyedSwitch, sealAfter, type AuditCheck, type AuditEntry, type AuditHead, type AuditKey, type AuditRecord, type AuditRow } from './audit-chain.js';
import type { Async } from './store.js';

// The audit log: every card event (created, answered, skipped, expired, cancelled) and
// every refused attempt, appended with its time, actor and surface. Each entry carries the
// hash of the one before it (an HMAC under the audit key, see audit-chain.ts), and a
// one-row head holds the last sequence number and hash, so `verify` finds an edited row
// (its hash no longer matches), a removed row (a gap in the sequence, a broken link) and a
// removed tail (the head points past the end); a head pinned elsewhere finds a log cut
// short whose head was rewritten to match.
//
// A card's changes are recorded by the card store inside the change's own transaction
// (`appendWithin`). Entries about things that change nothing (a refused attempt) go through
// `enqueue`: those of one turn of the event loop are written together in one transaction
// right after it. Reads flush first.

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

export { AuditEntrySchema, AuditEventSchema, hashEntry, type AuditCheck, type AuditEntry, type AuditHead, type AuditRecord } from './audit-chain.js';

export interface AuditStoreOptions {
  /** The audit key (kept outside the database): with it every entry is an HMAC, see audit-chain.ts. */
  key?: Buffer;
  /** Told when the entries of a turn could not be written after it (they wait for the next write). */
  onError?: (err: Error) => void;
}

export class AuditStore {
  private readonly stmt;
  private readonly appendTx;
  private queued: AuditRecord[] = [];
  private flushing?: NodeJS.Immediate;
  private readonly key?: AuditKey;
  private readonly onError: (err: Error) => void;
  /** Set when opening the log recorded a switch to this relay's key: the sentence to tell the operator. */
  readonly keyedNotice?: string;

  constructor(
    private readonly db: Database.Database,
    options: AuditStoreOptions = {},
  ) {
    this.key = options.key ? auditKey(options.key) : undefined;
    this.onError = options.onError ?? ((err) => console.error(`askrelay: the audit log could not be written (${err.message}); its entries wait for the next write`));
    db.exec(SCHEMA);
    this.stmt = {
      head: db.prepare('SELECT seq, hash FROM audit_head WHERE one = 1'),
      insert: db.prepare('INSERT INTO audit (seq, data, prev_hash, hash) VALUES (?, ?, ?, ?)'),
      setHead: db.prepare('INSERT INTO audit_head (one, seq, hash) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash'),
      page: db.prepare('SELECT data FROM audit WHERE seq > ? ORDER BY seq LIMIT ?').pluck(),
      all: db.prepare('SELECT seq, data, prev_hash AS prevHash, hash FROM audit ORDER BY seq'),
      last: db.prepare('SELECT data FROM audit ORDER BY seq DESC LIMIT 1').pluck(),
      lastHead: db.prepare('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1'),
    };
    this.appendTx = db.transaction((records: AuditRecord[]): AuditEntry[] => {
      const entries = sealAfter(this.stmt.head.get() as AuditHead | undefined, records, this.key);
      for (const entry of entries) this.stmt.insert.run(entry.seq, JSON.stringify(entry), entry.prevHash, entry.hash);
      const head = entries.at(-1);
      if (head) this.stmt.setHead.run(head.seq, head.hash);
      return entries;
    });
    if (this.key) this.keyedNotice = this.recordSwitch(this.key);
  }

  /** Records the switch to `key` when the log's last entry is not keyed with it (see keyedSwitch). */
  private recordSwitch(key: AuditKey): string | undefined {
    const change = keyedSwitch(this.stmt.last.get() as string | undefined, key);
    return change?.notice(this.append(change.record));
  }

  /** Appends now (after whatever is queued) and returns the entry. */
  append(record: AuditRecord): AuditEntry {
    return this.write([record]).at(-1)!;
  }

  /**
   * Appends inside the caller's transaction: a card change and its entries commit together,
   * or neither does. What is queued stays queued (it is written after, in its own turn), so
   * a rolled-back change takes nothing else with it.
   */
  appendWithin(records: AuditRecord[]): void {
    if (!this.db.inTransaction) throw new Error('appendWithin needs the caller\'s transaction');
    if (records.length) this.appendTx(records);
  }

  /**
   * Appends right after this turn of the event loop, together with the rest of the turn's
   * entries. A write that fails then (the database locked by another program past the busy
   * timeout, a full disk) is told to onError, never thrown where nobody catches it; the
   * entries stay queued, in order, for the next write.
   */
  enqueue(record: AuditRecord): void {
    this.queued.push(record);
    this.flushing ??= setImmediate(() => {
      try {
        this.flush();
      } catch (err) {
        this.onError(err as Error);
      }
    });
  }

  /** Writes what is queued (reads and close do this first). */
  flush(): void {
    this.write([]);
  }

  private take(): AuditRecord[] {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    const records = this.queued;
    this.queued = [];
    return records;
  }

  /** Writes what is queued, then `records`; what was queued stays queued when the write fails. */
  private write(records: AuditRecord[]): AuditEntry[] {
    const queued = this.take();
    if (!queued.length && !records.length) return [];
    try {
      // IMMEDIATE: the read of the head and the appends are one step, even across processes.
      return this.appendTx.immediate([...queued, ...records]);
    } catch (err) {
      this.queued.unshift(...queued);
      throw err;
    }
  }

  /** Entries after `after` (a sequence number), oldest first. */
  list(after = 0, limit = 1000): AuditEntry[] {
    this.flush();
    return (this.stmt.page.all(after, limit) as string[]).map((data) => JSON.parse(data) as AuditEntry);
  }

  /** The last entry's seq and hash (0 and the genesis hash for an empty log): what to pin elsewhere. */
  head(): AuditHead {
    this.flush();
    return (this.stmt.lastHead.get() as AuditHead | undefined) ?? { seq: 0, hash: GENESIS };
  }

  /** Checks the chain, and with `pin` that the log still holds that entry with that hash. */
  verify(pin?: AuditHead): AuditCheck {
    this.flush();
    const rows = this.stmt.all.all() as AuditRow[];
    const head = this.stmt.head.get() as AuditHead | undefined;
    return checkChain(rows, head, this.key, pin);
  }
}

/**
 * The audit log as a networked database serves it: every call a promise but `enqueue`,
 * which stays fire-and-forget (its entries are written right after the turn, as here).
 * PostgreSQL (src/store/postgres/postgres-audit-store.ts) implements it.
 */
export type AsyncAuditStore = Omit<Async<AuditStore>, 'enqueue' | 'appendWithin'> & Pick<AuditStore, 'enqueue'>;

/** What the relay's surfaces need of the log: to append, after the turn, without waiting (both stores). */
export type AuditWriter = Pick<AuditStore, 'enqueue'>;

/** The SQLite log behind the asynchronous interface (the same semantics, resolved at once). */
export function asyncAudit(store: AuditStore): AsyncAuditStore {
  return {
    get keyedNotice() {
      return store.keyedNotice;
    },
    append: async (record) => store.append(record),
    enqueue: (record) => store.enqueue(record),
    flush: async () => store.flush(),
    list: async (after, limit) => store.list(after, limit),
    head: async () => store.head(),
    verify: async (pin) => store.verify(pin),
  };
}
