import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress, pushServiceName } from '../../src/push/endpoint-policy.js';
import { pushConfigFromEnv } from '../../src/push/push-config.js';
import { browserSubscription, startFakePushService, type FakePushService } from '../fakes/push-service.js';
import { closedPort } from '../support/closed-port.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// What a token may make the relay POST to (docs/security.md, "Web Push"): only https
// endpoints on public hosts, a hostname resolved again at every send, at most 20
// subscriptions per token (counted in the database, so across nodes), and a metric whose
// label cannot grow with the endpoints. ASKRELAY_PUSH_ALLOW_PRIVATE=1 lets the tests' local
// push services in; the relay here runs without it, as a real one does.

const CAP = 20;
let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m', ASKRELAY_PUSH_RETRIES: '0', ASKRELAY_PUSH_TIMEOUT: '2s' });
});
afterAll(async () => {
  await relay?.stop();
});

type Body = { error?: { code: string; message: string }; created?: boolean };
const subscribe = async (endpoint: string, token?: string) => {
  const res = await relay.api('/api/push/subscriptions', { method: 'POST', json: browserSubscription(endpoint).json, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
  return { status: res.status, body: (await res.json()) as Body };
};
const unsubscribe = async (endpoint: string) => (await relay.api('/api/push/subscriptions', { method: 'DELETE', json: { endpoint } })).status;
const person = async (name: string) => ((await (await relay.api('/api/users', { method: 'POST', json: { name } })).json()) as { token: string }).token;

/** The value of each askrelay_push_failures_total series, by its whole label text. */
async function pushFailures(): Promise<Record<string, number>> {
  const text = await (await fetch(new URL('/metrics', relay.url), { headers: { authorization: `Bearer ${relay.token}` } })).text();
  const out: Record<string, number> = {};
  for (const match of text.matchAll(/^askrelay_push_failures_total\{(.*)\} (\S+)$/gm)) out[match[1]] = Number(match[2]);
  return out;
}

describe('endpoints', () => {
  it.each([
    'http://127.0.0.1:41000/push/1',
    'https://127.0.0.1:41001/push/1',
    'https://localhost/push',
    'https://push.localhost./push',
    'https://[::1]:41002/push',
    'https://10.1.2.3/push',
    'https://172.20.0.1/push',
    'https://192.168.1.10/push',
    'https://100.64.0.1/push',
    'https://169.254.169.254/latest/meta-data',
    'https://[fd12:3456::1]/push',
    'https://[fe80::1]/push',
    'https://0.0.0.0/push',
    'https://[::]/push',
    'https://[::ffff:127.0.0.1]/push',
    'https://2130706433/push',
    'https://0x7f.1/push',
  ])('%s is refused (422): a loopback, private or link-local address', async (endpoint) => {
    const { status, body } = await subscribe(endpoint);
    expect(status).toBe(422);
    expect(body.error?.code).toBe('invalid_subscription');
    expect(body.error?.message).toMatch(/loopback, private or link-local address.*ASKRELAY_PUSH_ALLOW_PRIVATE=1/);
    expect(await unsubscribe(endpoint)).toBe(404);
  });

  it('plain http to a public host is refused; an https push service is taken', async () => {
    const plain = await subscribe('http://push.example.net/x');
    expect([plain.status, plain.body.error?.code]).toEqual([422, 'invalid_subscription']);
    expect(plain.body.error?.message).toContain('https://');
    const fcm = 'https://fcm.googleapis.com/fcm/send/dX0-guard-test';
    expect((await subscribe(fcm)).status).toBe(201);
    expect(await unsubscribe(fcm)).toBe(200);
  });

  it('a hostname that resolves to a private address when a push is sent gets no request', async () => {
    // This machine's own name resolves to one of its addresses, a loopback or private one here.
    const host = hostname();
    const addresses = await lookup(host, { all: true });
    expect(addresses.some((a) => isPrivateAddress(a.address)), `${host} resolves to ${JSON.stringify(addresses)}: no private address to test with`).toBe(true);
    const connections: string[] = [];
    const listener: Server = createServer((socket) => {
      connections.push(socket.remoteAddress ?? '');
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    const endpoint = `https://${host}:${(listener.address() as { port: number }).port}/push/rebound`;
    try {
      expect((await subscribe(endpoint)).status).toBe(201);
      const before = (await pushFailures())['service="other"'] ?? 0;
      expect((await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } })).status).toBe(201);
      await waitUntil(async () => ((await pushFailures())['service="other"'] ?? 0) > before, 'the refused push to be counted');
      await relay.push.idle();
      expect(connections).toEqual([]);
    } finally {
      await unsubscribe(endpoint);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });
});

describe('at most 20 subscriptions per token', () => {
  const endpointOf = (who: string, i: number) => `https://push.example.net/${who}/${i}`;

  it('the 21st is 409 too_many_subscriptions; a known endpoint again, another token, and one after a removal still go in', async () => {
    const ada = await person('ada-cap');
    // Spread over the nodes in two-node mode: the cap counts the database's rows.
    const first = await Promise.all(Array.from({ length: CAP }, (_, i) => subscribe(endpointOf('ada', i), ada)));
    expect(first.map((r) => r.status)).toEqual(Array(CAP).fill(201));

    const over = await subscribe(endpointOf('ada', CAP), ada);
    expect(over.status).toBe(409);
    expect(over.body.error).toEqual({ code: 'too_many_subscriptions', message: expect.stringContaining(`${CAP} push subscriptions already`) });
    expect(await unsubscribe(endpointOf('ada', CAP))).toBe(404);

    // The same browser subscribing again (new keys) is an update, not a 21st.
    const again = await subscribe(endpointOf('ada', 3), ada);
    expect([again.status, again.body.created]).toEqual([200, false]);
    // Each token has its own count.
    expect((await subscribe(endpointOf('operator', 0))).status).toBe(201);
    // A removal makes room for one.
    expect(await unsubscribe(endpointOf('ada', 0))).toBe(200);
    expect((await subscribe(endpointOf('ada', CAP), ada)).status).toBe(201);
    expect((await subscribe(endpointOf('ada', CAP + 1), ada)).status).toBe(409);

    for (let i = 1; i <= CAP; i++) await unsubscribe(endpointOf('ada', i));
    await unsubscribe(endpointOf('operator', 0));
  });

  it('25 subscribed at once by one token: exactly 20 are stored', async () => {
    const bob = await person('bob-cap');
    const results = await Promise.all(Array.from({ length: CAP + 5 }, (_, i) => subscribe(endpointOf('bob', i), bob)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(CAP);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    const stored = await Promise.all(Array.from({ length: CAP + 5 }, (_, i) => unsubscribe(endpointOf('bob', i))));
    expect(stored.filter((s) => s === 200)).toHaveLength(CAP);
  });
});

describe('the failures metric', () => {
  let local: TestRelay;
  let push: FakePushService;
  beforeAll(async () => {
    push = await startFakePushService();
    local = await startTestRelay({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1', ASKRELAY_WAIT: '90m', ASKRELAY_PUSH_RETRIES: '0', ASKRELAY_PUSH_TIMEOUT: '2s' });
  });
  afterAll(async () => {
    await local?.stop();
    await push?.close();
  });

  it('labels every push service it does not know `other`, however many host:ports the endpoints name', async () => {
    const endpoints = [...(await Promise.all(Array.from({ length: 5 }, async (_, i) => `http://127.0.0.1:${await closedPort()}/push/${i}`))), `${push.base}/refuses`];
    push.script('/refuses', [400]);
    for (const endpoint of endpoints) expect((await local.api('/api/push/subscriptions', { method: 'POST', json: browserSubscription(endpoint).json })).status).toBe(201);
    expect((await local.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } })).status).toBe(201);
    const scrape = async () => (await (await fetch(new URL('/metrics', local.url), { headers: { authorization: `Bearer ${local.token}` } })).text()).split('\n').filter((l) => l.startsWith('askrelay_push_failures_total{'));
    const lines = await waitUntil(async () => {
      const found = await scrape();
      return Number(found.find((l) => l.includes('service="other"'))?.split(' ')[1] ?? 0) >= endpoints.length ? found : undefined;
    }, 'every failed push to be counted');
    expect(lines).toEqual([`askrelay_push_failures_total{service="other"} ${endpoints.length}`]);
  });

  it('names the known push services', () => {
    expect(pushServiceName('https://fcm.googleapis.com/fcm/send/x')).toBe('fcm');
    expect(pushServiceName('https://updates.push.services.mozilla.com/wpush/v2/x')).toBe('mozilla');
    expect(pushServiceName('https://web.push.apple.com/QGk')).toBe('apple');
    expect(pushServiceName('https://wns2-par02p.notify.windows.com/w/?token=x')).toBe('windows');
    expect(pushServiceName('https://notify.windows.com.evil.example/x')).toBe('other');
    expect(pushServiceName('http://127.0.0.1:41000/x')).toBe('other');
  });
});

describe('ASKRELAY_PUSH_ALLOW_PRIVATE', () => {
  it('is 1 or 0; anything else stops the start with a sentence', () => {
    expect(pushConfigFromEnv({}).allowPrivate).toBe(false);
    expect(pushConfigFromEnv({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1' }).allowPrivate).toBe(true);
    expect(pushConfigFromEnv({ ASKRELAY_PUSH_ALLOW_PRIVATE: '0' }).allowPrivate).toBe(false);
    expect(() => pushConfigFromEnv({ ASKRELAY_PUSH_ALLOW_PRIVATE: 'yes' })).toThrow('ASKRELAY_PUSH_ALLOW_PRIVATE: "yes" is neither 1');
  });
});
