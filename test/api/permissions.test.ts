import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planApprovalDraft, toolApprovalDraft } from '../../providers/claude/approvals.js';
import type { Answer, Card, CardDraft } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { lastUserText, startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Who may read, answer and skip which card, over real HTTP with real tokens: the operator's
// token (the human) and the agent tokens of real sessions (engine `messages` against the
// scripted Anthropic server, each gone idle after one text reply). Every cell of the matrix
// gets a fresh pending card; a refusal changes nothing and is in the audit log. The same
// matrix is the table in docs/cross-session.md.

let fake: AnthropicServer;
let relay: TestRelay;

/** The sessions: A lets other agents answer its cards, D does not; B and W are the other agents. */
const s = {} as Record<'A' | 'D' | 'B' | 'W', Session>;

beforeAll(async () => {
  fake = await startAnthropicServer({
    model: (request) =>
      lastUserText(request) === 'fail' ? { error: { status: 400, type: 'invalid_request_error', message: 'scripted failure' } } : { text: 'Done.' },
  });
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
  s.A = await startSession('session A', true);
  s.D = await startSession('session D', false);
  s.B = await startSession('session B', false);
  s.W = await startSession('session W', false);
  // W's human let it watch D (what an approved watch_session does).
  await relay.sessions.grantWatch(s.W.id, s.D.id);
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

async function startSession(prompt: string, agentsMayAnswer: boolean): Promise<Session> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt, agentsMayAnswer } });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as Session;
  return waitForStatus(id, 'idle');
}

async function waitForStatus(id: string, status: Session['status']): Promise<Session> {
  return waitUntil(async () => {
    const session = (await (await relay.api(`/api/sessions/${id}`)).json()) as Session;
    return session.status === status ? session : undefined;
  }, `session ${id} ${status}`);
}

/** A request with an agent's token, the operator's, or none. */
function call(token: string | undefined, method: string, path: string, json?: unknown): Promise<Response> {
  return fetch(new URL(path, relay.url), {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
}

const asHuman = async (id: string) => (await (await relay.api(`/api/cards/${id}`)).json()) as Card;

async function auditEntries(): Promise<AuditEntry[]> {
  const res = await relay.api('/api/audit?limit=10000');
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: AuditEntry[] }).entries;
}

// ---- the cards ---------------------------------------------------------------------------

type CardType = 'question' | 'start approval' | 'tool permission' | 'plan approval';

