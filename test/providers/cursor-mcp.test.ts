import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, startTestRelay, type TestRelay } from '../support/running-relay.js';
import { readGolden } from '../support/golden.js';
import { cardsAskedBy, MCP_TOOLS, MCP_TIMING_ENV, mcpClients, type ToolResult } from '../support/mcp-tools.js';
import { waitUntil } from '../support/wait-until.js';

// The Cursor dialect of ask_user at /mcp, driven by the real MCP SDK client over Streamable
// HTTP and answered through the HTTP API, as a person on any surface would. Progress, the
// re-attach grace and expiry run on a relay whose clock the test moves by hand.

const PROGRESS_MS = 30_000;
const GRACE_MS = 60_000;

let relay: TestRelay;
const clients = mcpClients('cursor-test');
/** Relays with a hand-moved clock, one per test that moves it. */
const timed: TestRelay[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' });
});
afterEach(async () => {
  await clients.closeAll();
  await Promise.all(timed.splice(0).map((r) => r.stop()));
});
afterAll(() => relay.stop());

/** A relay of its own whose time moves only when the test says (its MCP calls' progress and grace too). */
async function relayWithClock(): Promise<{ relay: TestRelay; clock: FakeClock }> {
  const own = await startRelayWithClock({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' });
  timed.push(own.relay);
  return own;
}

/**
 * Moves `clock` one progress interval at a time, each once the relay has armed the next beat,
 * until the client has had `n` progress notifications.
 */
async function beats(clock: FakeClock, progress: unknown[], n: number): Promise<void> {
  while (progress.length < n) {
    const had = progress.length;
    await waitUntil(() => clock.armed(PROGRESS_MS) > 0, 'the next progress beat to be armed');
    clock.advance(PROGRESS_MS);
    await waitUntil(() => progress.length > had, `progress notification ${had + 1}`);
  }
}

const connect = (target: TestRelay = relay, token: string | undefined = target.token) => clients.connect(target.url, token);

const askedByCursor = cardsAskedBy('cursor', 1500);
/** The next card asked through /mcp (polls the relay). */
const nextCard = (target: TestRelay = relay) => askedByCursor(target.relay);

async function answer(id: string, answers: unknown, target: TestRelay = relay) {
  const res = await target.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
}

/** The card once it has `want` status (polls; a generous deadline, not a window). */
const statusOf = (id: string, want: Card['status'], target: TestRelay = relay): Promise<Card> =>
  waitUntil(async () => {
    const card = await target.relay.get(id);
    return card.status === want ? card : undefined;
  }, `card ${id} to be ${want}`);

const DB = { question: 'Which database?', header: 'Database', options: [{ label: 'PostgreSQL (Recommended)', description: 'Managed' }, { label: 'SQLite' }] };
const FEATURES = { question: 'Which features?', options: [{ label: 'Auth' }, { label: 'Billing' }, { label: 'Search' }], multiSelect: true };
const NAME = { question: 'What is the project called?' };

const call = (client: Client, args: unknown, options = {}) =>
  client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }, undefined, options) as Promise<ToolResult>;

