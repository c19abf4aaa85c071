import type pg from 'pg';
import { withClient } from './transaction.js';
import { GENESIS, auditKey, checkChain, keyedSwitch, sealAfter, type AuditCheck, type AuditEntry, type AuditHead, type AuditKey, type AuditRecord, type AuditRow } from '../audit-chain.js';
import type { AsyncAuditStore } from '../audit-store.js';

// The audit log in PostgreSQL, with the SQLite log's semantics (src/store/audit-store.ts)
// and its chain (audit-chain.ts: entries are sealed and checked by the same functions).
//
// Several nodes append to one log. Each write is one transaction that first takes an
// advisory lock, then reads the head, seals its entries after it and moves the head: the
// lock makes those one step across every node, so the log stays ONE chain (no two entries
// with one seq, no fork). A row lock on the head would not do on an empty log, which has no
// head row yet. Within a node, writes run one after the other in the order they were asked
// for, so a node's entries keep their order.
//
// A card's changes append their entries inside the change's own transaction (beginLocked,
// then insert, from the card store). As in SQLite, `enqueue` collects the entries of one
// turn of the event loop and writes them together right after it, in one transaction;
// reads (and `flush`) write what is queued first and wait for this node's writes in flight.
// Unlike SQLite, a database can be away for a while: a background write that fails puts its
// entries back in front of the queue, so the next write (an enqueue, an append, a read, a
// flush) retries them in order and nothing is lost; an append that fails rejects, and its
// caller decides.

/** An arbitrary constant: the advisory lock every node takes to append (1 is the migrations'). */
const AUDIT_LOCK = 7_070_003;

export interface PostgresAuditOptions {
  /** The audit key (kept outside the database): with it every entry is an HMAC, see audit-chain.ts. */
  key?: Buffer;
  /** Told when a background write fails (its entries wait for the next write). Default: stderr. */
  onError?: (err: Error) => void;
}

interface Queued {
  record: AuditRecord;
  /** An append's caller, waiting for its entry; enqueued records have none. */
  waiter?: { resolve(entry: AuditEntry): void; reject(err: unknown): void };
}

type HeadRow = { seq: string; hash: string };

const headOf = (row: HeadRow | undefined): AuditHead | undefined => (row ? { seq: Number(row.seq), hash: row.hash } : undefined);

export class PostgresAuditStore implements AsyncAuditStore {
  private queued: Queued[] = [];
  private flushing?: NodeJS.Immediate;
  /** This node's writes, one after the other: the last one asked for (never rejected). */
  private tail: Promise<unknown> = Promise.resolve();
  private readonly key?: AuditKey;
  private readonly onError: (err: Error) => void;
  private notice?: string;

  private constructor(
    private readonly pool: pg.Pool,
    options: PostgresAuditOptions,
  ) {
    this.key = options.key ? auditKey(options.key) : undefined;
    this.onError = options.onError ?? ((err) => console.error(`askrelay: the audit log could not be written (${err.message}); its entries wait for the next write`));
  }

  /**
   * The log in the (migrated) database behind `pool`, which stays the caller's. With a key,
   * opening records the switch to it when the last entry is not keyed with it, as SQLite's
   * constructor does; two nodes opening at once record it once.
   */
  static async create(pool: pg.Pool, options: PostgresAuditOptions = {}): Promise<PostgresAuditStore> {
    const store = new PostgresAuditStore(pool, options);
    if (store.key) store.notice = await store.recordSwitch(store.key);
    return store;
  }

  /** Set when opening the log recorded a switch to this relay's key: the sentence to tell the operator. */
  get keyedNotice(): string | undefined {
    return this.notice;
  }

  private recordSwitch(key: AuditKey): Promise<string | undefined> {
    // The last entry is read under the append lock: the decision and the entry are one step.
    return this.serial(() =>
      this.locked(async (client, head) => {
        const { rows } = await client.query<{ data: string }>('SELECT data FROM audit ORDER BY seq DESC LIMIT 1');
        const change = keyedSwitch(rows[0]?.data, key);
        if (!change) return undefined;
        const [entry] = await this.insert(client, head, [change.record]);
        return change.notice(entry);
      }),
    );
  }

  /** Appends now (after whatever is queued) and returns the entry. */
  append(record: AuditRecord): Promise<AuditEntry> {
    const written = new Promise<AuditEntry>((resolve, reject) => this.queued.push({ record, waiter: { resolve, reject } }));
    // The entry's own promise carries a failure to the caller.
    this.drain().catch(() => {});
    return written;
  }

  /** Appends right after this turn of the event loop, together with the rest of the turn's entries. */
  enqueue(record: AuditRecord): void {
    this.queued.push({ record });
    this.flushing ??= setImmediate(() => {
      this.flushing = undefined;
      this.drain().catch((err: Error) => this.onError(err));
    });
  }

