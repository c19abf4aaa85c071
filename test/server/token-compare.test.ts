import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameSecret } from '../../src/same-secret.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Every secret a caller sends is compared through src/same-secret.ts. A bearer of non-ASCII
// characters as long as the token in characters (but longer in UTF-8 bytes) made the old
// comparison on /metrics throw (500), which also told the token's length: every such bearer,
// of any length, is a plain 401 on every route that takes a token.

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const TOKEN = 'test-token-0123456789abcdef';
let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_METRICS_TOKEN: METRICS_TOKEN });
});
afterAll(async () => {
  await relay?.stop();
});

// Latin-1 characters: a header may carry them (one byte each on the wire), and each is two bytes in UTF-8.
const nonAscii = (length: number) => 'é'.repeat(length);
const bearers = [
  ['as long as the relay token', nonAscii(TOKEN.length)],
  ['as long as the metrics token', nonAscii(METRICS_TOKEN.length)],
  ['as long as the relay token in UTF-8 bytes', `${nonAscii((TOKEN.length - 1) / 2)}x`],
  ['shorter', nonAscii(5)],
  ['longer', nonAscii(200)],
  ['the token with its last character made non-ASCII', `${TOKEN.slice(0, -1)}é`],
] as const;

const get = (path: string, bearer: string) => fetch(new URL(path, relay.url), { headers: { authorization: `Bearer ${bearer}` } });

describe('a non-ASCII bearer', () => {
  it.each(bearers)('%s is 401 on /metrics, never 500', async (_what, bearer) => {
    const res = await get('/metrics', bearer);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  it.each(bearers)('%s is 401 on the API and on the page\'s login', async (_what, bearer) => {
    expect((await get('/api/cards', bearer)).status).toBe(401);
    const login = await fetch(new URL('/api/login', relay.url), { method: 'POST', headers: { 'content-type': 'application/json', origin: relay.url.replace(/\/$/, '') }, body: JSON.stringify({ token: bearer }) });
    expect(login.status).toBe(401);
  });

  it('the right tokens still open /metrics', async () => {
    expect((await get('/metrics', TOKEN)).status).toBe(200);
    expect((await get('/metrics', METRICS_TOKEN)).status).toBe(200);
  });
});

describe('sameSecret', () => {
  it('is true for the same text only, and never throws on lengths that differ in characters or bytes', () => {
    expect(sameSecret(TOKEN, TOKEN)).toBe(true);
    expect(sameSecret(Buffer.from(TOKEN), TOKEN)).toBe(true);
    for (const [, bearer] of bearers) expect(sameSecret(bearer, TOKEN)).toBe(false);
    expect(sameSecret('', TOKEN)).toBe(false);
    expect(sameSecret(TOKEN, '')).toBe(false);
    expect(sameSecret('', '')).toBe(true);
    expect(sameSecret(Buffer.alloc(0), Buffer.from('ab', 'hex'))).toBe(false);
  });
});
