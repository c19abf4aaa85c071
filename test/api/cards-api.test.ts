import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterAll(() => relay.stop());

async function createCard(body: unknown = { questions: [{ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }] }) {
  const res = await relay.api('/api/cards', { method: 'POST', json: body });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

const answer = (id: string, answers: unknown, headers: Record<string, string> = {}) =>
  relay.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers }, headers });

const JSON_TYPE = { 'content-type': 'application/json' };
/** What the page's own requests carry: JSON, from the relay's origin. */
const fromPage = () => ({ ...JSON_TYPE, origin: new URL(relay.url).origin });

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = await res.json();
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(10);
  return body;
}

describe('health and auth', () => {
  // Two-node mode (ASKRELAY_TEST_NODES=2) names its nodes and runs on PostgreSQL: this checks the
  // embedded store's body and default name (test/cluster/two-nodes-in-process.test.ts checks theirs).
  it.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('GET /api/health needs no token', async () => {
    const res = await fetch(new URL('/api/health', relay.url));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, version: '0.1.0', store: 'sqlite', node: relay.node });
    // The default name is host:port; a relay on port 0 does not know its port yet when it names itself.
    expect(relay.node).toBe(`${hostname()}:pid${process.pid}`);
  });

  it.each([
    ['GET', '/api/cards'],
    ['POST', '/api/cards'],
    ['GET', '/api/cards/c_x'],
    ['POST', '/api/cards/c_x/answer'],
    ['POST', '/api/cards/c_x/skip'],
    ['GET', '/api/cards/c_x/wait'],
    ['GET', '/api/events'],
    ['GET', '/api/anything'],
  ])('%s %s without the token is 401', async (method, path) => {
    const res = await fetch(new URL(path, relay.url), { method });
    await expectError(res, 401, 'unauthorized');
    const wrong = await fetch(new URL(path, relay.url), { method, headers: { authorization: 'Bearer nope' } });
    await expectError(wrong, 401, 'unauthorized');
  });

  it('the page logs in once with the token and then works by cookie', async () => {
    await expectError(await fetch(new URL('/api/login', relay.url), { method: 'POST', headers: fromPage(), body: '{"token":"nope"}' }), 401, 'unauthorized');
    const res = await fetch(new URL('/api/login', relay.url), { method: 'POST', headers: fromPage(), body: JSON.stringify({ token: relay.token }) });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(relay.token);
    const list = await fetch(new URL('/api/cards', relay.url), { headers: { cookie: cookie.split(';')[0] } });
    expect(list.status).toBe(200);
  });

  it('serves the web page at /', async () => {
    const res = await fetch(new URL('/', relay.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toMatch(/askrelay/);
  });
});

describe('POST /api/cards', () => {
  it('creates a card in the card model with defaults, waiting ASKRELAY_WAIT', async () => {
    const card = await createCard({
      title: 'Setup',
      questions: [
        { header: 'DB', text: 'Which DB?', options: [{ label: 'PostgreSQL', description: 'What the others use' }, 'SQLite', 'Other'] },
        { text: 'Anything else?' },
      ],
    });
    expect(card).toMatchObject({
      title: 'Setup',
      sessionId: null,
      provider: 'api',
      origin: 'relay',
      kind: 'question',
      layout: 'steps',
      selectSeveral: false,
      status: 'pending',
      questions: [
        {
          id: 'q1',
          header: 'DB',
          text: 'Which DB?',
          options: [{ label: 'PostgreSQL', description: 'What the others use' }, { label: 'SQLite' }],
          multiSelect: false,
          freeText: true,
        },
        { id: 'q2', text: 'Anything else?', options: [], multiSelect: false, freeText: true },
      ],
    });
    expect(card.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(card.expiresAt) - Date.parse(card.createdAt)).toBe(90 * 60_000);
    const fetched = await relay.api(`/api/cards/${card.id}`);
    expect(await fetched.json()).toEqual(card);
  });

  it('takes waitSeconds', async () => {
    const card = await createCard({ questions: [{ text: 'Quick?' }], waitSeconds: 30 });
    expect(Date.parse(card.expiresAt) - Date.parse(card.createdAt)).toBe(30_000);
  });

  it.each([
    ['malformed JSON', '{"questions": [', 400, 'malformed_json'],
    ['no questions field', '{"title":"x"}', 400, 'invalid_request'],
    ['a question that is a number', '{"questions":[1]}', 400, 'invalid_request'],
    ['an empty question list', '{"questions":[]}', 422, 'invalid_card'],
    ['duplicate labels', '{"questions":[{"text":"a","options":["x","x"]}]}', 422, 'invalid_card'],
    ['a negative wait', '{"questions":[{"text":"a"}],"waitSeconds":-1}', 400, 'invalid_request'],
  ])('refuses %s', async (_name, body, status, code) => {
    const before = ((await (await relay.api('/api/cards')).json()) as { cards: Card[] }).cards.length;
    await expectError(await relay.api('/api/cards', { method: 'POST', headers: JSON_TYPE, body }), status, code);
    const after = ((await (await relay.api('/api/cards')).json()) as { cards: Card[] }).cards.length;
    expect(after).toBe(before);
  });

  it('refuses a body over 64 KB with 413', async () => {
    const body = JSON.stringify({ questions: [{ text: 'x'.repeat(70 * 1024) }] });
    await expectError(await relay.api('/api/cards', { method: 'POST', headers: JSON_TYPE, body }), 413, 'body_too_large');
  });

  it('counts a chunked body too, which declares no length', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(16 * 1024));
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"questions":[{"text":"'));
        for (let i = 0; i < 5; i++) controller.enqueue(chunk);
        controller.enqueue(new TextEncoder().encode('"}]}'));
        controller.close();
      },
    });
    const res = await relay.api('/api/cards', { method: 'POST', headers: JSON_TYPE, body: stream, duplex: 'half' } as RequestInit);
    await expectError(res, 413, 'body_too_large');
    const small = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"questions":[{"text":"Chunked?"}]}'));
        controller.close();
      },
    });
    const ok = await relay.api('/api/cards', { method: 'POST', headers: JSON_TYPE, body: small, duplex: 'half' } as RequestInit);
    expect(ok.status).toBe(201);
  });
});