  /** Writes what is queued and waits for every write of this node asked for so far. */
  async flush(): Promise<void> {
    await this.drain();
  }

  /** Entries after `after` (a sequence number), oldest first. */
  async list(after = 0, limit = 1000): Promise<AuditEntry[]> {
    await this.flush();
    const { rows } = await this.pool.query<{ data: string }>('SELECT data FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2', [after, limit]);
    return rows.map((r) => JSON.parse(r.data) as AuditEntry);
  }

  /** The last entry's seq and hash (0 and the genesis hash for an empty log): what to pin elsewhere. */
  async head(): Promise<AuditHead> {
    await this.flush();
    const { rows } = await this.pool.query<HeadRow>('SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1');
    return headOf(rows[0]) ?? { seq: 0, hash: GENESIS };
  }

  /** Checks the chain, and with `pin` that the log still holds that entry with that hash. */
  async verify(pin?: AuditHead): Promise<AuditCheck> {
    await this.flush();
    // One snapshot for the rows and the head: another node appending in between would
    // otherwise look like a removed tail.
    const [rows, head] = await this.withClient(async (client) => {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const all = await client.query<{ seq: string; data: string; prev_hash: string; hash: string }>('SELECT seq, data, prev_hash, hash FROM audit ORDER BY seq');
      const found = await client.query<HeadRow>('SELECT seq, hash FROM audit_head WHERE one = 1');
      await client.query('COMMIT');
      return [all.rows.map((r): AuditRow => ({ seq: Number(r.seq), data: r.data, prevHash: r.prev_hash, hash: r.hash })), headOf(found.rows[0])] as const;
    });
    return checkChain(rows, head, this.key, pin);
  }

  /** Queues a write of what is queued when its turn comes (so it takes what was queued before it). */
  private drain(): Promise<void> {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    return this.serial(() => this.writeQueued());
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work);
    this.tail = run.catch(() => {});
    return run;
  }

  private async writeQueued(): Promise<void> {
    const batch = this.queued;
    this.queued = [];
    if (!batch.length) return;
    let entries: AuditEntry[];
    try {
      entries = await this.locked((client, head) => this.insert(client, head, batch.map((q) => q.record)));
    } catch (err) {
      // Nothing was written: enqueued entries wait in front of the queue for the next write.
      this.queued.unshift(...batch.filter((q) => !q.waiter));
      for (const q of batch) q.waiter?.reject(err);
      throw err;
    }
    batch.forEach((q, i) => q.waiter?.resolve(entries[i]));
  }

  /**
   * Begins a transaction on `client` holding the append lock, and reads the head as it is
   * under the lock: a card store's change then appends its entries with `insert` before it
   * commits (src/store/postgres/postgres-card-store.ts). One round trip. READ COMMITTED: the
   * head is read after the lock is held, so it is the one the last writer committed.
   */
  async beginLocked(client: pg.PoolClient): Promise<AuditHead | undefined> {
    const results = (await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${AUDIT_LOCK}); SELECT seq, hash FROM audit_head WHERE one = 1`)) as unknown as pg.QueryResult<HeadRow>[];
    return headOf(results[2].rows[0]);
  }

  /** Runs `work` in a transaction holding the append lock, given the head as it is under the lock. */
  private locked<T>(work: (client: pg.PoolClient, head: AuditHead | undefined) => Promise<T>): Promise<T> {
    return this.withClient(async (client) => {
      const result = await work(client, await this.beginLocked(client));
      await client.query('COMMIT');
      return result;
    });
  }

  /**
   * Seals `records` after `head` and stores them with the new head, in one statement (inside
   * a transaction begun with beginLocked); the same statement sends `notices` on `channel`
   * (a card change's events, which the other nodes then hear at its commit).
   */
  async insert(client: pg.PoolClient, head: AuditHead | undefined, records: AuditRecord[], notify?: { channel: string; notices: string[] }): Promise<AuditEntry[]> {
    const entries = sealAfter(head, records, this.key);
    const last = entries.at(-1);
    const notices = notify?.notices ?? [];
    if (!last && !notices.length) return entries;
    // The channel and the payloads are parameters `at` and `at + 1`.
    const send = (at: number) => `SELECT pg_notify($${at}, payload) FROM unnest($${at + 1}::text[]) AS payload`;
    await client.query(
      last
        ? `WITH written AS (
             INSERT INTO audit (seq, data, prev_hash, hash)
             SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
           ), moved AS (
             INSERT INTO audit_head (one, seq, hash) VALUES (1, $5, $6)
             ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash
           ) ${send(7)}`
        : send(1),
      last
        ? [entries.map((e) => e.seq), entries.map((e) => JSON.stringify(e)), entries.map((e) => e.prevHash), entries.map((e) => e.hash), last.seq, last.hash, notify?.channel ?? '', notices]
        : [notify!.channel, notices],
    );
    return entries;
  }

  private withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return withClient(this.pool, work);
  }
}
