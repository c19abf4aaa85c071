import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { askingModel, startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { browserSubscription, startFakePushService, type FakePushService } from '../fakes/push-service.js';
import { closedPort } from '../support/closed-port.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';

// GET /metrics scraped after a scripted session: a Claude agent (the relay's Messages loop
// against the scripted model server) asks one question, the human answers, the agent ends
// its turn; beside it a card skipped through the API, a push service that fails, a chat
// platform that cannot be reached, and a request with a wrong token. Each count is checked.

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const ASK = { questions: [{ question: 'Which database?', header: 'Database', multiSelect: false, options: [{ label: 'PostgreSQL', description: 'Shared' }, { label: 'SQLite', description: 'Embedded' }] }] };

let model: AnthropicServer;
let push: FakePushService;
let relay: TestRelay;

beforeAll(async () => {
  model = await startAnthropicServer({ model: askingModel([{ toolUse: { name: 'AskUserQuestion', input: ASK } }, 'Going with PostgreSQL.']) });
  push = await startFakePushService();
  relay = await startTestRelay({
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'dummy',
    ASKRELAY_WAIT: '1h',
    ASKRELAY_METRICS_TOKEN: METRICS_TOKEN,
    ASKRELAY_PUSH_RETRIES: '0',
    ASKRELAY_PUSH_ALLOW_PRIVATE: '1',
    ASKRELAY_TELEGRAM_TOKEN: '123456:metrics-test',
    ASKRELAY_TELEGRAM_CHAT: '-100',
    ASKRELAY_TELEGRAM_ANSWERERS: '*',
    ASKRELAY_TELEGRAM_API_ROOT: `http://127.0.0.1:${await closedPort()}`,
  });
});
afterAll(async () => {
  await relay?.stop();
  await Promise.all([model?.close(), push?.close()]);
});

const scrape = async (token = METRICS_TOKEN) => fetch(new URL('/metrics', relay.url), { headers: { authorization: `Bearer ${token}` } });

/** The value of one sample line, e.g. askrelay_cards_created_total{provider="claude"}. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = match[2]?.split(',') ?? [];
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(match[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  it('counts a scripted session\'s card, its answer and its delivery, and the rest of the run', async () => {
    const sub = browserSubscription(`${push.base}/failing`);
    expect((await relay.api('/api/push/subscriptions', { method: 'POST', json: sub.json })).status).toBe(201);
    push.script('/failing', [503, 503, 503, 503]);

    const api = sessionApi(() => relay);
    const started = (await (await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'Pick a database.' } })).json()) as { id: string };
    const card = await api.pendingCard(started.id);
    expect((await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { [card.questions[0].id]: { selected: ['PostgreSQL'] } } } })).status).toBe(200);
    await api.done(started.id);

    const direct = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } })).json()) as Card;
    expect((await relay.api(`/api/cards/${direct.id}/skip`, { method: 'POST' })).status).toBe(200);
    expect((await fetch(new URL('/api/cards', relay.url), { headers: { authorization: 'Bearer wrong-token-0123456789abcdef' } })).status).toBe(401);

    // The push service answered 503 at least once, and the chat platform was tried.
    await waitUntil(() => push.requests.length >= 1, 'a push attempt');
    const text = await waitUntil(async () => {
      const body = await (await scrape()).text();
      const delivered = sample(body, 'askrelay_answer_delivery_seconds_count', { to: 'session' });
      return delivered === 1 && (sample(body, 'askrelay_chat_failures_total', { platform: 'telegram', kind: 'failed' }) ?? 0) >= 1 ? body : undefined;
    }, 'the delivery and the chat failure to be counted');

    expect(sample(text, 'askrelay_cards_created_total', { provider: 'claude' })).toBe(1);
    expect(sample(text, 'askrelay_cards_created_total', { provider: 'api' })).toBe(1);
    expect(sample(text, 'askrelay_cards_closed_total', { provider: 'claude', outcome: 'answered' })).toBe(1);
    expect(sample(text, 'askrelay_cards_closed_total', { provider: 'api', outcome: 'skipped' })).toBe(1);
    expect(sample(text, 'askrelay_card_answer_seconds_count', { provider: 'claude' })).toBe(1);
    expect(sample(text, 'askrelay_card_answer_seconds_count', { provider: 'api' })).toBeUndefined(); // skipped, not answered
    expect(sample(text, 'askrelay_cards_pending')).toBe(0);
    expect(sample(text, 'askrelay_sessions', { provider: 'claude', state: 'idle' })).toBe(1);
    expect(sample(text, 'askrelay_open_connections', { kind: 'long_poll' })).toBe(0);
    expect(sample(text, 'askrelay_refused_requests_total', { reason: 'unauthorized' })).toBe(1);
    // The label names a known push service or `other`, never the endpoint's host:port (unbounded).
    expect(sample(text, 'askrelay_push_failures_total', { service: 'other' })).toBeGreaterThanOrEqual(1);
    expect(text.split('\n').filter((l) => l.startsWith('askrelay_push_failures_total{') && !l.includes('service="other"'))).toEqual([]);
    expect(sample(text, 'askrelay_chat_outbox_depth', { platform: 'telegram' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'askrelay_store_seconds_count', { operation: 'insertCard' })).toBe(2);
    expect(sample(text, 'askrelay_store_seconds_count', { operation: 'closeCard' })).toBe(2);
    expect(sample(text, 'askrelay_provider_errors_total', { provider: 'claude' })).toBeUndefined();
    // The process's own, from prom-client's defaults.
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('shows a long poll while it waits', async () => {
    const card = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Wait?', options: ['Yes', 'No'] }] } })).json()) as Card;
    const poll = relay.api(`/api/cards/${card.id}/wait?timeout=30`);
    await waitUntil(async () => sample(await (await scrape()).text(), 'askrelay_open_connections', { kind: 'long_poll' }) === 1, 'the long poll to be counted');
    expect(sample(await (await scrape()).text(), 'askrelay_cards_pending')).toBe(1);
    await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' });
    expect((await poll).status).toBe(200);
  });

  it('opens to the relay token and the metrics token only; the metrics token opens nothing else', async () => {
    const text = await (await scrape(relay.token)).text();
    expect(text).toContain('# TYPE askrelay_cards_created_total counter');
    expect((await scrape()).headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const token of ['wrong-token-0123456789abcdef', '']) {
      const res = await scrape(token);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    const withMetricsToken = await fetch(new URL('/api/cards', relay.url), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(withMetricsToken.status).toBe(401);
    expect(text).not.toContain(relay.token);
  });
});
