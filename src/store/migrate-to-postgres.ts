import type Database from 'better-sqlite3';
import type pg from 'pg';
import { auditKey as keyOf, checkChain, GENESIS, type AuditCheck, type AuditHead, type AuditRow } from './audit-chain.js';
import { migrate } from './postgres/migrations.js';
import { jsonProblem } from './stored-json.js';

// `askrelay migrate`: an embedded relay's SQLite file copied into an empty PostgreSQL
// database, row by row and verbatim (the card and session JSON, the audit rows with their
// hashes, only the hashes of agent tokens), in ONE PostgreSQL transaction, so a failure
// leaves the database as empty as it was. The file is only read, in one read transaction
// (one snapshot). The mapping below is checked against both schemas as they are on each run:
// a column or table the copy does not know stops it before anything is written, rather
// than being left behind.

/** Where a PostgreSQL column's value comes from: a SQLite column, or its rowid. */
interface Source {
  from: string;
  convert?: (value: unknown) => unknown;
}

interface TableCopy {
  /** The same name in both databases. */
  table: string;
  /** PostgreSQL column → its source in SQLite. */
  columns: Record<string, string | Source>;
  /** A BIGSERIAL column whose sequence must hand out values past the copied ones. */
  serial?: string;
  /**
   * Columns holding JSON, each row's checked before it is copied (a row that is not JSON would
   * stop every node at start), and the columns that name a row in the refusal.
   */
  json?: { columns: string[]; key: string[] };
}

// PostgreSQL's `seq` columns stand for SQLite's rowid (insertion order among equal
// created_at), except the outbox's, which SQLite counts in a column of its own.
const ROWID = 'rowid';
const bool = (value: unknown) => (value === null ? null : Boolean(typeof value === 'bigint' ? value !== 0n : Number(value)));

export const TABLE_COPIES: readonly TableCopy[] = [
  { table: 'cards', columns: { id: 'id', session_id: 'session_id', status: 'status', created_at: 'created_at', expires_at: 'expires_at', answer_key: 'answer_key', data: 'data', seq: ROWID }, serial: 'seq', json: { columns: ['data'], key: ['id'] } },
  { table: 'sessions', columns: { id: 'id', status: 'status', created_at: 'created_at', data: 'data', state: 'state', seq: ROWID }, serial: 'seq', json: { columns: ['data', 'state'], key: ['id'] } },
  { table: 'transcript', columns: { session_id: 'session_id', seq: 'seq', data: 'data' }, json: { columns: ['data'], key: ['session_id', 'seq'] } },
  { table: 'agent_tokens', columns: { token_hash: 'token_hash', session_id: 'session_id' } },
  { table: 'watch_grants', columns: { watcher: 'watcher', target: 'target', granted_at: 'granted_at' } },
  { table: 'web_logins', columns: { key: 'key', created_at: 'created_at', who: 'who' } },
  { table: 'users', columns: { name: 'name', token_hash: 'token_hash', created_at: 'created_at' } },
  { table: 'user_links', columns: { link: 'link', name: 'name' } },
  { table: 'mcp_calls', columns: { card_id: 'card_id', dialect: 'dialect', args_hash: 'args_hash', client_key: 'client_key', created_at: 'created_at', delivered_at: 'delivered_at', seq: ROWID }, serial: 'seq' },
  { table: 'audit', columns: { seq: 'seq', data: 'data', prev_hash: 'prev_hash', hash: 'hash' }, json: { columns: ['data'], key: ['seq'] } },
  { table: 'audit_head', columns: { one: 'one', seq: 'seq', hash: 'hash' } },
  { table: 'push_subscriptions', columns: { endpoint: 'endpoint', p256dh: 'p256dh', auth: 'auth', created_at: 'created_at', who: 'who', seq: ROWID }, serial: 'seq' },
  { table: 'channel_outbox', columns: { channel: 'channel', card_id: 'card_id', action: 'action', due_at: 'due_at', attempts: 'attempts', last_error: 'last_error', seq: 'seq' }, serial: 'seq' },
  { table: 'channel_messages', columns: { channel: 'channel', message: 'message', card_id: 'card_id', chat: 'chat', role: 'role', closed: { from: 'closed', convert: bool }, seq: ROWID }, serial: 'seq' },
  { table: 'channel_state', columns: { channel: 'channel', key: 'key', value: 'value' } },
];

