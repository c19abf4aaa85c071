import { afterEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { browserSubscription, decryptPush, startFakePushService, type BrowserSubscription, type FakePushService } from '../fakes/push-service.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Back-off per push service (src/push/push-queue.ts): once a service fails, every push to it
// waits for the service's back-off, then one goes first as a probe; pushes to other services
// go on meanwhile. Two loopback push services (two origins) play a failing and a healthy one.
// On two nodes (ASKRELAY_TEST_NODES=2) the node holding the push lease sends, and its queue is
// the one checked.
let relay: TestRelay | undefined;
const services: FakePushService[] = [];

afterEach(async () => {
  await relay?.stop();
  relay = undefined;
  await Promise.all(services.splice(0).map((s) => s.close()));
});

async function setUp(backoff: string) {
  const [failing, healthy] = [await startFakePushService(), await startFakePushService()];
  services.push(failing, healthy);
  relay = await startTestRelay({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1', ASKRELAY_WAIT: '90m', ASKRELAY_PUSH_BACKOFF: backoff, ASKRELAY_PUSH_TIMEOUT: '2s', ASKRELAY_PUSH_RETRIES: '5' });
  const subscribe = async (service: FakePushService, path: string) => {
    const sub = browserSubscription(`${service.base}${path}`);
    expect((await relay!.api('/api/push/subscriptions', { method: 'POST', json: sub.json })).status).toBe(201);
    return sub;
  };
  const onFailing = [await subscribe(failing, '/a'), await subscribe(failing, '/b'), await subscribe(failing, '/c')];
  const onHealthy = await subscribe(healthy, '/d');
  const createCard = async (text: string) => {
    const res = await relay!.api('/api/cards', { method: 'POST', json: { questions: [{ text, options: ['Yes', 'No'] }] } });
    expect(res.status).toBe(201);
    return (await res.json()) as Card;
  };
  return { failing, healthy, onFailing, onHealthy, createCard };
}

const cardsIn = (service: FakePushService, path: string, sub: BrowserSubscription) =>
  service.requests.filter((r) => r.path === path).map((r) => JSON.parse(decryptPush(r.body, sub).toString('utf8')) as { cardId: string }).map((p) => p.cardId);

describe('back-off per push service', () => {
  it('a failing service gets nothing more while it backs off; the healthy one gets every push at once', async () => {
    const { failing, healthy, onHealthy, createCard } = await setUp('1h');
    for (const path of ['/a', '/b', '/c']) failing.script(path, [503, 503, 503]);
    const first = await createCard('First?');
    // The first card's three pushes were on their way together; each failed.
    await waitUntil(() => failing.requests.length === 3 && relay!.push.backlog.sending === 0, 'the failing service to answer the first three pushes');
    const later = [await createCard('Second?'), await createCard('Third?')];
    await waitUntil(() => healthy.requests.length === 3 && relay!.push.backlog.sending === 0, 'the healthy service to get all three cards');
    expect(cardsIn(healthy, '/d', onHealthy)).toEqual([first.id, ...later.map((c) => c.id)]);
    // Nothing more went to the failing service: its 3 retries and the 6 new pushes wait for its back-off.
    expect(failing.requests).toHaveLength(3);
    expect(relay!.push.backlog).toEqual({ waiting: 9, sending: 0 });
  });

  it('once the service answers again, the probe goes first and then every held push, each once', async () => {
    const { failing, onFailing, createCard } = await setUp('50ms');
    for (const path of ['/a', '/b', '/c']) failing.script(path, [503]);
    const cards = [await createCard('One?'), await createCard('Two?'), await createCard('Three?')];
    await relay!.push.idle();
    const delivered = (path: string, sub: BrowserSubscription) => [...new Set(cardsIn(failing, path, sub))].sort();
    const ids = cards.map((c) => c.id).sort();
    expect(delivered('/a', onFailing[0])).toEqual(ids);
    expect(delivered('/b', onFailing[1])).toEqual(ids);
    expect(delivered('/c', onFailing[2])).toEqual(ids);
    // Nine pushes went through; the failures were the first ones sent (at most one per subscription, each answered 503 once).
    expect(failing.requests.length).toBeGreaterThanOrEqual(10);
    expect(failing.requests.length).toBeLessThanOrEqual(12);
  });
});
