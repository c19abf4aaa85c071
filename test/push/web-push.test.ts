import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { topicOf } from '../../src/push/push-sender.js';
import { browserSubscription, decryptPush, startFakePushService, verifyVapid, type BrowserSubscription, type FakePushService } from '../fakes/push-service.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Web Push at the protocol level: the relay encrypts and signs for real (web-push), a
// loopback server plays the push service, and the test decrypts each message with the
// subscription's private key like a browser would.

let relay: TestRelay;
let push: FakePushService;

beforeAll(async () => {
  push = await startFakePushService();
  relay = await startTestRelay({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1', ASKRELAY_WAIT: '90m', ASKRELAY_PUSH_BACKOFF: '20ms', ASKRELAY_PUSH_TIMEOUT: '2s', ASKRELAY_PUSH_RETRIES: '3' });
});
afterAll(async () => {
  await relay?.stop();
  await push?.close();
});

const subscribe = (body: unknown) => relay.api('/api/push/subscriptions', { method: 'POST', json: body });
const unsubscribe = (endpoint: string) => relay.api('/api/push/subscriptions', { method: 'DELETE', json: { endpoint } });
const at = (path: string) => push.requests.filter((r) => r.path === path);
const received = (path: string, count: number) =>
  waitUntil(() => at(path).length >= count && at(path), `${count} push request(s) at ${path}`);
const payloadOf = (body: Buffer, sub: BrowserSubscription) => JSON.parse(decryptPush(body, sub).toString('utf8'));

async function createCard(header: string, text: string): Promise<Card> {
  const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ header, text, options: ['Yes', 'No'] }] } });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

async function newSubscription(path: string): Promise<BrowserSubscription> {
  const sub = browserSubscription(`${push.base}${path}`);
  expect((await subscribe(sub.json)).status).toBe(201);
  return sub;
}

