import Database from 'better-sqlite3';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Card, CardInput } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { DB_FILE } from '../../src/start.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { browserSubscription, startFakePushService, type FakePushService } from '../fakes/push-service.js';
import { freePort, runCli } from '../support/cli.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { idleSession } from '../support/session-api.js';

// `askrelay migrate` as a child process. A real relay on SQLite makes a data folder worth
// moving (cards answered, skipped and pending, an agent session, a push subscription, the
// page's login, the audit log) and stops; the stores add what no route makes quickly (a watch
// grant, chat channel records, an MCP call's record). The folder is copied into a fresh
// PostgreSQL database, row for row; a relay started on the copy with the same folder keeps
// working (the chain verifies with `askrelay audit verify`, the old cookie and agent token
// still work, the pending card can be answered) until one audit row is tampered with.

const TOKEN = 'test-token-0123456789abcdef';
const scratch = mkdtempSync(join(tmpdir(), 'askrelay-cli-migrate-'));
const source = join(scratch, 'data');
let fake: AnthropicServer;
let pushService: FakePushService;
let cards: { answered: Card; skipped: Card; pending: Card };
let session: Session;
let agentToken: string;
let cookie: string;
let db: FreshDatabase;
let relay: TestRelay | undefined;

const env = () => ({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h', ASKRELAY_PUSH_ALLOW_PRIVATE: '1' });
const migrate = (from: string, to: string) => runCli(['migrate', '--from', from, '--to', to], {}, scratch);
const question = (text: string): CardInput => ({ questions: [{ id: 'q', text, options: ['Yes', 'No'] }] });

async function json<T>(res: Response, status = 200): Promise<T> {
  expect(res.status, await res.clone().text()).toBe(status);
  return (await res.json()) as T;
}

/** Rows of `sql` in the source file, and how many each table holds. */
function fromSource<T>(sql: string): T[] {
  const file = new Database(join(source, DB_FILE), { readonly: true });
  try {
    return file.prepare(sql).all() as T[];
  } finally {
    file.close();
  }
}
const sourceCount = (table: string) => fromSource<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)[0].n;

async function fromCopy<T extends object>(sql: string, params: unknown[] = []): Promise<T[]> {
  const pool = testPool(db.url);
  try {
    return (await pool.query<T>(sql, params)).rows;
  } finally {
    await pool.end();
  }
}
const copyCount = async (table: string) => Number((await fromCopy<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0].n);

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  pushService = await startFakePushService();
  mkdirSync(source);
  const r = await startTestRelay(env(), source);
  try {
    const create = async (text: string) => json<Card>(await r.api('/api/cards', { method: 'POST', json: question(text) }), 201);
    const answered = await create('Ship it?');
    const headers = { 'idempotency-key': 'answer-once' };
    await json(await r.api(`/api/cards/${answered.id}/answer`, { method: 'POST', headers, json: { answers: { q: { selected: ['Yes'] } } } }));
    const skipped = await create('Rename it?');
    await json(await r.api(`/api/cards/${skipped.id}/skip`, { method: 'POST' }));
    cards = { answered, skipped, pending: await create('Deploy on Friday?') };
    session = await idleSession(r, { prompt: 'hello' });
    agentToken = r.sessions.agentToken(session.id);
    await json(await r.api('/api/push/subscriptions', { method: 'POST', json: browserSubscription(`${pushService.base}/sub/1`).json }), 201);
    const login = await fetch(new URL('/api/login', r.url), { method: 'POST', headers: { 'content-type': 'application/json', origin: new URL(r.url).origin }, body: JSON.stringify({ token: TOKEN }) });
    expect(login.status).toBe(200);
    cookie = login.headers.get('set-cookie')!.split(';')[0];
  } finally {
    await r.stop();
  }
  const store = new SqliteStore(join(source, DB_FILE));
  store.sessions.grantWatch(session.id, 's_other', Date.now());
  store.calls.record({ cardId: cards.answered.id, dialect: 'cursor', argsHash: 'args-hash', clientKey: 'client-1' }, Date.now());
  // The answered card's message was posted and closed (closed is 1 in SQLite, true in PostgreSQL); the skipped one's close waits.
  store.channels.posted('slack', cards.answered.id, { chat: 'C1', message: '1700000000.000100' });
  store.channels.closed('slack', cards.answered.id);
  store.channels.enqueue('slack', cards.skipped.id, 'close', Date.now());
  store.channels.remember('slack', 'cursor', '1700000000.000100');
  store.close();
}, 60_000);
afterAll(async () => {
  await fake?.close();
  await pushService?.close();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(async () => {
  db = await freshDatabase();
});
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
  await db.drop();
});

