import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// GET /api/cards answers at most 500 cards unless asked for more (up to 10,000), and says
// when more match than it sent (hasMore), so a long history never goes out in one response.

let fake: AnthropicServer;
let relay: TestRelay;
const TOTAL = 503;

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '90m' });
  for (let batch = 0; batch < TOTAL; batch += 50) {
    const sizes = Array.from({ length: Math.min(50, TOTAL - batch) }, (_, i) => batch + i);
    await Promise.all(
      sizes.map(async (n) => {
        const res = await relay.api('/api/cards', { method: 'POST', json: { title: `Card ${n}`, questions: [{ text: 'Ship it?' }] } });
        expect(res.status).toBe(201);
      }),
    );
  }
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

const list = async (query: string) => {
  const res = await relay.api(`/api/cards${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { cards: Card[]; hasMore: boolean };
};

it('sends 500 cards by default and says there are more', async () => {
  const page = await list('');
  expect(page.cards).toHaveLength(500);
  expect(page.hasMore).toBe(true);
  const pending = await list('?status=pending');
  expect(pending.cards).toHaveLength(500);
  expect(pending.hasMore).toBe(true);
});

it('sends up to 10,000 when asked, and hasMore is false once all are there', async () => {
  const all = await list('?limit=10000');
  expect(all.cards).toHaveLength(TOTAL);
  expect(all.hasMore).toBe(false);
  const exact = await list(`?limit=${TOTAL}`);
  expect(exact.cards).toHaveLength(TOTAL);
  expect(exact.hasMore).toBe(false);
  const short = await list(`?limit=${TOTAL - 1}&order=newest`);
  expect(short.cards).toHaveLength(TOTAL - 1);
  expect(short.hasMore).toBe(true);
  expect(short.cards[0].createdAt >= short.cards.at(-1)!.createdAt).toBe(true);
  const over = await relay.api('/api/cards?limit=10001');
  expect(over.status).toBe(400);
  expect((await over.json()).error.code).toBe('invalid_request');
});

it('an agent\'s page holds the cards it may see, however many others come first', async () => {
  const started = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt: 'hi' } });
  expect(started.status).toBe(201);
  const { id } = (await started.json()) as Session;
  await waitUntil(async () => ((await (await relay.api(`/api/sessions/${id}`)).json()) as Session).status === 'idle' || undefined, `session ${id} idle`);
  const own: Card[] = [];
  for (let i = 0; i < 2; i++) {
    own.push(await relay.relay.create({ tool: 'AskUserQuestion', origin: 'native', provider: 'claude', engine: 'messages', sessionId: id, questions: [{ text: 'Which?', options: ['A', 'B'] }] }));
  }
  const res = await fetch(new URL('/api/cards?status=pending', relay.url), { headers: { authorization: `Bearer ${relay.sessions.agentToken(id)}` } });
  expect(res.status).toBe(200);
  const page = (await res.json()) as { cards: Card[]; hasMore: boolean };
  expect(page.cards.map((c) => c.id)).toEqual(own.map((c) => c.id));
  expect(page.hasMore).toBe(false);
});
