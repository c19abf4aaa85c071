import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { runCli } from '../support/cli.js';
import { waitUntil } from '../support/wait-until.js';

// Routes (docs/routing.md) through the API: the operator replaces them (mistakes named by
// rule and field), each card records the rule it matched and who it goes to, a restricted
// card is hidden from everyone else, escalation on the relay's clock, the default answer at
// expiry, and the audit entries. Two nodes: the requests spread over both, and the routes a
// PUT to one node sets route the cards the other makes (ASKRELAY_TEST_NODES=2).

const MIN = 60_000;
let relay: TestRelay;
let clock: FakeClock;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  ({ relay, clock } = await startRelayWithClock({ ASKRELAY_WAIT: '1h' }));
  for (const name of ['ada', 'bob', 'cy']) {
    tokens[name] = ((await (await relay.api('/api/users', { method: 'POST', json: { name } })).json()) as { token: string }).token;
  }
});
afterAll(() => relay?.stop());

const as = (name: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  relay.api(path, { ...init, headers: { authorization: `Bearer ${tokens[name]}`, ...(init.headers as Record<string, string>) } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;
const put = (routes: unknown) => relay.api('/api/routes', { method: 'PUT', json: { routes } });
const ask = async (body: Record<string, unknown> = {}) => {
  const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'go', text: 'Deploy?', options: ['Yes', 'No'] }], ...body } });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
};
const read = async (id: string) => (await (await relay.api(`/api/cards/${id}`)).json()) as Card;
const auditOf = async (cardId: string) =>
  ((await (await relay.api('/api/audit?limit=10000')).json()) as { entries: AuditEntry[] }).entries.filter((e) => e.cardId === cardId);

const ROUTES = [
  { name: 'payments-prod', match: { labels: { team: 'payments', env: 'prod' } }, to: ['ada'], restrict: true, escalate: [{ after: '15m', to: ['bob'] }] },
  { name: 'payments', match: { labels: { team: 'payments' } }, to: ['bob', 'cy'], onExpiry: { answer: 'No' } },
];