const DRAFTS: Record<CardType, () => CardDraft> = {
  question: () => ({ tool: 'AskUserQuestion', origin: 'native', questions: [{ header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] }),
  'start approval': () => ({
    tool: 'start_session',
    kind: 'approval',
    origin: 'relay',
    title: 'Start a session?',
    questions: [{ id: 'approve', header: 'Approve?', text: 'The agent of session B wants to start a claude session.', options: ['Approve', 'Deny'] }],
  }),
  'tool permission': () => toolApprovalDraft('Bash', { command: 'rm -rf build', description: 'Clean the build' }),
  'plan approval': () => planApprovalDraft({ plan: '1. Add the table\n2. Migrate' }),
};

/** A valid answer to each kind of card, so that only the access rules can refuse it. */
const ANSWERS: Record<CardType, Answer> = {
  question: { q1: { selected: ['SQLite'] } },
  'start approval': { approve: { selected: ['Approve'] } },
  'tool permission': { approve: { selected: ['Allow'] } },
  'plan approval': { plan: { selected: ['Approve'] } },
};

// ---- the principals ----------------------------------------------------------------------

type Who = 'human' | 'own agent (A)' | 'own agent (D)' | 'other agent, allowed' | 'other agent, not allowed' | 'watching agent, not allowed' | 'no token';

/** Whose token, and which session's card it tries. */
const PRINCIPALS: Record<Who, { token: () => string | undefined; agent: () => string | undefined; cardOf: () => string }> = {
  human: { token: () => relay.token, agent: () => undefined, cardOf: () => s.A.id },
  'own agent (A)': { token: () => relay.sessions.agentToken(s.A.id), agent: () => s.A.id, cardOf: () => s.A.id },
  'own agent (D)': { token: () => relay.sessions.agentToken(s.D.id), agent: () => s.D.id, cardOf: () => s.D.id },
  'other agent, allowed': { token: () => relay.sessions.agentToken(s.B.id), agent: () => s.B.id, cardOf: () => s.A.id },
  'other agent, not allowed': { token: () => relay.sessions.agentToken(s.B.id), agent: () => s.B.id, cardOf: () => s.D.id },
  'watching agent, not allowed': { token: () => relay.sessions.agentToken(s.W.id), agent: () => s.W.id, cardOf: () => s.D.id },
  'no token': { token: () => undefined, agent: () => undefined, cardOf: () => s.A.id },
};

// ---- the matrix (docs/cross-session.md has the same table) -------------------------------
// "200", or "<status> <code>" of the refusal.

type Row = [Who, CardType, read: string, answer: string, skip: string];
const OK = '200';
const HUMAN_ONLY = '403 human_only';
const OWN = '403 own_session';
const NOT_ALLOWED = '403 agents_not_allowed';
const HIDDEN = '404 not_found';
const NO_AUTH = '401 unauthorized';

const MATRIX: Row[] = [
  ['human', 'question', OK, OK, OK],
  ['human', 'start approval', OK, OK, OK],
  ['human', 'tool permission', OK, OK, OK],
  ['human', 'plan approval', OK, OK, OK],
  ['own agent (A)', 'question', OK, OWN, OWN],
  ['own agent (A)', 'start approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['own agent (A)', 'tool permission', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['own agent (A)', 'plan approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['own agent (D)', 'question', OK, OWN, OWN],
  ['own agent (D)', 'start approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['own agent (D)', 'tool permission', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['own agent (D)', 'plan approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['other agent, allowed', 'question', OK, OK, OK],
  ['other agent, allowed', 'start approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['other agent, allowed', 'tool permission', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['other agent, allowed', 'plan approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['other agent, not allowed', 'question', HIDDEN, HIDDEN, HIDDEN],
  ['other agent, not allowed', 'start approval', HIDDEN, HIDDEN, HIDDEN],
  ['other agent, not allowed', 'tool permission', HIDDEN, HIDDEN, HIDDEN],
  ['other agent, not allowed', 'plan approval', HIDDEN, HIDDEN, HIDDEN],
  ['watching agent, not allowed', 'question', OK, NOT_ALLOWED, NOT_ALLOWED],
  ['watching agent, not allowed', 'start approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['watching agent, not allowed', 'tool permission', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['watching agent, not allowed', 'plan approval', OK, HUMAN_ONLY, HUMAN_ONLY],
  ['no token', 'question', NO_AUTH, NO_AUTH, NO_AUTH],
  ['no token', 'start approval', NO_AUTH, NO_AUTH, NO_AUTH],
  ['no token', 'tool permission', NO_AUTH, NO_AUTH, NO_AUTH],
  ['no token', 'plan approval', NO_AUTH, NO_AUTH, NO_AUTH],
];

type Action = 'read' | 'answer' | 'skip';
const CELLS = MATRIX.flatMap(([who, card, read, answer, skip]) =>
  (
    [
      ['read', read],
      ['answer', answer],
      ['skip', skip],
    ] as [Action, string][]
  ).map(([action, expected]) => [who, card, action, expected] as [Who, CardType, Action, string]),
);

function request(action: Action, token: string | undefined, card: Card, type: CardType): Promise<Response> {
  if (action === 'read') return call(token, 'GET', `/api/cards/${card.id}`);
  if (action === 'answer') return call(token, 'POST', `/api/cards/${card.id}/answer`, { answers: ANSWERS[type] });
  return call(token, 'POST', `/api/cards/${card.id}/skip`);
}

describe('the permission matrix over HTTP', () => {
  it('covers every principal × card × action', () => {
    expect(CELLS).toHaveLength(Object.keys(PRINCIPALS).length * Object.keys(DRAFTS).length * 3);
    expect(new Set(CELLS.map(([w, c, a]) => `${w}|${c}|${a}`)).size).toBe(CELLS.length);
  });

  it('is the table in docs/cross-session.md, row for row', () => {
    const doc = readFileSync(new URL('../../docs/cross-session.md', import.meta.url), 'utf8');
    const lines = doc.split('\n');
    const header = lines.indexOf('| principal | card | read | answer | skip |');
    expect(header).toBeGreaterThan(-1);
    const rows: string[][] = [];
    for (const line of lines.slice(header + 2)) {
      if (!line.startsWith('|')) break;
      rows.push(line.split('|').slice(1, -1).map((cell) => cell.trim().replaceAll('`', '')));
    }
    expect(rows).toEqual(MATRIX);
  });

  it.each(CELLS)('%s · %s · %s → %s', async (who, type, action, expected) => {
    const principal = PRINCIPALS[who];
    const sessionId = principal.cardOf();
    const card = await relay.relay.create({ ...DRAFTS[type](), sessionId, provider: 'claude', engine: 'messages' });
    expect(card).toMatchObject({ status: 'pending', sessionId, kind: type === 'question' ? 'question' : 'approval' });
    const before = await asHuman(card.id);
    const auditBefore = (await auditEntries()).length;

    const res = await request(action, principal.token(), card, type);
    const body = (await res.json()) as Card & { error?: { code: string; message: string } };
    const after = await asHuman(card.id);
    const newEntries = (await auditEntries()).slice(auditBefore);
    const agent = principal.agent();
    const actor = agent ? { kind: 'agent', id: agent } : { kind: 'human', id: 'operator' };

    if (expected === OK) {
      expect(res.status).toBe(200);
      expect(body.error).toBeUndefined();
      expect(newEntries.filter((e) => e.event === 'card.refused')).toEqual([]);
      if (action === 'read') {
        expect(body).toEqual(before);
        expect(after).toEqual(before);
        expect(newEntries).toEqual([]);
        return;
      }
      const status = action === 'answer' ? 'answered' : 'skipped';
      const answeredBy = { ...actor, surface: 'api' };
      expect(body).toMatchObject({ id: card.id, status, answeredBy, ...(action === 'answer' ? { answer: ANSWERS[type] } : {}) });
      expect(after).toEqual(body);
      expect(newEntries).toEqual([expect.objectContaining({ event: `card.${status}`, cardId: card.id, sessionId, actor, surface: 'api' })]);
      return;
    }

    const [status, code] = expected.split(' ');
    expect(res.status).toBe(Number(status));
    expect(body.error?.code).toBe(code);
    expect(body.error?.message).toEqual(expect.any(String));
    // A refusal changes nothing: the card is still pending, identical.
    expect(after).toEqual(before);
    expect(after.status).toBe('pending');
    if (code === 'unauthorized') {
      // Nobody to name: no principal reached the card, nothing is audited.
      expect(newEntries).toEqual([]);
      return;
    }
    // Refused, including a 404 on a card that exists: audited with who, what and why.
    expect(newEntries).toEqual([
      expect.objectContaining({
        event: 'card.refused',
        cardId: card.id,
        sessionId,
        actor,
        surface: 'api',
        detail: { action, code },
      }),
    ]);
  });

  it('a 404 for a card the agent may not see reads exactly like a card that does not exist', async () => {
    const hidden = await relay.relay.create({ ...DRAFTS.question(), sessionId: s.D.id });
    const token = relay.sessions.agentToken(s.B.id);
    const res = await call(token, 'GET', `/api/cards/${hidden.id}`);
    const missing = await call(token, 'GET', '/api/cards/c_doesnotexist00');
    expect(res.status).toBe(404);
    expect(missing.status).toBe(404);
    const a = (await res.json()) as { error: { code: string; message: string } };
    const b = (await missing.json()) as { error: { code: string; message: string } };
    expect(a.error.message.replace(hidden.id, 'ID')).toBe(b.error.message.replace('c_doesnotexist00', 'ID'));
    expect(Object.keys(a)).toEqual(Object.keys(b));
  });

  it.each([
    ['other agent, allowed', 'question', '200'],
    ['other agent, allowed', 'plan approval', HUMAN_ONLY],
    ['own agent (A)', 'question', OWN],
    ['own agent (A)', 'tool permission', HUMAN_ONLY],
    ['other agent, not allowed', 'question', HIDDEN],
    ['watching agent, not allowed', 'question', NOT_ALLOWED],
    ['watching agent, not allowed', 'start approval', HUMAN_ONLY],
    ['no token', 'question', NO_AUTH],
  ] as [Who, CardType, string][])('POST /reply (plain text) follows the same rules: %s · %s → %s', async (who, type, expected) => {
    const principal = PRINCIPALS[who];
    const card = await relay.relay.create({ ...DRAFTS[type](), sessionId: principal.cardOf() });
    const res = await call(principal.token(), 'POST', `/api/cards/${card.id}/reply`, { text: '1' });
    const body = (await res.json()) as Card & { error?: { code: string } };
    if (expected === OK) {
      expect(res.status).toBe(200);
      expect(body).toMatchObject({ status: 'answered', answer: { q1: { selected: ['PostgreSQL'] } }, answeredBy: { kind: 'agent', id: principal.agent(), surface: 'api' } });
      return;
    }
    const [status, code] = expected.split(' ');
    expect([res.status, body.error?.code]).toEqual([Number(status), code]);
    expect(await asHuman(card.id)).toEqual(card);
  });

  it('GET /wait follows the same rules: 404 for a hidden card (audited), 204 for a visible pending one', async () => {
    const hidden = await relay.relay.create({ ...DRAFTS.question(), sessionId: s.D.id });
    const visible = await relay.relay.create({ ...DRAFTS.question(), sessionId: s.A.id });
    const token = relay.sessions.agentToken(s.B.id);
    const res = await call(token, 'GET', `/api/cards/${hidden.id}/wait?timeout=0`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect((await auditEntries()).filter((e) => e.cardId === hidden.id && e.event === 'card.refused')).toEqual([
      expect.objectContaining({ actor: { kind: 'agent', id: s.B.id }, detail: { action: 'read', code: 'not_found' } }),
    ]);
    expect((await call(token, 'GET', `/api/cards/${visible.id}/wait?timeout=0`)).status).toBe(204);
  });

  it('a malformed body on a hidden card is still 404 (the card\'s existence does not leak through a 400)', async () => {
    const hidden = await relay.relay.create({ ...DRAFTS.question(), sessionId: s.D.id });
    const res = await fetch(new URL(`/api/cards/${hidden.id}/answer`, relay.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${relay.sessions.agentToken(s.B.id)}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(404);
    expect((await auditEntries()).filter((e) => e.cardId === hidden.id && e.event === 'card.refused')).toEqual([
      expect.objectContaining({ actor: { kind: 'agent', id: s.B.id }, detail: expect.objectContaining({ code: 'not_found' }) }),
    ]);
  });

  it('a card without a session is the human\'s alone: every agent gets 404', async () => {
    const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } });
    const card = (await res.json()) as Card;
    expect(card.sessionId).toBeNull();
    for (const id of [s.A.id, s.B.id, s.W.id]) {
      const token = relay.sessions.agentToken(id);
      expect((await call(token, 'GET', `/api/cards/${card.id}`)).status).toBe(404);
      expect((await call(token, 'POST', `/api/cards/${card.id}/answer`, { answers: { q1: { selected: ['Yes'] } } })).status).toBe(404);
    }
    expect((await asHuman(card.id)).status).toBe('pending');
  });
});

describe('what else an agent token may do', () => {
  it('GET /api/cards lists only the cards the agent may see', async () => {
    const mk = async (sessionId: string) => (await relay.relay.create({ ...DRAFTS.question(), sessionId })).id;
    const ids = { A: await mk(s.A.id), D: await mk(s.D.id), B: await mk(s.B.id), W: await mk(s.W.id) };
    const loose = ((await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Loose?' }] } })).json()) as Card).id;
    const mine = [...Object.values(ids), loose];

    const listed = async (token: string, query = '') => {
      const res = await call(token, 'GET', `/api/cards${query}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { cards: Card[] }).cards.map((c) => c.id).filter((id) => mine.includes(id)).sort();
    };
    const agent = (id: string) => relay.sessions.agentToken(id);

    expect(await listed(relay.token)).toEqual([...mine].sort());
    // B: its own, and A's (A lets agents answer); not D's (not allowed, not watched), not the loose one.
    expect(await listed(agent(s.B.id))).toEqual([ids.A, ids.B].sort());
    // W: its own, A's, and D's (watched).
    expect(await listed(agent(s.W.id))).toEqual([ids.A, ids.D, ids.W].sort());
    // D: its own and A's.
    expect(await listed(agent(s.D.id))).toEqual([ids.A, ids.D].sort());
    // Filtering by a session it may not see gives an empty list, not an error.
    expect(await listed(agent(s.B.id), `?sessionId=${s.D.id}`)).toEqual([]);
    const every = ((await (await call(agent(s.B.id), 'GET', `/api/cards?sessionId=${s.D.id}`)).json()) as { cards: Card[] }).cards;
    expect(every).toEqual([]);
  });

  it('the audit log is the human\'s: 403 human_only for an agent token, and its chain verifies', async () => {
    const token = relay.sessions.agentToken(s.B.id);
    for (const path of ['/api/audit', '/api/audit/verify']) {
      const res = await call(token, 'GET', path);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('human_only');
    }
    expect((await call(undefined, 'GET', '/api/audit')).status).toBe(401);
    const verify = await relay.api('/api/audit/verify');
    expect(verify.status).toBe(200);
    expect(await verify.json()).toMatchObject({ ok: true, problems: [] });
  });

  it('GET /api/audit pages with after and limit, and says where the next page starts', async () => {
    const first = (await (await relay.api('/api/audit?limit=2')).json()) as { entries: AuditEntry[]; next?: number };
    expect(first.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(first.next).toBe(2);
    const second = (await (await relay.api(`/api/audit?after=${first.next}&limit=2`)).json()) as { entries: AuditEntry[]; next?: number };
    expect(second.entries.map((e) => e.seq)).toEqual([3, 4]);
    const all = await auditEntries();
    const last = (await (await relay.api(`/api/audit?after=${all.at(-1)!.seq}`)).json()) as { entries: AuditEntry[]; next?: number };
    expect(last).toEqual({ entries: [] });
    const bad = await relay.api('/api/audit?after=-1');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });

  it('PATCH /api/sessions/:id with an agent token is 403 human_only and changes nothing; the human\'s is audited', async () => {
    for (const [token, target] of [
      [relay.sessions.agentToken(s.D.id), s.D.id], // its own session
      [relay.sessions.agentToken(s.B.id), s.D.id], // another one
      [relay.sessions.agentToken(s.W.id), s.D.id], // one it watches
    ]) {
      const res = await call(token, 'PATCH', `/api/sessions/${target}`, { agentsMayAnswer: true });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('human_only');
    }
    expect((await relay.sessions.get(s.D.id)).agentsMayAnswer).toBe(false);
    expect((await auditEntries()).filter((e) => e.event === 'session.permission')).toEqual([]);

    const on = await relay.api(`/api/sessions/${s.B.id}`, { method: 'PATCH', json: { agentsMayAnswer: true } });
    expect(on.status).toBe(200);
    expect(((await on.json()) as Session).agentsMayAnswer).toBe(true);
    const off = await relay.api(`/api/sessions/${s.B.id}`, { method: 'PATCH', json: { agentsMayAnswer: false } });
    expect(((await off.json()) as Session).agentsMayAnswer).toBe(false);
    const entries = (await auditEntries()).filter((e) => e.event === 'session.permission');
    expect(entries).toEqual([
      expect.objectContaining({ sessionId: s.B.id, actor: { kind: 'human', id: 'operator' }, surface: 'api', detail: { agentsMayAnswer: true } }),
      expect.objectContaining({ sessionId: s.B.id, actor: { kind: 'human', id: 'operator' }, surface: 'api', detail: { agentsMayAnswer: false } }),
    ]);
  });

  it('an agent reads its own session and the ones it watches; others are 404; starting or messaging is the human\'s', async () => {
    const token = relay.sessions.agentToken(s.W.id);
    expect((await call(token, 'GET', `/api/sessions/${s.W.id}`)).status).toBe(200);
    expect((await call(token, 'GET', `/api/sessions/${s.D.id}`)).status).toBe(200);
    const other = await call(token, 'GET', `/api/sessions/${s.B.id}`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const listed = ((await (await call(token, 'GET', '/api/sessions')).json()) as { sessions: Session[] }).sessions.map((x) => x.id).sort();
    expect(listed).toEqual([s.D.id, s.W.id].sort());

    const refusals: [string, string, unknown][] = [
      ['POST', '/api/sessions', { provider: 'claude', engine: 'messages', prompt: 'sneaky' }],
      ['POST', `/api/sessions/${s.W.id}/messages`, { text: 'hello' }],
      ['DELETE', `/api/sessions/${s.B.id}`, undefined],
    ];
    for (const [method, path, json] of refusals) {
      const res = await call(token, method, path, json);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('human_only');
    }
    expect((await relay.sessions.get(s.B.id)).status).toBe('idle');
  });

  it('the agent token of a stopped session is 401, like no token', async () => {
    const stopped = await startSession('to be stopped', true);
    const token = relay.sessions.agentToken(stopped.id);
    expect((await call(token, 'GET', '/api/cards')).status).toBe(200);
    expect((await relay.api(`/api/sessions/${stopped.id}`, { method: 'DELETE' })).status).toBe(200);
    for (const [method, path] of [
      ['GET', '/api/cards'],
      ['GET', `/api/sessions/${stopped.id}`],
    ]) {
      const res = await call(token, method, path);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
  });

  it('the agent token of a failed session is 401', async () => {
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt: 'fail' } });
    const { id } = (await res.json()) as Session;
    const token = relay.sessions.agentToken(id);
    await waitForStatus(id, 'failed');
    expect((await call(token, 'GET', '/api/cards')).status).toBe(401);
  });

  it('a made-up token, or a token in the wrong scheme, is 401', async () => {
    expect((await call('asa_not-a-real-token', 'GET', '/api/cards')).status).toBe(401);
    const basic = await fetch(new URL('/api/cards', relay.url), { headers: { authorization: `Basic ${relay.sessions.agentToken(s.B.id)}` } });
    expect(basic.status).toBe(401);
  });
});
