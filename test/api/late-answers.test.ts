import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { readSse } from '../support/sse.js';
import { waitUntil } from '../support/wait-until.js';

// Late answers and delivery over HTTP (docs/api.md): `"late": true` on /answer and /reply,
// the long poll's `late` and `client`, who may give one, and what the event stream and the
// audit log say. The relay's clock is a fake one: a card expires when a test moves it.

const MIN = 60_000;
const QUESTION = { questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], waitSeconds: 60 };
const pick = (label: string) => ({ q1: { selected: [label] } });

let fake: AnthropicServer;
let relay: TestRelay;
let clock: FakeClock;
let agent: Session;

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  ({ relay, clock } = await startRelayWithClock({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy' }));
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'hello' } });
  agent = (await res.json()) as Session;
  await waitUntil(async () => ((await (await relay.api(`/api/sessions/${agent.id}`)).json()) as Session).status === 'idle', 'the agent idle');
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

const post = async (path: string, json?: unknown) => {
  const res = await relay.api(path, { method: 'POST', ...(json !== undefined ? { json } : {}) });
  return { status: res.status, body: (await res.json()) as Card & { error?: { code: string; message: string }; card?: Card } };
};

async function expiredCard(): Promise<Card> {
  const created = (await post('/api/cards', QUESTION)).body;
  clock.advance(MIN);
  const card = (await (await relay.api(`/api/cards/${created.id}`)).json()) as Card;
  expect(card.status).toBe('expired');
  return card;
}

describe('"late": true', () => {
  it('stores the human\'s late answer on an expired card, which stays expired; 410 without it, as before', async () => {
    const card = await expiredCard();
    const refused = await post(`/api/cards/${card.id}/answer`, { answers: pick('SQLite') });
    expect(refused.status).toBe(410);
    expect(refused.body.error!.code).toBe('card_closed');
    const { status, body } = await post(`/api/cards/${card.id}/answer`, { answers: pick('SQLite'), late: true });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'expired',
      lateAnswer: { answer: pick('SQLite'), answeredBy: { kind: 'human', id: 'operator', surface: 'api' }, lateAt: new Date(clock.now()).toISOString() },
      delivery: { state: 'sent', at: new Date(clock.now()).toISOString() },
    });
    expect(body.answer).toBeUndefined();
  });

  it('one per card: the same again is 200, a different one 409 with the card holding the first', async () => {
    const card = await expiredCard();
    const first = await post(`/api/cards/${card.id}/answer`, { answers: pick('SQLite'), late: true });
    expect((await post(`/api/cards/${card.id}/answer`, { answers: pick('SQLite'), late: true })).body).toEqual(first.body);
    const second = await post(`/api/cards/${card.id}/answer`, { answers: pick('PostgreSQL'), late: true });
    expect(second.status).toBe(409);
    expect(second.body.error!.code).toBe('already_answered');
    expect(second.body.card!.lateAnswer!.answer).toEqual(pick('SQLite'));
  });

  it('/reply takes typed words late too; a skipped card refuses (410); a bad answer is 422 and stores nothing', async () => {
    const card = await expiredCard();
    expect((await post(`/api/cards/${card.id}/reply`, { text: '2', late: true })).body.lateAnswer!.answer).toEqual(pick('SQLite'));
    const skipped = (await post(`/api/cards/${(await post('/api/cards', QUESTION)).body.id}/skip`)).body;
    expect((await post(`/api/cards/${skipped.id}/answer`, { answers: pick('SQLite'), late: true })).status).toBe(410);
    const other = await expiredCard();
    const bad = await post(`/api/cards/${other.id}/answer`, { answers: pick('MySQL'), late: true });
    expect(bad.status).toBe(422);
    expect(((await (await relay.api(`/api/cards/${other.id}`)).json()) as Card).lateAnswer).toBeUndefined();
  });

  it('an agent may not give one (403 human_only), even on its own session\'s card, and the refusal is audited', async () => {
    const created = (await post('/api/cards', { ...QUESTION, sessionId: agent.id })).body;
    const mine = await relay.api('/api/cards', { method: 'POST', json: QUESTION, headers: { authorization: `Bearer ${relay.sessions.agentToken(agent.id)}` } });
    const own = (await mine.json()) as Card;
    clock.advance(MIN);
    for (const card of [created, own]) {
      const res = await fetch(new URL(`/api/cards/${card.id}/answer`, relay.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${relay.sessions.agentToken(agent.id)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ answers: pick('SQLite'), late: true }),
      });
      expect(res.status === 403 || res.status === 404).toBe(true);
      if (card === own) expect(((await res.json()) as { error: { code: string } }).error.code).toBe('human_only');
    }
    expect(((await (await relay.api(`/api/cards/${own.id}`)).json()) as Card).lateAnswer).toBeUndefined();
    const audit = ((await (await relay.api('/api/audit?limit=10000')).json()) as { entries: AuditEntry[] }).entries;
    expect(audit.some((e) => e.cardId === own.id && e.event === 'card.refused' && e.detail?.code === 'human_only')).toBe(true);
  });

  it('reaches the event stream as card.updated and the audit log as card.late_answer', async () => {
    const card = await expiredCard();
    const controller = new AbortController();
    const stream = await relay.api('/api/events', { signal: controller.signal });
    const events = readSse(stream);
    // Its headers came: the stream listens (it subscribes before it answers).
    void post(`/api/cards/${card.id}/answer`, { answers: pick('PostgreSQL'), late: true });
    let seen: Card | undefined;
    for await (const event of events) {
      const data = JSON.parse(event.data) as Card;
      if (data.id === card.id) {
        expect(event.event).toBe('card.updated');
        seen = data;
        break;
      }
    }
    controller.abort();
    expect(seen!.lateAnswer!.answer).toEqual(pick('PostgreSQL'));
    // The node that stored it writes the entry a moment later (after the event-loop turn; on two nodes, maybe not the one read).
    const logged = await waitUntil(async () => {
      const audit = ((await (await relay.api('/api/audit?limit=10000')).json()) as { entries: AuditEntry[] }).entries;
      const mine = audit.filter((e) => e.cardId === card.id).map((e) => e.event);
      return mine.length === 3 ? mine : undefined;
    }, 'the late answer in the audit log');
    expect(logged).toEqual(['card.created', 'card.expired', 'card.late_answer']);
  });
});

