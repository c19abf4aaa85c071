import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { freshDatabase, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Two nodes on one PostgreSQL database, each scraped on its own as Prometheus would: a card
// created on A and answered on B is counted once in all (created on A, closed on B), though
// both nodes hear both changes; what every node sees alike (pending cards) is the same on both.

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let db: FreshDatabase;
let a: TestRelay;
let b: TestRelay;

beforeAll(async () => {
  db = await freshDatabase();
  const env = { ASKRELAY_METRICS_TOKEN: METRICS_TOKEN, ASKRELAY_LEASE: '1500ms' };
  a = await startTestRelay({ ...env, ASKRELAY_NODE_ID: 'node-a' }, undefined, '0', { databaseUrl: db.url });
  b = await startTestRelay({ ...env, ASKRELAY_NODE_ID: 'node-b' }, undefined, '0', { databaseUrl: db.url });
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
});

const scrape = async (node: TestRelay) => (await fetch(new URL('/metrics', node.url), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
const value = (text: string, line: string) => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
};

describe('metrics on two nodes', () => {
  it('counts each change on the node that made it, and both see the same pending cards', async () => {
    const card = (await (await a.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'q', text: 'Which?', options: ['One', 'Two'] }] } })).json()) as Card;
    await waitUntil(async () => value(await scrape(b), 'askrelay_cards_pending') === 1, 'node B to keep the card\'s deadline');
    expect(value(await scrape(a), 'askrelay_cards_pending')).toBe(1);

    expect((await b.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q: { selected: ['Two'] } } } })).status).toBe(200);
    await waitUntil(async () => value(await scrape(a), 'askrelay_cards_pending') === 0, 'node A to hear the answer');

    const [onA, onB] = [await scrape(a), await scrape(b)];
    const created = 'askrelay_cards_created_total{provider="api"}';
    const closed = 'askrelay_cards_closed_total{provider="api",outcome="answered"}';
    expect([value(onA, created), value(onB, created)]).toEqual([1, 0]);
    expect([value(onA, closed), value(onB, closed)]).toEqual([0, 1]);
    expect(value(onB, 'askrelay_card_answer_seconds_count{provider="api"}')).toBe(1);
    expect(value(onA, 'askrelay_card_answer_seconds_count{provider="api"}')).toBe(0);
    expect(value(onB, 'askrelay_cards_pending')).toBe(0);
  });
});