// Two-node mode (ASKRELAY_TEST_NODES=2): migrate copies an embedded relay, so the source relay
// must run on its SQLite file, which that mode replaces with PostgreSQL.
describe.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('askrelay migrate', { timeout: 60_000 }, () => {
  it('copies the relay row for row, says what it copied, and a relay on the copy goes on from there', async () => {
    const run = await migrate(source, db.url);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const entries = sourceCount('audit');
    const head = fromSource<{ seq: number; hash: string }>('SELECT seq, hash FROM audit_head')[0];
    const lines = sourceCount('transcript');
    expect(entries).toBeGreaterThanOrEqual(5);
    expect(lines).toBeGreaterThanOrEqual(2);
    const masked = new URL(db.url).toString();
    expect(run.stdout).toContain(
      `Copied ${source} to ${masked}: 3 cards, 1 session (${lines} transcript lines, 1 agent token, 1 watch grant), ${entries} audit entries (chain head ${head.seq}:${head.hash.slice(0, 12)}…), 1 push subscription, 3 channel records, 1 page login, 1 MCP call record.`,
    );
    expect(run.stdout).toContain(`"askrelay audit verify --head ${head.seq}:${head.hash}"`);
    // The test relay had its token from ASKRELAY_TOKEN (no token file); the audit key is the folder's.
    expect(run.stdout).toContain(`The relay token and the push (VAPID) keys were copied into the database`);
    expect(run.stdout).toContain(`ASKRELAY_AUDIT_KEY set to the key in ${join(source, 'audit.key')}, or that file in its data folder (the key stays out of the database`);

    // Verbatim: the card JSON with its answer key and order, the audit rows with their hashes.
    const sourceCards = fromSource<{ id: string; data: string; answer_key: string | null }>('SELECT id, data, answer_key FROM cards ORDER BY rowid');
    expect(await fromCopy('SELECT id, data, answer_key FROM cards ORDER BY seq')).toEqual(sourceCards);
    expect(sourceCards.find((c) => c.id === cards.answered.id)!.answer_key).toBe('answer-once');
    const audit = await fromCopy<{ seq: string; data: string; prev_hash: string; hash: string }>('SELECT seq, data, prev_hash, hash FROM audit ORDER BY seq');
    expect(audit.map((a) => ({ ...a, seq: Number(a.seq) }))).toEqual(fromSource('SELECT seq, data, prev_hash, hash FROM audit ORDER BY seq'));
    expect(await fromCopy('SELECT data, state FROM sessions')).toEqual(fromSource('SELECT data, state FROM sessions'));
    expect(await fromCopy('SELECT token_hash FROM agent_tokens')).toEqual(fromSource('SELECT token_hash FROM agent_tokens'));
    expect(await fromCopy('SELECT channel, message, card_id, chat, role, closed FROM channel_messages')).toEqual([
      { channel: 'slack', message: '1700000000.000100', card_id: cards.answered.id, chat: 'C1', role: 'card', closed: true },
    ]);

    relay = await startTestRelay(env(), source, '0', { databaseUrl: db.url });
    const cli = (args: string[]) => runCli(args, { ASKRELAY_URL: relay!.url, ASKRELAY_TOKEN: TOKEN }, scratch);
    const verified = await cli(['audit', 'verify', '--head', `${head.seq}:${head.hash}`]);
    expect(verified.stdout).toBe(`ok: ${entries} entries, the chain is intact and still holds the pinned head (entry ${head.seq})\n`);
    expect(verified.code).toBe(0);
    // What was answered is there as it was; the page's cookie and the agent's token still work.
    expect(await json<Card>(await relay.api(`/api/cards/${cards.answered.id}`))).toEqual(JSON.parse(sourceCards.find((c) => c.id === cards.answered.id)!.data));
    expect((await fetch(new URL(`/api/cards/${cards.answered.id}`, relay.url), { headers: { cookie } })).status).toBe(200);
    expect((await fetch(new URL('/api/cards', relay.url), { headers: { authorization: `Bearer ${agentToken}` } })).status).toBe(200);
    expect((await json<Session>(await relay.api(`/api/sessions/${session.id}`))).transcript).toHaveLength(lines);
    // The pending card is still pending and can be answered once; a new card comes after every copied one.
    const answered = await json<Card>(await relay.api(`/api/cards/${cards.pending.id}/answer`, { method: 'POST', json: { answers: { q: { selected: ['No'] } } } }));
    expect(answered).toMatchObject({ status: 'answered', answer: { q: { selected: ['No'] } } });
    const newer = await json<Card>(await relay.api('/api/cards', { method: 'POST', json: question('After the move?') }), 201);
    const order = await fromCopy<{ id: string }>('SELECT id FROM cards ORDER BY seq');
    expect(order.map((c) => c.id)).toEqual([...sourceCards.map((c) => c.id), newer.id]);
    expect((await cli(['audit', 'verify'])).stdout).toBe(`ok: ${entries + 2} entries, the chain is intact\n`);

    // One audit row edited behind the relay's back: verify says which, and fails.
    await fromCopy(`UPDATE audit SET data = replace(data, '"at":"20', '"at":"19') WHERE seq = 2`);
    const tampered = await cli(['audit', 'verify']);
    expect(tampered.stdout).toContain('entry 2 was edited');
    expect(tampered.code).toBe(1);
  });

  it('refuses a database that already holds a relay, and copies nothing into it', async () => {
    expect((await migrate(source, db.url)).code).toBe(0);
    const before = { cards: await copyCount('cards'), audit: await copyCount('audit') };
    const again = await migrate(source, db.url);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `askrelay migrate: nothing was copied to ${new URL(db.url).toString()}: the database already holds a relay (3 rows in cards, 1 row in sessions, 2 rows in transcript, 1 row in agent_tokens, 1 row in watch_grants, 1 row in web_logins, 1 row in mcp_calls, ${before.audit} rows in audit, 1 row in audit_head, 1 row in push_subscriptions, 1 row in channel_outbox, 1 row in channel_messages, 1 row in channel_state, 2 rows in relay_settings); askrelay migrate copies only into an empty database\n`,
    );
    expect({ cards: await copyCount('cards'), audit: await copyCount('audit') }).toEqual(before);
  });

  it('a database with only a relay setting is refused too, and stays empty', async () => {
    // Made by a node that started on it: the schema and its token, no card yet.
    const pool = testPool(db.url);
    try {
      await (await import('../../src/store/postgres/migrations.js')).migrate(pool);
      await pool.query(`INSERT INTO relay_settings (name, value, created_at) VALUES ('token', 'from-a-node-0123456789abcdef', 1)`);
    } finally {
      await pool.end();
    }
    const run = await migrate(source, db.url);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the database already holds a relay (1 row in relay_settings)');
    expect(await copyCount('cards')).toBe(0);
    expect(await copyCount('audit')).toBe(0);
  });

  it('warns when a relay may still be writing the file, and copies what was committed', async () => {
    const busy = join(scratch, 'busy');
    cpSync(source, busy, { recursive: true });
    // A relay still running: its store open, a card committed into the -wal since.
    const running = new SqliteStore(join(busy, DB_FILE));
    try {
      running.insertCard({ ...cards.pending, id: 'c_written_while_running' });
      const run = await migrate(busy, db.url);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe(`askrelay migrate: ${join(busy, DB_FILE)}-wal is not empty: a relay may still be running on ${busy}. What it writes after the copy is not copied; stop it first.\n`);
      expect(run.stdout).toContain(': 4 cards,');
      expect(await fromCopy('SELECT id FROM cards WHERE id = $1', ['c_written_while_running'])).toHaveLength(1);
    } finally {
      running.close();
    }
  });

  it('says clearly what is wrong with its inputs, and never prints a password', async () => {
    const missing = await migrate(join(scratch, 'nowhere'), db.url);
    expect([missing.code, missing.stderr]).toEqual([1, `askrelay migrate: there is no data folder at ${join(scratch, 'nowhere')}.\n`]);

    const empty = join(scratch, 'empty');
    mkdirSync(empty, { recursive: true });
    const noFile = await migrate(empty, db.url);
    expect([noFile.code, noFile.stderr]).toEqual([1, `askrelay migrate: ${empty} holds no ${DB_FILE}: is it the relay's data folder (the one "askrelay serve --data" used)?\n`]);

    const mysql = await migrate(source, 'mysql://root:hunter2-secret@127.0.0.1/relay');
    expect(mysql.code).toBe(1);
    expect(mysql.stderr).toBe('askrelay migrate: --to takes a postgres:// URL (postgres://USER@HOST:PORT/DATABASE), not a mysql:// one (mysql://root:***@127.0.0.1/relay).\n');

    const port = await freePort();
    const away = await migrate(source, `postgres://postgres:hunter2-secret@127.0.0.1:${port}/relay`);
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(new RegExp(`^askrelay migrate: cannot reach the database postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${port}/relay: .*ECONNREFUSED`));

    const noTarget = await runCli(['migrate', '--from', source], {}, scratch);
    expect([noTarget.code, noTarget.stderr]).toEqual([1, 'askrelay migrate: --to (or ASKRELAY_DATABASE_URL) is required: the PostgreSQL database to copy into, postgres://USER@HOST:PORT/DATABASE. Run "askrelay migrate --help".\n']);
    for (const run of [mysql, away]) expect(run.stdout + run.stderr).not.toContain('hunter2');
    // The runs with a good URL stopped before touching the database: not even the schema was made.
    expect(await fromCopy(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)).toEqual([]);
  });
});
