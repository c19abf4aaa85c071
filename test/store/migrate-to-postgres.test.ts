import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copySqliteToPostgres, DatabaseInUseError, TABLE_COPIES } from '../../src/store/migrate-to-postgres.js';
import { PostgresAuditStore } from '../../src/store/postgres/postgres-audit-store.js';
import { PostgresCardStore } from '../../src/store/postgres/postgres-card-store.js';
import { PostgresChannelStore } from '../../src/store/postgres/postgres-channel-store.js';
import { PostgresPushSubscriptionStore } from '../../src/store/postgres/postgres-push-subscription-store.js';
import { PostgresSessionStore } from '../../src/store/postgres/postgres-session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Session } from '../../src/sessions/model.js';
import { cardOf } from '../support/card-fixture.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';

// The copy itself, on a real SQLite file written through SqliteStore and a fresh PostgreSQL
// database: what it refuses before writing (a schema it does not know, a database in use), that
// a row PostgreSQL rejects midway leaves the database empty, and that the copied order and the
// sequences behind it carry on where the file stopped.

const KEY = Buffer.from('audit-key-0123456789abcdefghij');
let dir: string;
let file: string;
let db: FreshDatabase;
let pool: pg.Pool;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-migrate-store-'));
  file = join(dir, 'askrelay.sqlite');
  db = await freshDatabase();
  pool = testPool(db.url);
});
afterEach(async () => {
  await pool.end();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A file with two cards (the later one made first in rowid order of equal times, each recorded in the keyed log), a session, outbox jobs and a subscription. */
function writeRelay(extra: (store: SqliteStore) => void = () => {}): void {
  const store = new SqliteStore(file, { auditKey: KEY });
  const at = '2026-11-30T12:00:00.000Z';
  store.insertCard(cardOf([{ text: 'First?' }], { id: 'c_first', createdAt: at }));
  store.insertCard(cardOf([{ text: 'Second?' }], { id: 'c_second', createdAt: at }));
  store.sessions.insert({ id: 's_one', provider: 'claude', engine: 'messages', status: 'idle', createdAt: at } as Session);
  store.channels.enqueue('slack', 'c_first', 'post', 1);
  store.channels.enqueue('slack', 'c_second', 'post', 1);
  store.push.add({ endpoint: 'https://push.example/1', keys: { p256dh: 'p', auth: 'a' } });
  extra(store);
  store.close();
}

const readOnly = () => new Database(file, { readonly: true, fileMustExist: true });

async function copy() {
  const sqlite = readOnly();
  try {
    return await copySqliteToPostgres(sqlite, pool, { auditKey: KEY });
  } finally {
    sqlite.close();
  }
}

async function rowsIn(table: string): Promise<number> {
  return Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
}

async function emptyEverywhere(): Promise<void> {
  for (const { table } of TABLE_COPIES) expect(await rowsIn(table), table).toBe(0);
}

describe('copySqliteToPostgres', { timeout: 30_000 }, () => {
  it('copies in order, and the sequences hand out values past the copied ones', async () => {
    writeRelay();
    const result = await copy();
    expect(result.counts).toMatchObject({ cards: 2, sessions: 1, channel_outbox: 2, push_subscriptions: 1, audit: 2, audit_head: 1 });
    expect(result.auditCheck).toEqual({ ok: true, entries: 2, problems: [] });
    const cards = new PostgresCardStore(pool, await PostgresAuditStore.create(pool, { key: KEY }));
    expect((await cards.listCards()).map((c) => c.id)).toEqual(['c_first', 'c_second']);
    // A card made on PostgreSQL now, at the same time, sorts after both (its seq is past theirs).
    await cards.insertCard(cardOf([{ text: 'Third?' }], { id: 'c_third', createdAt: '2026-11-30T12:00:00.000Z' }));
    expect((await cards.listCards()).map((c) => c.id)).toEqual(['c_first', 'c_second', 'c_third']);
    const channels = new PostgresChannelStore(pool);
    await channels.enqueue('slack', 'c_third', 'post', 1);
    expect((await channels.jobs('slack')).map((j) => j.cardId)).toEqual(['c_first', 'c_second', 'c_third']);
    const push = new PostgresPushSubscriptionStore(pool);
    await push.add({ endpoint: 'https://push.example/2', keys: { p256dh: 'p', auth: 'a' } });
    expect((await push.list()).map((s) => s.endpoint)).toEqual(['https://push.example/1', 'https://push.example/2']);
    expect(await new PostgresSessionStore(pool).get('s_one')).toMatchObject({ id: 's_one', status: 'idle' });
  });

  it('an empty relay copies as empty, with the schema made', async () => {
    new SqliteStore(file).close();
    const result = await copy();
    expect(Object.values(result.counts).every((n) => n === 0)).toBe(true);
    expect(result.auditHead.seq).toBe(0);
    await emptyEverywhere();
  });

  it('a row PostgreSQL refuses midway rolls the whole copy back', async () => {
    // A NUL character is valid in SQLite text and refused by PostgreSQL's; channel_state is copied after the cards.
    writeRelay((store) => store.channels.remember('slack', 'cursor', 'before\u0000after'));
    await expect(copy()).rejects.toThrow(/0x00/);
    await emptyEverywhere();
  });

  it.each([
    ['a card', `UPDATE cards SET data = '{x' WHERE id = 'c_second'`, /^the SQLite table cards holds a row that is not valid JSON: cards c_second, column data \(Expected property name or '\}' in JSON at position 1.*\)\. Repair or delete that row in the file, then migrate again$/],
    ['a session', `UPDATE sessions SET data = '{"id": "s_one",' WHERE id = 's_one'`, /^the SQLite table sessions holds a row that is not valid JSON: sessions s_one, column data \(/],
    ['a session state', `UPDATE sessions SET state = 'nope' WHERE id = 's_one'`, /^the SQLite table sessions holds a row that is not valid JSON: sessions s_one, column state \(/],
    ['a transcript line', `INSERT INTO transcript (session_id, seq, data) VALUES ('s_one', 1, '[')`, /^the SQLite table transcript holds a row that is not valid JSON: transcript s_one\/1, column data \(/],
  ])('%s whose JSON is broken is refused, named by table and id, and nothing is copied', async (_name, breakIt, message) => {
    writeRelay();
    const writable = new Database(file);
    writable.exec(breakIt);
    writable.close();
    await expect(copy()).rejects.toThrow(message);
    await emptyEverywhere();
  });

  it('a column or a table it does not know stops the copy before anything is written', async () => {
    writeRelay();
    const writable = new Database(file);
    writable.exec('ALTER TABLE cards ADD COLUMN priority INTEGER; CREATE TABLE reminders (id TEXT)');
    writable.close();
    await expect(copy()).rejects.toThrow(/the SQLite column cards\.priority is one this askrelay does not know; the SQLite table reminders is one this askrelay does not know/);
    await emptyEverywhere();
  });

  it('a file that is no askrelay database is refused', async () => {
    const other = new Database(file);
    other.exec('CREATE TABLE notes (id TEXT)');
    other.close();
    await expect(copy()).rejects.toThrow('the SQLite file has no cards table: it is not an askrelay database');
  });

  it('refuses a database that holds a relay, or that a node runs on, and copies nothing', async () => {
    writeRelay();
    await copy();
    await expect(copy()).rejects.toSatisfy((err) => err instanceof DatabaseInUseError && err.held.cards === 2 && err.held.audit === 2);
    expect(await rowsIn('cards')).toBe(2);

    await pool.query('TRUNCATE ' + TABLE_COPIES.map((t) => t.table).join(', '));
    await pool.query(`INSERT INTO relay_settings (name, value, created_at) VALUES ('token', 'x', 1)`);
    await expect(copy()).rejects.toThrow(/already holds a relay \(1 row in relay_settings\)/);
    await emptyEverywhere();

    await pool.query('TRUNCATE relay_settings');
    await pool.query(`INSERT INTO nodes (id, started_at, heartbeat_at) VALUES ('node-a', 1, (extract(epoch from clock_timestamp()) * 1000)::bigint)`);
    await expect(copy()).rejects.toThrow('a relay node is running on the database (node-a); stop every node before copying into it');
    await emptyEverywhere();
    // A node not heard from for long is gone: the copy goes ahead.
    await pool.query(`UPDATE nodes SET heartbeat_at = 1`);
    expect((await copy()).counts.cards).toBe(2);
  });
});