describe('VAPID key', () => {
  // Two-node mode (ASKRELAY_TEST_NODES=2): nodes on PostgreSQL keep the key pair in the database
  // they share, not in a data folder (test/store/shared-settings.test.ts covers that).
  it.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('is made on first start, kept in the data folder (0600) and served to the human', async () => {
    const res = await relay.api('/api/push/key');
    expect(res.status).toBe(200);
    const { publicKey } = (await res.json()) as { publicKey: string };
    const point = Buffer.from(publicKey, 'base64url');
    expect(point.length).toBe(65);
    expect(point[0]).toBe(4);
    const file = join(relay.dataDir, 'vapid.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).publicKey).toBe(publicKey);
  });

  it('needs the token', async () => {
    expect((await fetch(new URL('/api/push/key', relay.url))).status).toBe(401);
  });

  // Two-node mode: the session and its agent token are written straight into the SQLite file,
  // which nodes on PostgreSQL do not read.
  it.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('is for the human only: an agent token gets 403 on every push route', async () => {
    // A stored, not stopped session with its agent token, as a running session would have.
    const store = new SqliteStore(join(relay.dataDir, 'askrelay.sqlite'));
    const now = new Date().toISOString();
    store.sessions.insert({ id: 's_push_agent', provider: 'claude', status: 'idle', createdAt: now, updatedAt: now } as unknown as Session);
    const token = 'asa_push_agent_token';
    store.sessions.setAgentToken('s_push_agent', token);
    store.close();
    const as = (method: string, path: string, json?: unknown) =>
      fetch(new URL(path, relay.url), {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(json ? { body: JSON.stringify(json) } : {}),
      });
    const sub = browserSubscription(`${push.base}/push/agent`).json;
    for (const res of [await as('GET', '/api/push/key'), await as('POST', '/api/push/subscriptions', sub), await as('DELETE', '/api/push/subscriptions', { endpoint: sub.endpoint })]) {
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe('human_only');
    }
  });
});

describe('subscriptions', () => {
  it.each([
    ['no keys', { endpoint: 'https://push.example/x' }, 'keys'],
    ['no endpoint', { keys: browserSubscription('https://x').json.keys }, 'endpoint'],
    ['a plain-http endpoint off loopback', { ...browserSubscription('http://push.example/x').json }, 'https://'],
    ['a short p256dh', { endpoint: 'https://push.example/x', keys: { p256dh: 'BAAA', auth: 'A'.repeat(22) } }, 'p256dh'],
    ['an auth secret of the wrong length', { endpoint: 'https://push.example/x', keys: { ...browserSubscription('https://x').json.keys, auth: 'AAAA' } }, 'auth'],
  ])('refuses %s with 422 and says what is wrong', async (_what, body, mentions) => {
    const res = await subscribe(body);
    expect(res.status).toBe(422);
    const { error } = await res.json();
    expect(error.code).toBe('invalid_subscription');
    expect(error.message).toContain(mentions);
  });

  it('400 for malformed JSON', async () => {
    const res = await relay.api('/api/push/subscriptions', { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
  });

  it('stores (201), accepts the same endpoint again (200), deletes (200) and then 404', async () => {
    const sub = browserSubscription(`${push.base}/push/crud`);
    expect((await subscribe(sub.json)).status).toBe(201);
    expect((await subscribe({ ...sub.json, expirationTime: null })).status).toBe(200);
    expect((await unsubscribe(sub.json.endpoint)).status).toBe(200);
    const gone = await unsubscribe(sub.json.endpoint);
    expect(gone.status).toBe(404);
    expect((await relay.api('/api/push/subscriptions', { method: 'DELETE', json: {} })).status).toBe(422);
  });
});

describe('notifications', () => {
  it('a new card is pushed encrypted (aes128gcm) and VAPID-signed; closing it pushes {type:"close"}', async () => {
    const sub = await newSubscription('/push/main');
    const { publicKey } = (await (await relay.api('/api/push/key')).json()) as { publicKey: string };
    const card = await createCard('Database', 'Which DB should the service use?');

    const [request] = await received('/push/main', 1);
    expect(request.headers['content-encoding']).toBe('aes128gcm');
    expect(request.headers['content-type']).toBe('application/octet-stream');
    expect(request.headers.urgency).toBe('high');
    expect(request.headers.topic).toBe(topicOf(card.id));
    const ttl = Number(request.headers.ttl);
    expect(ttl).toBeGreaterThan(80 * 60);
    expect(ttl).toBeLessThanOrEqual(90 * 60);

    const { claims, publicKey: k } = verifyVapid(request.headers.authorization);
    expect(k).toBe(publicKey);
    expect(claims.aud).toBe(new URL(push.base).origin);
    const now = Date.now() / 1000;
    expect(claims.exp).toBeGreaterThan(now);
    expect(claims.exp).toBeLessThanOrEqual(now + 24 * 3600);
    expect(claims.sub).toMatch(/^(mailto:|https:)/);

    expect(payloadOf(request.body, sub)).toEqual({
      type: 'card',
      cardId: card.id,
      title: 'Database',
      body: 'Which DB should the service use?',
      url: `/#card=${encodeURIComponent(card.id)}`,
      expiresAt: card.expiresAt,
    });

    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    const [, closing] = await received('/push/main', 2);
    expect(closing.headers.topic).toBe(topicOf(card.id));
    verifyVapid(closing.headers.authorization);
    expect(payloadOf(closing.body, sub)).toEqual({ type: 'close', cardId: card.id });
    await unsubscribe(sub.json.endpoint);
  });

  it('a 410 from the push service removes the subscription', async () => {
    const sub = await newSubscription('/push/gone');
    push.script('/push/gone', [410]);
    await createCard('Gone', 'Is anyone there?');
    await received('/push/gone', 1);
    await relay.push.idle();
    expect((await unsubscribe(sub.json.endpoint)).status).toBe(404);
    // Nothing more goes there.
    await createCard('Gone', 'Still there?');
    await relay.push.idle();
    expect(at('/push/gone')).toHaveLength(1);
  });

  it('a 500 is retried with backoff until it goes through, and the subscription stays', async () => {
    const sub = await newSubscription('/push/flaky');
    push.script('/push/flaky', [500, 503]);
    const card = await createCard('Flaky', 'Try again?');
    const requests = await received('/push/flaky', 3);
    await relay.push.idle();
    expect(at('/push/flaky')).toHaveLength(3);
    for (const request of requests) expect(payloadOf(request.body, sub)).toMatchObject({ type: 'card', cardId: card.id });
    expect((await unsubscribe(sub.json.endpoint)).status).toBe(200);
  });

  it('gives up after the configured retries', async () => {
    const sub = await newSubscription('/push/down');
    push.script('/push/down', [500, 500, 500, 500, 500, 500]);
    await createCard('Down', 'Anyone?');
    await received('/push/down', 4);
    await relay.push.idle();
    expect(at('/push/down')).toHaveLength(4); // the first attempt and ASKRELAY_PUSH_RETRIES=3
    expect((await unsubscribe(sub.json.endpoint)).status).toBe(200);
  });

  it('a hanging push service does not hold up creating or answering a card', async () => {
    const sub = await newSubscription('/push/hang');
    push.script('/push/hang', ['hang', 'hang']);
    const card = await createCard('Hang', 'Quick?');
    await received('/push/hang', 1);
    const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } });
    expect(res.status).toBe(200);
    expect((await unsubscribe(sub.json.endpoint)).status).toBe(200);
  });
});

describe('across restarts', () => {
  it('keeps the VAPID key and the subscriptions; stopping right after a card event throws nothing', async () => {
    const first = await startTestRelay({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1', ASKRELAY_PUSH_BACKOFF: '20ms' });
    const dataDir = first.dataDir;
    try {
      const key = ((await (await first.api('/api/push/key')).json()) as { publicKey: string }).publicKey;
      const sub = browserSubscription(`${push.base}/push/restart`);
      expect((await first.api('/api/push/subscriptions', { method: 'POST', json: sub.json })).status).toBe(201);
      const created = await first.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Now?' }] } });
      expect(created.status).toBe(201);
      await first.close(); // at once: the fan-out may still be scheduled; the data folder stays

      const second = await startTestRelay({}, dataDir);
      try {
        expect(((await (await second.api('/api/push/key')).json()) as { publicKey: string }).publicKey).toBe(key);
        const removed = await second.api('/api/push/subscriptions', { method: 'DELETE', json: { endpoint: sub.json.endpoint } });
        expect(removed.status).toBe(200);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