describe('the long poll and delivery', () => {
  it('hands an answer to the poller and calls it delivered to the long poll (or to askrelay ask)', async () => {
    for (const [query, to] of [['', 'long-poll'], ['&client=ask', 'ask']] as const) {
      const card = (await post('/api/cards', QUESTION)).body;
      const polling = relay.api(`/api/cards/${card.id}/wait?timeout=30${query}`);
      const answered = (await post(`/api/cards/${card.id}/answer`, { answers: pick('SQLite') })).body;
      expect(answered.delivery).toMatchObject({ state: 'sent' });
      const got = (await (await polling).json()) as Card;
      expect(got.delivery).toMatchObject({ state: 'delivered', to });
    }
  });

  it('late=1 waits past the expiry for a late answer; a plain poll ends at the expiry and takes nothing', async () => {
    const card = (await post('/api/cards', QUESTION)).body;
    const plain = relay.api(`/api/cards/${card.id}/wait?timeout=600`);
    const late = relay.api(`/api/cards/${card.id}/wait?timeout=600&late=1&client=ask`);
    clock.advance(MIN);
    const ended = (await (await plain).json()) as Card;
    expect(ended.status).toBe('expired');
    expect(ended.delivery).toBeUndefined();
    await post(`/api/cards/${card.id}/answer`, { answers: pick('PostgreSQL'), late: true });
    const got = (await (await late).json()) as Card;
    expect(got).toMatchObject({ status: 'expired', lateAnswer: { answer: pick('PostgreSQL') }, delivery: { state: 'delivered', to: 'ask' } });
  });

  it('refuses a late or client it does not know (400)', async () => {
    const card = (await post('/api/cards', QUESTION)).body;
    for (const query of ['late=maybe', 'client=curl']) {
      const res = await relay.api(`/api/cards/${card.id}/wait?timeout=0&${query}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    }
  });
});