/** PostgreSQL's own tables, which no SQLite file has: what nodes share and coordinate with. */
const POSTGRES_ONLY = ['schema_migrations', 'relay_settings', 'leases', 'nodes', 'bus_payloads'];

/** Tables whose rows mean a relay already lives in the database. */
const HOLDS_A_RELAY = [...TABLE_COPIES.map((t) => t.table), 'relay_settings'];

/** A node heard from this recently is taken to be running. */
const LIVE_NODE_MS = 60_000;

/** Rows per INSERT, and the text per INSERT, whichever comes first. */
const BATCH_ROWS = 1000;
const BATCH_CHARS = 4 * 1024 * 1024;

export interface MigrationResult {
  /** Rows copied, by table. */
  counts: Record<string, number>;
  /** The copied log's last entry (0 and the genesis hash for an empty log). */
  auditHead: AuditHead;
  /** The copied chain checked in the database, with the audit key given. */
  auditCheck: AuditCheck;
}

/** The database already holds a relay (or a node is running on it): nothing was copied. */
export class DatabaseInUseError extends Error {
  constructor(
    message: string,
    /** Rows found, by table (empty when it is a live node that refused the copy). */
    readonly held: Record<string, number>,
  ) {
    super(message);
    this.name = 'DatabaseInUseError';
  }
}

export interface MigrateOptions {
  /** The audit key the chain is checked with on both sides (<data>/audit.key or ASKRELAY_AUDIT_KEY). */
  auditKey?: Buffer;
  /** relay_settings rows to write with the copy (the relay's token and keys, see shared-secrets.ts). */
  settings?: Record<string, string>;
}

/**
 * Copies every row of `sqlite` (opened read-only) into the database behind `pool`, which
 * must hold no relay; the schema is migrated first. All or nothing.
 */
export async function copySqliteToPostgres(sqlite: Database.Database, pool: pg.Pool, options: MigrateOptions = {}): Promise<MigrationResult> {
  await migrate(pool);
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // One read transaction: every table is read from the same snapshot of the file.
    sqlite.exec('BEGIN');
    await client.query('BEGIN');
    // Nodes that write meanwhile wait for the copy; a relay found already there stops it.
    await client.query(`LOCK TABLE ${HOLDS_A_RELAY.join(', ')} IN SHARE ROW EXCLUSIVE MODE`);
    await refuseInUse(client);
    const sqliteColumns = readSqliteSchema(sqlite);
    const postgresColumns = await readPostgresSchema(client);
    checkSchemas(sqliteColumns, postgresColumns);
    for (const [name, value] of Object.entries(options.settings ?? {})) {
      await client.query('INSERT INTO relay_settings (name, value, created_at) VALUES ($1, $2, $3)', [name, value, Date.now()]);
    }
    const counts: Record<string, number> = {};
    for (const copy of TABLE_COPIES) {
      counts[copy.table] = sqliteColumns.has(copy.table) ? await copyTable(sqlite, client, copy, postgresColumns.get(copy.table)!) : 0;
      if (copy.serial) {
        // is_called false: the next value handed out is MAX + 1 (1 on an empty table).
        await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT MAX(${copy.serial}) FROM ${copy.table}), 0) + 1, false)`, [copy.table, copy.serial]);
      }
    }
    const { head, check } = await compareChains(sqlite, sqliteColumns.has('audit'), client, options.auditKey);
    await client.query('COMMIT');
    return { counts, auditHead: head, auditCheck: check };
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    if (sqlite.inTransaction) sqlite.exec('COMMIT');
    client.release(broken);
  }
}

async function refuseInUse(client: pg.PoolClient): Promise<void> {
  const counts = HOLDS_A_RELAY.map((t) => `(SELECT count(*) FROM ${t}) AS ${t}`).join(', ');
  const { rows } = await client.query<Record<string, string>>(`SELECT ${counts}`);
  const held = Object.fromEntries(Object.entries(rows[0]).map(([t, n]) => [t, Number(n)]).filter(([, n]) => n));
  if (Object.keys(held).length) {
    const what = Object.entries(held).map(([t, n]) => `${n} ${n === 1 ? 'row' : 'rows'} in ${t}`).join(', ');
    throw new DatabaseInUseError(`the database already holds a relay (${what}); askrelay migrate copies only into an empty database`, held);
  }
  const live = await client.query<{ id: string }>(
    `SELECT id FROM nodes WHERE heartbeat_at > (extract(epoch from clock_timestamp()) * 1000)::bigint - $1 ORDER BY id`,
    [LIVE_NODE_MS],
  );
  if (live.rows.length) {
    const ids = live.rows.map((r) => r.id).join(', ');
    throw new DatabaseInUseError(`a relay node is running on the database (${ids}); stop every node before copying into it`, {});
  }
}

/** Every table of the SQLite file with its columns (SQLite's own tables left out). */
function readSqliteSchema(sqlite: Database.Database): Map<string, Set<string>> {
  const tables = sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`).pluck().all() as string[];
  const columns = sqlite.prepare('SELECT name FROM pragma_table_info(?)').pluck();
  return new Map(tables.map((t) => [t, new Set(columns.all(t) as string[])]));
}

