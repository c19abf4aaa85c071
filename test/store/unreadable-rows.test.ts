import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { serveOnce } from '../support/cli.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// A stored row whose JSON is broken (a hand edit, a copy gone wrong) stops a relay at start
// with the table and the id it cannot read, on both stores, rather than with a bare "Expected
// property name or '}' in JSON at position 1" that names nothing.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-unreadable-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
const folder = () => join(scratch, `data-${++n}`);

const MINUTE = 60_000;
const ask = async (relay: TestRelay, text: string, waitSeconds = 3600) =>
  (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text }], waitSeconds } })).json()) as Card;

/** The relay in `dir` (on `databaseUrl` if given) with two pending cards; their ids. */
async function relayWithRows(dir: string, databaseUrl?: string): Promise<{ card: string; overdue: string }> {
  const relay = await startTestRelay({}, dir, '0', databaseUrl ? { databaseUrl } : {});
  try {
    return { card: (await ask(relay, 'Pending?')).id, overdue: (await ask(relay, 'Overdue?', 60)).id };
  } finally {
    await relay.stop();
  }
}

const startError = (dir: string, databaseUrl?: string) =>
  startTestRelay({}, dir, '0', databaseUrl ? { databaseUrl } : {}).then(
    async (relay) => {
      await relay.stop();
      return 'started';
    },
    (err: Error) => err.message,
  );

describe('a row that is not JSON, at start', { timeout: 30_000 }, () => {
  it('SQLite: a pending card is named by table and id; askrelay serve says so in one line and exits 1', async () => {
    const dir = folder();
    const { card } = await relayWithRows(dir);
    const db = new Database(join(dir, 'askrelay.sqlite'));
    db.prepare(`UPDATE cards SET data = '{x' WHERE id = ?`).run(card);
    db.close();
    expect(await startError(dir)).toMatch(new RegExp(`^the cards row ${card} is not valid JSON \\(Expected property name or '\\}' in JSON at position 1.*\\); repair or delete that row, then start again$`));
    const run = await serveOnce(dir, { cwd: scratch, env: { ASKRELAY_TOKEN: 'test-token-0123456789abcdef' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the cards row ${card} is not valid JSON`);
  });

  it('SQLite: an overdue pending card (expired at start) is named too, not "malformed JSON"', async () => {
    const dir = folder();
    const { overdue } = await relayWithRows(dir);
    const db = new Database(join(dir, 'askrelay.sqlite'));
    db.prepare(`UPDATE cards SET data = '{x', expires_at = ? WHERE id = ?`).run(Date.now() - MINUTE, overdue);
    db.close();
    expect(await startError(dir)).toMatch(new RegExp(`^the cards row ${overdue} is not valid JSON`));
  });

  it('SQLite: a session to resume is named by table and id', async () => {
    const dir = folder();
    await relayWithRows(dir);
    const db = new Database(join(dir, 'askrelay.sqlite'));
    db.prepare(`INSERT INTO sessions (id, status, created_at, data) VALUES ('s_broken', 'idle', 0, '{"id":')`).run();
    db.close();
    expect(await startError(dir)).toMatch(/^the sessions row s_broken is not valid JSON \(/);
  });

  describe('PostgreSQL', () => {
    let db: FreshDatabase;
    let pool: pg.Pool;
    beforeAll(async () => {
      db = await freshDatabase();
      pool = testPool(db.url);
    });
    afterAll(async () => {
      await pool?.end();
      await db?.drop();
    });
    afterEach(async () => {
      await pool.query(`DELETE FROM cards`);
    });

    it('a pending card, and an overdue one, are named by table and id', async () => {
      const { card, overdue } = await relayWithRows(folder(), db.url);
      await pool.query(`UPDATE cards SET data = '{x' WHERE id = $1`, [card]);
      expect(await startError(folder(), db.url)).toMatch(new RegExp(`^the cards row ${card} is not valid JSON \\(Expected property name or '\\}' in JSON at position 1.*\\); repair or delete that row, then start again$`));
      await pool.query(`DELETE FROM cards WHERE id = $1`, [card]);
      await pool.query(`UPDATE cards SET data = '[', expires_at = $2 WHERE id = $1`, [overdue, Date.now() - MINUTE]);
      expect(await startError(folder(), db.url)).toMatch(new RegExp(`^the cards row ${overdue} is not valid JSON`));
    });
  });
});