describe('replacing the routes', () => {
  it('the operator puts and reads them; a mistake names its rule and field and changes nothing', async () => {
    const res = await put(ROUTES);
    expect(res.status).toBe(200);
    const shown = { routes: ROUTES.map((r) => ({ ...r })) };
    expect(await res.json()).toEqual(shown);
    expect(await (await relay.api('/api/routes')).json()).toEqual(shown);

    for (const [routes, message] of [
      [[{ name: 'ok', to: ['everyone'] }, { name: 'typo', to: ['dan'] }], 'rule 2 (typo): to: there is no person called "dan" (askrelay users add dan).'],
      [[{ name: 'late', to: ['ada'], escalate: [{ after: '15m', to: ['zed'] }] }], 'rule 1 (late): escalate[0].to: there is no person called "zed" (askrelay users add zed).'],
      [[{ name: 'p', to: ['ada'], escalate: [{ after: 'later', to: ['bob'] }] }], 'rule 1 (p): escalate[0].after: "later" is not a duration; write it like 8h, 90m, 2s, 500ms or 1h30m.'],
      [[{ name: 'p', to: ['ada'], match: { team: 'x' } }], 'rule 1 (p): match: Unrecognized key: "team"'],
    ] as const) {
      const bad = await put(routes);
      expect(bad.status).toBe(400);
      expect(await errorOf(bad)).toEqual({ code: 'invalid_request', message });
    }
    expect(await (await relay.api('/api/routes')).json()).toEqual(shown);
  });

  it('only the operator manages them', async () => {
    for (const res of [await as('ada', '/api/routes'), await as('ada', '/api/routes', { method: 'PUT', json: { routes: [] } })]) {
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('operator_only');
    }
    const text = await relay.api('/api/routes', { method: 'PUT', body: '{"routes":[]}', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    const broken = await relay.api('/api/routes', { method: 'PUT', body: '{"routes":', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    expect((await errorOf(broken)).code).toBe('malformed_json');
  });
});

describe('routing cards', () => {
  beforeAll(async () => {
    expect((await put(ROUTES)).status).toBe(200);
  });

  it('a card records the rule it matched and who it goes to; one that matches none goes to everyone', async () => {
    const card = await ask({ labels: { team: 'payments' } });
    expect(card).toMatchObject({ route: 'payments', routedTo: ['bob', 'cy'], onExpiry: { answer: 'No' } });
    expect(await read(card.id)).toMatchObject({ route: 'payments', routedTo: ['bob', 'cy'] });
    const plain = await ask({ labels: { team: 'search' } });
    expect('route' in plain || 'routedTo' in plain).toBe(false);
    // Everyone sees an unrestricted card, routed or not.
    expect((await as('ada', `/api/cards/${card.id}`)).status).toBe(200);
  });

  it('a restricted card is hidden from everyone but its people and the operator, then shows to whom it escalates', async () => {
    const card = await ask({ labels: { team: 'payments', env: 'prod' } });
    expect(card).toMatchObject({ route: 'payments-prod', routedTo: ['ada'], restricted: true, escalations: [{ at: new Date(Date.parse(card.createdAt) + 15 * MIN).toISOString(), to: ['bob'] }] });
    expect((await as('ada', `/api/cards/${card.id}`)).status).toBe(200);
    const hidden = await as('bob', `/api/cards/${card.id}`);
    expect(hidden.status).toBe(404);
    expect(await errorOf(hidden)).toEqual({ code: 'not_found', message: `No card "${card.id}".` });
    expect((await as('bob', `/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { go: { selected: ['Yes'] } } } })).status).toBe(404);
    expect((await as('bob', `/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(404);
    const bobsList = (await (await as('bob', '/api/cards?status=pending')).json()) as { cards: Card[] };
    expect(bobsList.cards.map((c) => c.id)).not.toContain(card.id);
    expect(((await (await as('ada', '/api/cards?status=pending')).json()) as { cards: Card[] }).cards.map((c) => c.id)).toContain(card.id);

    clock.advance(15 * MIN);
    const escalated = await waitUntil(async () => {
      const now = await read(card.id);
      return now.routedTo?.includes('bob') && now;
    }, 'the escalation to bob');
    expect(escalated.routedTo).toEqual(['ada', 'bob']);
    expect(escalated.escalations).toEqual([{ at: expect.any(String), to: ['bob'], done: new Date(clock.now()).toISOString() }]);
    expect((await as('bob', `/api/cards/${card.id}`)).status).toBe(200);
    expect((await as('cy', `/api/cards/${card.id}`)).status).toBe(404);
    const answered = await as('bob', `/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { go: { selected: ['Yes'] } } } });
    expect(((await answered.json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'bob', surface: 'api' });

    const entries = await waitUntil(async () => {
      const all = await auditOf(card.id);
      return all.some((e) => e.event === 'card.answered') && all;
    }, 'the audit entries');
    expect(entries.map((e) => e.event)).toEqual(['card.created', 'card.refused', 'card.refused', 'card.refused', 'card.escalated', 'card.refused', 'card.answered']);
    expect(entries[0].detail).toEqual({ kind: 'question', tool: 'cards', route: 'payments-prod', routedTo: ['ada'], restricted: true });
    expect(entries[1]).toMatchObject({ actor: { kind: 'human', id: 'bob' }, detail: { action: 'read', code: 'not_found' } });
    expect(entries[4]).toMatchObject({ actor: { kind: 'system', id: 'route:payments-prod' }, detail: { added: ['bob'], routedTo: ['ada', 'bob'] } });
    expect(entries[5]).toMatchObject({ actor: { kind: 'human', id: 'cy' }, detail: { action: 'read', code: 'not_found' } });
    expect(entries[6].actor).toEqual({ kind: 'human', id: 'bob' });
  });

  it('a card answered before its escalation step does not escalate', async () => {
    const card = await ask({ labels: { team: 'payments', env: 'prod' } });
    await as('ada', `/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { go: { selected: ['No'] } } } });
    clock.advance(16 * MIN);
    const after = await read(card.id);
    expect(after.routedTo).toEqual(['ada']);
    expect(after.escalations?.[0].done).toBeUndefined();
  });

  it('at its deadline a card with the route\'s default is answered by the route, not expired', async () => {
    const card = await ask({ labels: { team: 'payments' }, waitSeconds: 60 });
    clock.advance(MIN);
    const answered = await waitUntil(async () => {
      const now = await read(card.id);
      return now.status !== 'pending' && now;
    }, 'the default answer');
    expect(answered).toMatchObject({ status: 'answered', answer: { go: { selected: ['No'] } }, answeredBy: { kind: 'system', id: 'route:payments', surface: 'route' } });
    const entries = await waitUntil(async () => {
      const all = await auditOf(card.id);
      return all.some((e) => e.event === 'card.answered') && all;
    }, 'the audit entry of the default');
    expect(entries.find((e) => e.event === 'card.answered')).toMatchObject({ actor: { kind: 'system', id: 'route:payments' }, surface: 'route', detail: { default: true, route: 'payments', reply: 'No' } });
  });

  it('a card of no route still expires', async () => {
    const card = await ask({ waitSeconds: 60 });
    clock.advance(MIN);
    expect((await waitUntil(async () => (await read(card.id)).status === 'expired', 'the expiry'))).toBe(true);
  });

  it('askrelay cards shows the rule and who each card goes to; a person\'s token lists no card restricted to others', async () => {
    const routed = await ask({ labels: { team: 'payments' }, title: 'Routed one' });
    const restricted = await ask({ labels: { team: 'payments', env: 'prod' } });
    const asOperator = await runCli(['cards'], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: relay.token }, relay.dataDir);
    expect(asOperator.code).toBe(0);
    const lines = asOperator.stdout.split('\n');
    expect(lines[0]).toMatch(/^ID\s+LEFT\s+TO\s+HEADER\s+QUESTION\s+OPTIONS$/);
    expect(lines.find((l) => l.startsWith(routed.id))).toContain('payments → bob, cy');
    expect(lines.find((l) => l.startsWith(restricted.id))).toContain('payments-prod → ada (only them)');
    const asCy = await runCli(['cards'], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: tokens.cy }, relay.dataDir);
    expect(asCy.stdout).toContain(routed.id);
    expect(asCy.stdout).not.toContain(restricted.id);
  });
});