describe('GET /api/cards', () => {
  it('filters by status and refuses an unknown status', async () => {
    const card = await createCard();
    await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' });
    const skipped = (await (await relay.api('/api/cards?status=skipped')).json()) as { cards: Card[] };
    expect(skipped.cards.map((c) => c.id)).toContain(card.id);
    expect(skipped.cards.every((c) => c.status === 'skipped')).toBe(true);
    const pending = (await (await relay.api('/api/cards?status=pending')).json()) as { cards: Card[] };
    expect(pending.cards.map((c) => c.id)).not.toContain(card.id);
    await expectError(await relay.api('/api/cards?status=done'), 400, 'invalid_request');
    const none = (await (await relay.api('/api/cards?sessionId=nobody')).json()) as { cards: Card[] };
    expect(none.cards).toEqual([]);
  });

  it('lists newest first on request', async () => {
    const a = await createCard();
    const b = await createCard();
    const newest = (await (await relay.api('/api/cards?order=newest&limit=2')).json()) as { cards: Card[] };
    expect(newest.cards.map((c) => c.id)).toEqual([b.id, a.id]);
    await expectError(await relay.api('/api/cards?order=random'), 400, 'invalid_request');
  });

  it('GET /api/cards/:id of an unknown card is 404', async () => {
    await expectError(await relay.api('/api/cards/c_unknown'), 404, 'not_found');
  });
});

