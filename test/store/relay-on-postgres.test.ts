import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { DB_FILE } from '../../src/start.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { idleSession } from '../support/session-api.js';

// One whole relay on a real PostgreSQL database instead of its SQLite file (a single node;
// several nodes come with the event bus and the leases): the card routes, the audit log, the
// page's login and an agent session work as they do on SQLite, and all of it outlives a
// restart of the relay on the same database.

let db: FreshDatabase;
let dataDir: string;
let fake: AnthropicServer;
let relay: TestRelay | undefined;

const env = () => ({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
const start = async () => (relay = await startTestRelay(env(), dataDir, '0', { databaseUrl: db.url }));
const json = async <T>(res: Response, status = 200): Promise<T> => {
  expect(res.status, await res.clone().text()).toBe(status);
  return (await res.json()) as T;
};

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
});
afterAll(() => fake.close());
beforeEach(async () => {
  db = await freshDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'askrelay-pg-relay-'));
});
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
  await db.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the relay on PostgreSQL', { timeout: 60_000 }, () => {
  it('asks, answers once, releases a long poll, keeps its audit chain and logs the page in', async () => {
    const r = await start();
    const card = await json<Card>(await r.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] } }), 201);
    const waiting = r.api(`/api/cards/${card.id}/wait?timeout=30`);
    const answered = await json<Card>(await r.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { db: { selected: ['PostgreSQL'] } } } }));
    expect(answered).toMatchObject({ status: 'answered', answer: { db: { selected: ['PostgreSQL'] } } });
    expect(answered.delivery).toMatchObject({ state: 'sent' });
    // The long poll took it: delivered to it.
    expect(await json<Card>(await waiting)).toEqual({ ...answered, delivery: { state: 'delivered', at: expect.any(String), to: 'long-poll' } });
    const lost = await r.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { db: { selected: ['SQLite'] } } } });
    expect(lost.status).toBe(409);
    expect(((await lost.json()) as { card: Card }).card.answer).toEqual(answered.answer);
    // Every card event and refusal went into the one keyed chain.
    const { entries } = await json<{ entries: { event: string }[] }>(await r.api('/api/audit'));
    expect(entries.map((e) => e.event)).toEqual(['card.created', 'card.answered']);
    expect(await json(await r.api('/api/audit/verify'))).toMatchObject({ ok: true, entries: 2 });
    // The page's login is kept in the database.
    const login = await fetch(new URL('/api/login', r.url), { method: 'POST', headers: { 'content-type': 'application/json', origin: new URL(r.url).origin }, body: JSON.stringify({ token: r.token }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    expect((await fetch(new URL(`/api/cards/${card.id}`, r.url), { headers: { cookie } })).status).toBe(200);
    // It really is the database: the card is a row there, and no SQLite file was made.
    const pool = testPool(db.url);
    try {
      const { rows } = await pool.query('SELECT status FROM cards WHERE id = $1', [card.id]);
      expect(rows).toEqual([{ status: 'answered' }]);
    } finally {
      await pool.end();
    }
    expect(existsSync(join(dataDir, DB_FILE))).toBe(false);
  });

  it('runs an agent session whose record, transcript and token live in the database', async () => {
    const r = await start();
    const session = await idleSession(r, { prompt: 'hello' });
    const full = await json<Session>(await r.api(`/api/sessions/${session.id}`));
    expect(full.transcript!.map((t) => [t.role, t.text])).toEqual([
      ['user', 'hello'],
      ['assistant', 'Done.'],
    ]);
    // Its agent token works: it sees its own session (and nothing else's).
    const token = r.sessions.agentToken(session.id);
    expect((await fetch(new URL('/api/cards', r.url), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it('a restart on the same database keeps every card, expires what ran out meanwhile, and the chain verifies', async () => {
    let r = await start();
    const keep = await json<Card>(await r.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Still there?' }] } }), 201);
    const brief = await json<Card>(await r.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Gone soon?' }] } }), 201);
    const done = await json<Card>(await r.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Done?' }] } }), 201);
    await json(await r.api(`/api/cards/${done.id}/skip`, { method: 'POST' }));
    await r.stop();
    relay = undefined;
    // While the relay is down, the brief card's deadline passes (set in the database, no waiting).
    const pool = testPool(db.url);
    try {
      await pool.query('UPDATE cards SET expires_at = created_at + 1 WHERE id = $1', [brief.id]);
    } finally {
      await pool.end();
    }
    r = await start();
    expect(r.recovered).toEqual({ expired: 1, pending: 1 });
    expect((await json<Card>(await r.api(`/api/cards/${keep.id}`))).status).toBe('pending');
    expect((await json<Card>(await r.api(`/api/cards/${brief.id}`))).status).toBe('expired');
    expect((await json<Card>(await r.api(`/api/cards/${done.id}`))).status).toBe('skipped');
    expect(await json(await r.api('/api/audit/verify'))).toMatchObject({ ok: true });
  });
});