describe('/mcp: ask_user in the Cursor dialect', () => {
  it('lists ask_user with its schema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS);
    // Every field of every tool, as recorded in golden/mcp-tools-cursor.json (not the constants they come from).
    expect(tools).toEqual(readGolden<{ tools: unknown[] }>('mcp-tools-cursor').tools);
    expect(tools[0].description).toMatch(/never add an "Other" option/);
  });

  it('one question: the call blocks until the card is answered', async () => {
    const { relay: own, clock } = await relayWithClock();
    const { client } = await connect(own);
    let settled = false;
    const progress: unknown[] = [];
    const pending = call(client, { questions: [DB] }, { onprogress: (p: unknown) => progress.push(p) }).finally(() => (settled = true));
    const card = await nextCard(own);
    expect(card).toMatchObject({
      provider: 'cursor',
      origin: 'relay',
      tool: 'ask_user',
      kind: 'question',
      layout: 'steps',
      sessionId: null,
      selectSeveral: false,
      questions: [
        {
          id: 'q1',
          header: 'Database',
          text: 'Which database?',
          options: [{ label: 'PostgreSQL (Recommended)', description: 'Managed' }, { label: 'SQLite' }],
          multiSelect: false,
          freeText: true,
        },
      ],
    });
    // A progress notification reaches the client on the stream its result would come on:
    // the call was still waiting when that notification went out, an interval after the card.
    await beats(clock, progress, 1);
    expect(settled).toBe(false);
    await answer(card.id, { q1: { selected: ['PostgreSQL (Recommended)'] } }, own);
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Which database? → PostgreSQL (Recommended)' }]);
    expect(result.structuredContent).toEqual({
      status: 'answered',
      cardId: card.id,
      answers: [{ question: 'Which database?', header: 'Database', selected: ['PostgreSQL (Recommended)'] }],
    });
  });

  it('multiSelect: every pick, in order', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [FEATURES] });
    const card = await nextCard();
    expect(card.questions[0].multiSelect).toBe(true);
    await answer(card.id, { q1: { selected: ['Auth', 'Billing'] } });
    const result = await pending;
    expect(result.content[0].text).toBe('Which features? → Auth, Billing');
    expect(result.structuredContent).toEqual({ status: 'answered', cardId: card.id, answers: [{ question: 'Which features?', selected: ['Auth', 'Billing'] }] });
  });

  it('free text instead of an option', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [DB] });
    const card = await nextCard();
    await answer(card.id, { q1: { selected: [], text: 'MariaDB, on port 3307' } });
    const result = await pending;
    expect(result.content[0].text).toBe('Which database? → (free text) MariaDB, on port 3307');
    expect(result.structuredContent).toEqual({
      status: 'answered',
      cardId: card.id,
      answers: [{ question: 'Which database?', header: 'Database', selected: [], text: 'MariaDB, on port 3307' }],
    });
  });

  it('several questions: one line each, picks and free text together', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [DB, FEATURES, NAME] });
    const card = await nextCard();
    expect(card.questions.map((q) => [q.id, q.text, q.options.length])).toEqual([
      ['q1', 'Which database?', 2],
      ['q2', 'Which features?', 3],
      ['q3', 'What is the project called?', 0],
    ]);
    await answer(card.id, {
      q1: { selected: ['SQLite'] },
      q2: { selected: ['Search'], text: 'also audit logs' },
      q3: { selected: [], text: 'askrelay\nfor now' },
    });
    const result = await pending;
    expect(result.content[0].text).toBe(
      [
        'Which database? → SQLite',
        'Which features? → Search; (free text) also audit logs',
        'What is the project called? → (free text) askrelay',
        '  for now',
      ].join('\n'),
    );
    expect(result.structuredContent).toEqual({
      status: 'answered',
      cardId: card.id,
      answers: [
        { question: 'Which database?', header: 'Database', selected: ['SQLite'] },
        { question: 'Which features?', selected: ['Search'], text: 'also audit logs' },
        { question: 'What is the project called?', selected: [], text: 'askrelay\nfor now' },
      ],
    });
  });

  it('skip: every question without an answer, and the skip sentence', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [DB, NAME] });
    const card = await nextCard();
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    const result = await pending;
    expect(result.isError).toBeFalsy();
    expect(result.content[0].text).toBe(
      [
        'Which database? → (no answer)',
        'What is the project called? → (no answer)',
        'The user declined to answer. Proceed with your best judgement and say what you assumed.',
      ].join('\n'),
    );
    expect(result.structuredContent).toEqual({
      status: 'skipped',
      cardId: card.id,
      answers: [
        { question: 'Which database?', header: 'Database', selected: [] },
        { question: 'What is the project called?', selected: [] },
      ],
    });
  });

  it('expiry: nobody answered within ASKRELAY_WAIT', async () => {
    const { relay: own, clock } = await relayWithClock();
    const { client } = await connect(own);
    const pending = call(client, { questions: [FEATURES] });
    const card = await nextCard(own);
    clock.advance(90 * 60_000);
    const result = await pending;
    expect(result.content[0].text).toBe(
      ['Which features? → (no answer)', 'Nobody answered within the wait. Proceed with your best judgement and say what you assumed.'].join('\n'),
    );
    expect(result.structuredContent).toMatchObject({ status: 'expired', cardId: card.id, answers: [{ question: 'Which features?', selected: [] }] });
    expect((await own.relay.get(card.id)).status).toBe('expired');
  });

  it('a waiting call gets a progress notification every ASKRELAY_MCP_PROGRESS, and none after its result', async () => {
    const { relay: own, clock } = await relayWithClock();
    const { client } = await connect(own);
    const progress: { progress: number; message?: string }[] = [];
    const pending = call(client, { questions: [NAME] }, { onprogress: (p: { progress: number; message?: string }) => progress.push(p) });
    const card = await nextCard(own);
    // Short of an interval, nothing; each further interval, one.
    await waitUntil(() => clock.armed(PROGRESS_MS) > 0, 'the first progress beat to be armed');
    clock.advance(PROGRESS_MS - 1);
    clock.advance(1);
    await waitUntil(() => progress.length === 1, 'the first progress notification');
    await beats(clock, progress, 5);
    await answer(card.id, { q1: { selected: [], text: 'relay' } }, own);
    const result = await pending;
    expect(result.content[0].text).toBe('What is the project called? → (free text) relay');
    // Every notification came before the result, on the same stream: exactly one per interval.
    expect(progress).toEqual([1, 2, 3, 4, 5].map((n) => ({ progress: n, message: `Waiting for the user's answer (card ${card.id}).` })));
    expect(clock.armed(PROGRESS_MS)).toBe(0);
  });

  it('notifications/cancelled cancels the card at once, without the grace', async () => {
    // The clock stands still: a grace can never run out here.
    const { relay: own, clock } = await relayWithClock();
    const { client } = await connect(own);
    const abort = new AbortController();
    const pending = call(client, { questions: [DB] }, { signal: abort.signal });
    const card = await nextCard(own);
    abort.abort('the agent moved on');
    await expect(pending).rejects.toThrow();
    expect((await statusOf(card.id, 'cancelled', own)).status).toBe('cancelled');
    expect(clock.armed(GRACE_MS)).toBe(0);
    // The server goes on.
    const again = call(client, { questions: [NAME] });
    const next = await nextCard(own);
    await answer(next.id, { q1: { selected: [], text: 'still here' } }, own);
    expect((await again).content[0].text).toBe('What is the project called? → (free text) still here');
  });

  it('the client going away cancels the card after the re-attach grace', async () => {
    const { relay: own, clock } = await relayWithClock();
    const { client, transport } = await connect(own);
    const pending = call(client, { questions: [DB] }).catch(() => 'gone');
    const card = await nextCard(own);
    await transport.close();
    expect(await pending).toBe('gone');
    // The relay saw the client go and started the grace.
    await waitUntil(() => clock.armed(GRACE_MS) === 1, 'the grace to start');
    clock.advance(GRACE_MS - 1);
    // Within the grace a re-sent call could still re-attach: its timer has not fired.
    expect(clock.armed(GRACE_MS)).toBe(1);
    expect((await own.relay.get(card.id)).status).toBe('pending');
    clock.advance(1);
    expect((await statusOf(card.id, 'cancelled', own)).status).toBe('cancelled');
  });

  it('the same call re-sent in the same session re-attaches to its card', async () => {
    const { relay: own, clock } = await relayWithClock();
    const { transport } = await connect(own);
    const headers = {
      authorization: `Bearer ${own.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId!,
      'mcp-protocol-version': '2025-06-18',
    };
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'retry-1',
      method: 'tools/call',
      params: { name: 'ask_user', arguments: { questions: [DB] }, _meta: { progressToken: 'retry-1' } },
    });
    const first = new AbortController();
    const firstRes = await fetch(new URL('/mcp', own.url), { method: 'POST', headers, body, signal: first.signal });
    expect(firstRes.status).toBe(200);
    const card = await nextCard(own);
    // A call of another client that went away too, asking something else: its card is cancelled
    // when the grace runs out, and shows when that has happened.
    const other = await connect(own);
    const lost = call(other.client, { questions: [NAME] }).catch(() => 'gone');
    const sentinel = await nextCard(own);
    first.abort();
    await waitUntil(() => clock.armed(GRACE_MS) === 1, 'the grace of the first request');
    await other.transport.close();
    expect(await lost).toBe('gone');
    await waitUntil(() => clock.armed(GRACE_MS) === 2, 'the grace of the other call');

    const second = await fetch(new URL('/mcp', own.url), { method: 'POST', headers, body });
    // Its progress beat starts once it waits on the card it re-attached to.
    await waitUntil(() => clock.armed(PROGRESS_MS) === 1, 'the re-sent call to wait on its card');
    clock.advance(GRACE_MS);
    expect((await statusOf(sentinel.id, 'cancelled', own)).status).toBe('cancelled');
    // The re-attached call kept its card alive past the grace.
    expect((await own.relay.get(card.id)).status).toBe('pending');
    expect((await own.relay.list({ status: 'pending' })).filter((c) => c.provider === 'cursor')).toHaveLength(1);
    await answer(card.id, { q1: { selected: ['SQLite'] } }, own);
    const text = await second.text();
    const result = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).find((m) => m.id === 'retry-1');
    expect(result).toMatchObject({ id: 'retry-1', result: { content: [{ type: 'text', text: 'Which database? → SQLite' }] } });
  });

  const longHeader = 'H'.repeat(41);
  it.each([
    ['five questions', { questions: [NAME, NAME, NAME, NAME, NAME] }, 'questions has 5 entries; ask at most 4 at once.'],
    ['no questions', { questions: [] }, 'questions is empty; ask 1-4 questions.'],
    ['questions missing', {}, 'questions is required: a list of 1-4 questions.'],
    ['one option', { questions: [{ question: 'Q?', options: [{ label: 'A' }] }] }, 'questions[0].options has 1 entry; give 2-6, or leave options out for a free-text question.'],
    [
      'seven options',
      { questions: [NAME, { question: 'Q?', options: ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map((label) => ({ label })) }] },
      'questions[1].options has 7 entries; give 2-6.',
    ],
    ['duplicate labels', { questions: [{ question: 'Q?', options: [{ label: 'Yes' }, { label: ' yes ' }] }] }, 'questions[0].options has the label "yes" twice; labels must be unique within a question.'],
    ['a long header', { questions: [{ question: 'Q?', header: longHeader }] }, 'questions[0].header is longer than 40 characters; keep it a short label.'],
    [
      'an "Other" option',
      { questions: [{ question: 'Q?', options: [{ label: 'A' }, { label: 'Other' }] }] },
      'questions[0].options[1] "Other" is not allowed: the user can always type their own answer, so leave out "Other".',
    ],
    ['a question without text', { questions: [{ header: 'H' }] }, 'questions[0].question is required.'],
    ['an option that is a text', { questions: [{ question: 'Q?', options: ['A', 'B'] }] }, 'questions[0].options[0] must be an object {label, description?}.'],
    ['a question that is a text', { questions: ['Which one?'] }, 'questions[0] must be an object {question, header?, options?, multiSelect?}.'],
    ['multiSelect without options', { questions: [{ question: 'Q?', multiSelect: true }] }, 'questions[0].multiSelect needs options to pick from; give 2-6.'],
    ['arguments that are not an object', 'Which database?', 'The arguments must be an object {questions: [...]}.'],
    ['arguments that are a list', [DB], 'The arguments must be an object {questions: [...]}.'],
  ])('%s → isError naming the field', async (_name, args, message) => {
    const { client } = await connect();
    const before = (await relay.relay.list()).length;
    const result = await call(client, args);
    expect(result).toEqual({ content: [{ type: 'text', text: message }], isError: true });
    expect((await relay.relay.list()).length).toBe(before);
  });

  it('an unknown tool is a protocol error, and the server goes on', async () => {
    const { client } = await connect();
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/no tool "nope"/);
    expect((await client.listTools()).tools).toHaveLength(MCP_TOOLS.length);
  });

  it('needs the bearer token (401 without it)', async () => {
    for (const authorization of [undefined, 'Bearer nope']) {
      const res = await fetch(new URL('/mcp', relay.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('unauthorized');
    }
    await expect(connect(relay, '')).rejects.toThrow(/401|nauthorized/);
    await expect(connect(relay, 'nope')).rejects.toThrow(/401|nauthorized/);
  });

  it('an unknown session is 404 so the client starts a new one', async () => {
    const res = await relay.api('/mcp', {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': 'gone' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(res.status).toBe(404);
  });
});
