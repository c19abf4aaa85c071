import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { browserSubscription } from '../fakes/push-service.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// The page's cookie must not work for another origin on the same host: SameSite=Strict does
// not tell ports apart, so a page on http://127.0.0.1:5173 (an agent's dev server, say) is
// "same-site" and its requests carry the cookie. What the browser sends for such a page is
// reproduced here header for header: the cookie, its Origin, Sec-Fetch-Site: same-site, and
// a text/plain body (a "simple" request, sent without a CORS preflight).

let relay: TestRelay;
let cookie: string;
let own: string;
const ATTACKER = 'http://127.0.0.1:5173';

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
  own = new URL(relay.url).origin;
  const login = await fetch(new URL('/api/login', relay.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: own, 'sec-fetch-site': 'same-origin' },
    body: JSON.stringify({ token: relay.token }),
  });
  expect(login.status).toBe(200);
  cookie = login.headers.get('set-cookie')!.split(';')[0];
});
afterAll(() => relay.stop());

async function createCard(): Promise<Card> {
  const res = await relay.api('/api/cards', { method: 'POST', json: { title: 'Deploy?', questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

/** A request carrying the page's cookie, with what a browser would add. */
function withCookie(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(new URL(path, relay.url), {
    method,
    headers: { cookie, ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}

const fromAttacker = (method: string, path: string, body?: unknown) =>
  withCookie(method, path, body, { origin: ATTACKER, 'sec-fetch-site': 'same-site', 'content-type': 'text/plain;charset=UTF-8' });

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = await res.json();
  expect(body.error).toEqual({ code, message: expect.any(String) });
  expect(body.error.message.length).toBeGreaterThan(10);
}

const cardNow = async (id: string) => (await (await relay.api(`/api/cards/${id}`)).json()) as Card;
const sessionCount = async () => ((await (await relay.api('/api/sessions')).json()) as { sessions: Session[] }).sessions.length;

describe('a page on another port of the same host, holding the cookie', () => {
  it('cannot answer, reply to or skip a card', async () => {
    const card = await createCard();
    await expectError(await fromAttacker('POST', `/api/cards/${card.id}/answer`, { answers: { q1: { selected: ['Yes'] } } }), 403, 'cross_origin');
    await expectError(await fromAttacker('POST', `/api/cards/${card.id}/reply`, { text: 'Yes' }), 403, 'cross_origin');
    await expectError(await fromAttacker('POST', `/api/cards/${card.id}/skip`), 403, 'cross_origin');
    expect((await cardNow(card.id)).status).toBe('pending');
  });

  it('cannot subscribe its own push endpoint', async () => {
    const sub = browserSubscription('https://push.attacker.example/x');
    await expectError(await fromAttacker('POST', '/api/push/subscriptions', sub.json), 403, 'cross_origin');
    // Not stored: removing it finds nothing.
    await expectError(await relay.api('/api/push/subscriptions', { method: 'DELETE', json: { endpoint: sub.json.endpoint } }), 404, 'not_found');
  });

  it('cannot start a session, create a card or log out', async () => {
    const sessions = await sessionCount();
    await expectError(await fromAttacker('POST', '/api/sessions', { provider: 'claude', prompt: 'rm -rf ~' }), 403, 'cross_origin');
    expect(await sessionCount()).toBe(sessions);
    const cards = ((await (await relay.api('/api/cards?limit=10000')).json()) as { cards: Card[] }).cards.length;
    await expectError(await fromAttacker('POST', '/api/cards', { questions: [{ text: 'Hi?' }] }), 403, 'cross_origin');
    expect(((await (await relay.api('/api/cards?limit=10000')).json()) as { cards: Card[] }).cards.length).toBe(cards);
    await expectError(await fromAttacker('POST', '/api/logout'), 403, 'cross_origin');
    expect((await withCookie('GET', '/api/cards', undefined, {})).status).toBe(200);
  });

  it('is refused with application/json too, by Origin alone, and with no Origin at all', async () => {
    const card = await createCard();
    const json = { 'content-type': 'application/json' };
    const answer = { answers: { q1: { selected: ['Yes'] } } };
    const path = `/api/cards/${card.id}/answer`;
    await expectError(await withCookie('POST', path, answer, { ...json, origin: ATTACKER, 'sec-fetch-site': 'same-site' }), 403, 'cross_origin');
    await expectError(await withCookie('POST', path, answer, { ...json, origin: ATTACKER }), 403, 'cross_origin');
    await expectError(await withCookie('POST', path, answer, { ...json, origin: 'null' }), 403, 'cross_origin');
    await expectError(await withCookie('POST', path, answer, { ...json, 'sec-fetch-site': 'cross-site' }), 403, 'cross_origin');
    // The browser's own verdict wins over an Origin that looks right.
    await expectError(await withCookie('POST', path, answer, { ...json, origin: own, 'sec-fetch-site': 'same-site' }), 403, 'cross_origin');
    await expectError(await withCookie('POST', path, answer, json), 403, 'cross_origin');
    expect((await cardNow(card.id)).status).toBe('pending');
  });

  it('cannot log the browser in (login CSRF)', async () => {
    const res = await fetch(new URL('/api/login', relay.url), {
      method: 'POST',
      headers: { origin: ATTACKER, 'sec-fetch-site': 'same-site', 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify({ token: relay.token }),
    });
    await expectError(res, 403, 'cross_origin');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('still reads nothing but what GET allows (reads are not its problem: CORS keeps the answer from it)', async () => {
    expect((await withCookie('GET', '/api/cards', undefined, { origin: ATTACKER, 'sec-fetch-site': 'same-site' })).status).toBe(200);
  });
});

describe('the page itself', () => {
  it('works by Sec-Fetch-Site: same-origin, and by an Origin equal to the relay\'s', async () => {
    const json = { 'content-type': 'application/json' };
    const first = await createCard();
    const bySecFetch = await withCookie('POST', `/api/cards/${first.id}/answer`, { answers: { q1: { selected: ['Yes'] } } }, { ...json, 'sec-fetch-site': 'same-origin' });
    expect(bySecFetch.status).toBe(200);
    expect(((await bySecFetch.json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'operator', surface: 'web' });
    const second = await createCard();
    const byOrigin = await withCookie('POST', `/api/cards/${second.id}/reply`, { text: 'No' }, { ...json, origin: own });
    expect(byOrigin.status).toBe(200);
    const skipped = await createCard();
    expect((await withCookie('POST', `/api/cards/${skipped.id}/skip`, undefined, { origin: own, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    const sub = browserSubscription('https://push.example/own');
    expect((await withCookie('POST', '/api/push/subscriptions', sub.json, { ...json, origin: own, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
  });

  it('still needs application/json from its own origin (415)', async () => {
    const card = await createCard();
    const res = await withCookie('POST', `/api/cards/${card.id}/answer`, { answers: { q1: { selected: ['Yes'] } } }, { origin: own, 'content-type': 'text/plain' });
    await expectError(res, 415, 'unsupported_media_type');
    expect((await cardNow(card.id)).status).toBe('pending');
  });
});

describe('bearer requests', () => {
  it('need no Origin, and are not refused for one', async () => {
    const card = await createCard();
    const res = await fetch(new URL(`/api/cards/${card.id}/answer`, relay.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${relay.token}`, 'content-type': 'application/json', origin: ATTACKER },
      body: JSON.stringify({ answers: { q1: { selected: ['No'] } } }),
    });
    expect(res.status).toBe(200);
    const plain = await createCard();
    const noOrigin = await relay.api(`/api/cards/${plain.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['No'] } } } });
    expect(noOrigin.status).toBe(200);
  });

  it('still need application/json on every JSON route (415), charset allowed', async () => {
    const card = await createCard();
    const routes: [string, string, unknown][] = [
      ['POST', '/api/cards', { questions: [{ text: 'Hi?' }] }],
      ['POST', `/api/cards/${card.id}/answer`, { answers: { q1: { selected: ['Yes'] } } }],
      ['POST', `/api/cards/${card.id}/reply`, { text: 'Yes' }],
      ['POST', '/api/sessions', { provider: 'claude', prompt: 'hi' }],
      ['POST', '/api/push/subscriptions', browserSubscription('https://push.example/plain').json],
      ['DELETE', '/api/push/subscriptions', { endpoint: 'https://push.example/plain' }],
      ['POST', '/api/login', { token: relay.token }],
    ];
    for (const [method, path, body] of routes) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', undefined]) {
        // Bytes go out with no Content-Type at all; a string would be sent as text/plain.
        const sent = type ? JSON.stringify(body) : new TextEncoder().encode(JSON.stringify(body));
        const res = await relay.api(path, { method, body: sent, headers: type ? { 'content-type': type, origin: own } : { origin: own } });
        await expectError(res, 415, 'unsupported_media_type');
      }
    }
    expect((await cardNow(card.id)).status).toBe('pending');
    const withCharset = await relay.api(`/api/cards/${card.id}/reply`, {
      method: 'POST',
      body: JSON.stringify({ text: 'Yes' }),
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    });
    expect(withCharset.status).toBe(200);
  });

  it('/mcp keeps its own 415 for a body that is not application/json', async () => {
    const res = await relay.api('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(415);
  });

  it('/mcp with the cookie from another origin is 403 too', async () => {
    const res = await withCookie(
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      { origin: ATTACKER, 'sec-fetch-site': 'same-site', 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
    );
    await expectError(res, 403, 'cross_origin');
  });
});

describe('behind a proxy (ASKRELAY_PUBLIC_URL)', () => {
  it('takes an Origin equal to the public address as the relay\'s own', async () => {
    const proxied = await startTestRelay({ ASKRELAY_PUBLIC_URL: 'https://relay.example.com/askrelay/' });
    try {
      const login = await fetch(new URL('/api/login', proxied.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'https://relay.example.com' },
        body: JSON.stringify({ token: proxied.token }),
      });
      expect(login.status).toBe(200);
      const other = await fetch(new URL('/api/login', proxied.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'https://evil.example.com' },
        body: JSON.stringify({ token: proxied.token }),
      });
      expect(other.status).toBe(403);
    } finally {
      await proxied.stop();
    }
  });
});