/** Every table of the current schema with its columns and their types (udt names: text, int8, bool…). */
async function readPostgresSchema(client: pg.PoolClient): Promise<Map<string, Map<string, string>>> {
  const { rows } = await client.query<{ table_name: string; column_name: string; udt_name: string }>(
    `SELECT table_name, column_name, udt_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  );
  const tables = new Map<string, Map<string, string>>();
  for (const r of rows) {
    if (!tables.has(r.table_name)) tables.set(r.table_name, new Map());
    tables.get(r.table_name)!.set(r.column_name, r.udt_name);
  }
  return tables;
}

const sourceOf = (s: string | Source): Source => (typeof s === 'string' ? { from: s } : s);

/** Both schemas against the mapping, column by column: anything unmapped stops the copy. */
function checkSchemas(sqlite: Map<string, Set<string>>, postgres: Map<string, Map<string, string>>): void {
  if (!sqlite.has('cards')) throw new Error('the SQLite file has no cards table: it is not an askrelay database');
  const problems: string[] = [];
  const known = new Map(TABLE_COPIES.map((c) => [c.table, c]));
  for (const [table, columns] of sqlite) {
    const copy = known.get(table);
    if (!copy) {
      problems.push(`the SQLite table ${table} is one this askrelay does not know`);
      continue;
    }
    const read = new Set(Object.values(copy.columns).map((s) => sourceOf(s).from));
    for (const column of columns) if (!read.has(column)) problems.push(`the SQLite column ${table}.${column} is one this askrelay does not know`);
    for (const from of read) if (from !== ROWID && !columns.has(from)) problems.push(`the SQLite table ${table} lacks the column ${from} (written by an older askrelay)`);
  }
  for (const [table, columns] of postgres) {
    const copy = known.get(table);
    if (!copy) {
      if (!POSTGRES_ONLY.includes(table)) problems.push(`the PostgreSQL table ${table} has no counterpart in the copy`);
      continue;
    }
    for (const column of columns.keys()) if (!(column in copy.columns)) problems.push(`the PostgreSQL column ${table}.${column} has no source in the copy`);
  }
  for (const copy of TABLE_COPIES) {
    for (const column of Object.keys(copy.columns)) if (!postgres.get(copy.table)?.has(column)) problems.push(`the PostgreSQL schema lacks ${copy.table}.${column}`);
  }
  if (problems.length) {
    throw new Error(
      `the two schemas do not match: ${problems.join('; ')}. Run this version of "askrelay serve" once on the data folder (it brings the file up to date), stop it, and migrate again; or migrate with the askrelay that wrote the file.`,
    );
  }
}

/** Copies one table in batches of one INSERT … SELECT FROM unnest(…) each; returns its rows. */
async function copyTable(sqlite: Database.Database, client: pg.PoolClient, copy: TableCopy, types: Map<string, string>): Promise<number> {
  const targets = Object.keys(copy.columns);
  const sources = targets.map((t) => sourceOf(copy.columns[t]));
  // Quoted, so a column named like a keyword (key) reads as a column.
  const select = sources.map((s) => (s.from === ROWID ? ROWID : `"${s.from}"`)).join(', ');
  // safeIntegers: every INTEGER comes over exactly, whatever its size.
  const rows = sqlite.prepare(`SELECT ${select} FROM ${copy.table}`).raw(true).safeIntegers(true);
  const insert = `INSERT INTO ${copy.table} (${targets.join(', ')}) SELECT * FROM unnest(${targets.map((t, i) => `$${i + 1}::${types.get(t)}[]`).join(', ')})`;
  let batch: unknown[][] = targets.map(() => []);
  let size = 0;
  let chars = 0;
  let total = 0;
  const jsonAt = (copy.json?.columns ?? []).map((c) => targets.indexOf(c));
  const keyAt = (copy.json?.key ?? []).map((c) => targets.indexOf(c));
  const flush = async () => {
    if (!size) return;
    await client.query(insert, batch);
    total += size;
    batch = targets.map(() => []);
    size = 0;
    chars = 0;
  };
  for (const row of rows.iterate() as Iterable<unknown[]>) {
    for (const at of jsonAt) {
      const problem = jsonProblem(row[at]);
      if (problem) {
        const id = keyAt.map((k) => String(row[k])).join('/');
        throw new Error(`the SQLite table ${copy.table} holds a row that is not valid JSON: ${copy.table} ${id}, column ${targets[at]} (${problem}). Repair or delete that row in the file, then migrate again`);
      }
    }
    row.forEach((value, i) => {
      const converted = sources[i].convert ? sources[i].convert!(value) : value;
      batch[i].push(typeof converted === 'bigint' ? converted.toString() : converted);
      if (typeof value === 'string') chars += value.length;
    });
    if (++size >= BATCH_ROWS || chars >= BATCH_CHARS) await flush();
  }
  await flush();
  return total;
}

/**
 * The chain checked on both sides with the same key: the copy must find exactly what the
 * file finds (an intact chain, or the same problems if the file's log was already broken),
 * else the copy is rolled back.
 */
async function compareChains(sqlite: Database.Database, hasAudit: boolean, client: pg.PoolClient, key?: Buffer): Promise<{ head: AuditHead; check: AuditCheck }> {
  const audit = key ? keyOf(key) : undefined;
  const sourceRows = hasAudit ? (sqlite.prepare('SELECT seq, data, prev_hash AS prevHash, hash FROM audit ORDER BY seq').all() as AuditRow[]) : [];
  const sourceHead = hasAudit ? (sqlite.prepare('SELECT seq, hash FROM audit_head WHERE one = 1').get() as AuditHead | undefined) : undefined;
  const source = checkChain(sourceRows, sourceHead, audit);
  const copied = await client.query<{ seq: string; data: string; prev_hash: string; hash: string }>('SELECT seq, data, prev_hash, hash FROM audit ORDER BY seq');
  const copiedRows = copied.rows.map((r): AuditRow => ({ seq: Number(r.seq), data: r.data, prevHash: r.prev_hash, hash: r.hash }));
  const found = (await client.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_head WHERE one = 1')).rows[0];
  const check = checkChain(copiedRows, found ? { seq: Number(found.seq), hash: found.hash } : undefined, audit);
  const same = JSON.stringify(sourceRows) === JSON.stringify(copiedRows) && JSON.stringify(source) === JSON.stringify(check);
  if (!same) throw new Error(`the copied audit log differs from the file's (${check.problems.join('; ') || `${check.entries} entries against ${source.entries}`})`);
  const last = copiedRows.at(-1);
  return { head: last ? { seq: last.seq, hash: last.hash } : { seq: 0, hash: GENESIS }, check };
}