describe('POST /api/cards/:id/answer', () => {
  it('answers, and every bad answer before it changed nothing', async () => {
    const card = await createCard({
      questions: [
        { id: 'db', text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'extras', text: 'Extras?', options: ['Cache', 'Queue'], multiSelect: true },
      ],
    });
    const ok = { db: { selected: ['SQLite'] }, extras: { selected: ['Cache', 'Queue'], text: 'and a CDN' } };
    const bad: [unknown, number, string][] = [
      [{ ...ok, nope: { selected: [] } }, 422, 'unknown_question'],
      [{ db: ok.db }, 422, 'missing_answer'],
      [{ ...ok, db: { selected: ['MySQL'] } }, 422, 'unknown_option'],
      [{ ...ok, db: { selected: ['SQLite', 'PostgreSQL'] } }, 422, 'too_many_choices'],
      [{ ...ok, db: { selected: [], text: 'my key is sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa' } }, 422, 'credential_refused'],
      [{ ...ok, db: { selected: [] } }, 422, 'empty_answer'],
      ['not an object', 400, 'invalid_request'],
    ];
    for (const [answers, status, code] of bad) await expectError(await answer(card.id, answers), status, code);
    await expectError(await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', headers: JSON_TYPE, body: '{' }), 400, 'malformed_json');
    expect((await (await relay.api(`/api/cards/${card.id}`)).json()).status).toBe('pending');

    const res = await answer(card.id, ok);
    expect(res.status).toBe(200);
    const answered = (await res.json()) as Card;
    expect(answered.status).toBe('answered');
    expect(answered.answer).toEqual(ok);
    expect(answered.answeredBy).toEqual({ kind: 'human', id: 'operator', surface: 'api' });
  });

  it('records the surface an answer came from: the page by its cookie, a script by its header', async () => {
    const login = await fetch(new URL('/api/login', relay.url), { method: 'POST', headers: fromPage(), body: JSON.stringify({ token: relay.token }) });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const byPage = await createCard();
    const res = await fetch(new URL(`/api/cards/${byPage.id}/answer`, relay.url), {
      method: 'POST',
      headers: { cookie, ...fromPage() },
      body: JSON.stringify({ answers: { q1: { selected: ['SQLite'] } } }),
    });
    expect(((await res.json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'operator', surface: 'web' });
    const byCli = await createCard();
    const cli = await answer(byCli.id, { q1: { selected: ['SQLite'] } }, { 'x-askrelay-surface': 'cli' });
    expect(((await cli.json()) as Card).answeredBy?.surface).toBe('cli');
    const odd = await createCard();
    const weird = await answer(odd.id, { q1: { selected: ['SQLite'] } }, { 'x-askrelay-surface': 'not a name!' });
    expect(((await weird.json()) as Card).answeredBy?.surface).toBe('api');
  });

  it('an unknown card is 404, whatever the body', async () => {
    await expectError(await answer('c_unknown', {}), 404, 'not_found');
  });

  it('first of fifty concurrent answers wins; the same answer gets 200, a different one 409 with the winner', async () => {
    const card = await createCard();
    const labels = ['PostgreSQL', 'SQLite'];
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => answer(card.id, { q1: { selected: [labels[i % 2]] } }, { 'idempotency-key': `k${i}` })),
    );
    const bodies = await Promise.all(responses.map((r) => r.json()));
    const stored = (await (await relay.api(`/api/cards/${card.id}`)).json()) as Card;
    const winner = stored.answer!.q1.selected[0];
    responses.forEach((res, i) => {
      if (labels[i % 2] === winner) {
        expect(res.status).toBe(200);
        expect(bodies[i]).toEqual(stored);
      } else {
        expect(res.status).toBe(409);
        expect(bodies[i].error.code).toBe('already_answered');
        expect(bodies[i].card).toEqual(stored);
      }
    });
    expect(responses.filter((r) => r.status === 200)).toHaveLength(25);
  });

  it('Idempotency-Key: the same key and answer is 200, the same key with another answer is 422', async () => {
    const card = await createCard();
    const first = await answer(card.id, { q1: { selected: ['SQLite'] } }, { 'idempotency-key': 'abc' });
    expect(first.status).toBe(200);
    const again = await answer(card.id, { q1: { selected: ['SQLite'] } }, { 'idempotency-key': 'abc' });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
    await expectError(await answer(card.id, { q1: { selected: ['PostgreSQL'] } }, { 'idempotency-key': 'abc' }), 422, 'idempotency_key_reused');
  });

  it('an answer after expiry is 410 and a skipped card is 410', async () => {
    const card = await createCard({ questions: [{ text: 'Fast?', options: ['Yes', 'No'] }], waitSeconds: 0.05 });
    const waited = await relay.api(`/api/cards/${card.id}/wait?timeout=5`);
    expect(((await waited.json()) as Card).status).toBe('expired');
    const late = await expectError(await answer(card.id, { q1: { selected: ['Yes'] } }), 410, 'card_closed');
    expect(late.card.status).toBe('expired');
    const other = await createCard();
    expect((await relay.api(`/api/cards/${other.id}/skip`, { method: 'POST' })).status).toBe(200);
    await expectError(await answer(other.id, { q1: { selected: ['SQLite'] } }), 410, 'card_closed');
  });
});

describe('skip and wait', () => {
  it('skip: 200 card, again 200, 409 after an answer, 404 unknown', async () => {
    const card = await createCard();
    const res = await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Card).status).toBe('skipped');
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    const answered = await createCard();
    await answer(answered.id, { q1: { selected: ['SQLite'] } });
    const refused = await expectError(await relay.api(`/api/cards/${answered.id}/skip`, { method: 'POST' }), 409, 'already_answered');
    expect(refused.card.answer).toEqual({ q1: { selected: ['SQLite'] } });
    await expectError(await relay.api('/api/cards/c_unknown/skip', { method: 'POST' }), 404, 'not_found');
  });

  it('wait: 204 when the timeout passes first, the card as soon as it is answered', async () => {
    const card = await createCard();
    expect((await relay.api(`/api/cards/${card.id}/wait?timeout=0.05`)).status).toBe(204);
    const waiting = relay.api(`/api/cards/${card.id}/wait?timeout=10`);
    await answer(card.id, { q1: { selected: ['PostgreSQL'] } });
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(((await res.json()) as Card).answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
    await expectError(await relay.api(`/api/cards/${card.id}/wait?timeout=-1`), 400, 'invalid_request');
    await expectError(await relay.api('/api/cards/c_unknown/wait'), 404, 'not_found');
  });
});
