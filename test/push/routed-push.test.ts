import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { browserSubscription, decryptPush, startFakePushService, type BrowserSubscription, type FakePushService } from '../fakes/push-service.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Push to people (docs/routing.md): each person's browser subscribes with their personal
// token; a routed card is pushed only to its people's subscriptions, an escalation to the
// people it adds, and a card routed to everyone (or to no route) to every subscription, the
// operator's included. Real Web Push encryption, decrypted here as a browser would.

const MIN = 60_000;
let relay: TestRelay;
let clock: FakeClock;
let push: FakePushService;
const subs: Record<string, BrowserSubscription> = {};

beforeAll(async () => {
  push = await startFakePushService();
  ({ relay, clock } = await startRelayWithClock({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1', ASKRELAY_WAIT: '1h', ASKRELAY_PUSH_BACKOFF: '20ms' }));
  const tokens: Record<string, string> = {};
  for (const name of ['ada', 'bob']) tokens[name] = ((await (await relay.api('/api/users', { method: 'POST', json: { name } })).json()) as { token: string }).token;
  for (const who of ['ada', 'bob', 'operator']) {
    subs[who] = browserSubscription(`${push.base}/push/${who}`);
    const res = await relay.api('/api/push/subscriptions', { method: 'POST', json: subs[who].json, ...(who !== 'operator' ? { headers: { authorization: `Bearer ${tokens[who]}` } } : {}) });
    expect(res.status).toBe(201);
  }
  const routes = [{ name: 'payments', match: { labels: { team: 'payments' } }, to: ['ada'], escalate: [{ after: '15m', to: ['bob'] }] }];
  expect((await relay.api('/api/routes', { method: 'PUT', json: { routes } })).status).toBe(200);
});
afterAll(async () => {
  await relay?.stop();
  await push?.close();
});

/** What each browser received about `cardId`, decrypted: "card" or "close", in order. */
function receivedBy(cardId: string): Record<string, string[]> {
  const out: Record<string, string[]> = { ada: [], bob: [], operator: [] };
  for (const request of push.requests) {
    const who = request.path.split('/').pop()!;
    const payload = JSON.parse(decryptPush(request.body, subs[who]).toString('utf8')) as { type: string; cardId: string };
    if (payload.cardId === cardId) out[who].push(payload.type);
  }
  return out;
}

const ask = async (labels?: Record<string, string>) =>
  (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }], ...(labels ? { labels } : {}) } })).json()) as Card;
const settled = async () => {
  await relay.push.idle();
};

describe('push to the people a card is routed to', () => {
  it('a routed card reaches its person, then the person it escalates to; its close reaches both', async () => {
    const card = await ask({ team: 'payments' });
    // The node holding the push queue sends it (another one, should the lease have moved).
    await waitUntil(() => receivedBy(card.id).ada.length === 1, 'the push to ada');
    await settled();
    expect(receivedBy(card.id)).toEqual({ ada: ['card'], bob: [], operator: [] });

    clock.advance(15 * MIN);
    await waitUntil(async () => (await relay.relay.get(card.id)).routedTo?.includes('bob'), 'the escalation');
    await waitUntil(() => receivedBy(card.id).bob.length === 1, 'the push to bob');
    await settled();
    expect(receivedBy(card.id)).toEqual({ ada: ['card'], bob: ['card'], operator: [] });

    await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' });
    await waitUntil(() => receivedBy(card.id).bob.length === 2, 'the closes');
    await settled();
    expect(receivedBy(card.id)).toEqual({ ada: ['card', 'close'], bob: ['card', 'close'], operator: [] });
  });

  it('a card of no route reaches every subscription, the operator\'s included', async () => {
    const card = await ask();
    await waitUntil(() => Object.values(receivedBy(card.id)).every((got) => got.length === 1), 'three pushes');
    await settled();
    expect(receivedBy(card.id)).toEqual({ ada: ['card'], bob: ['card'], operator: ['card'] });
  });

  it('a person removed gets no more pushes, not even of cards for everyone', async () => {
    expect((await relay.api('/api/users/bob', { method: 'DELETE' })).status).toBe(200);
    const card = await ask();
    await waitUntil(() => receivedBy(card.id).ada.length === 1 && receivedBy(card.id).operator.length === 1, 'the pushes');
    await settled();
    expect(receivedBy(card.id)).toEqual({ ada: ['card'], bob: [], operator: ['card'] });
  });
});
