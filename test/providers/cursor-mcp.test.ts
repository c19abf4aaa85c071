import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { readGolden } from '../support/golden.js';
import { cardsAskedBy, MCP_TOOLS } from '../support/mcp-tools.js';

// The Cursor dialect of ask_user at /mcp, driven by the real MCP SDK client over Streamable
// HTTP and answered through the HTTP API, as a person on any surface would.

process.env.ASKRELAY_MCP_PROGRESS = '100ms';
process.env.ASKRELAY_MCP_GRACE = '1s';

let relay: TestRelay;
const clients: Client[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
});
afterAll(() => relay.stop());

async function connect(target: TestRelay = relay, token: string | undefined = target.token) {
  const client = new Client({ name: 'cursor-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', target.url), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const askedByCursor = cardsAskedBy('cursor', 200);
/** The next card asked through /mcp (polls the relay). */
const nextCard = (target: TestRelay = relay) => askedByCursor(target.relay);

async function answer(id: string, answers: unknown, target: TestRelay = relay) {
  const res = await target.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
}

async function statusOf(id: string, want: Card['status'], withinMs = 4000): Promise<Card> {
  for (let i = 0; i < withinMs / 20; i++) {
    const card = await relay.relay.get(id);
    if (card.status === want) return card;
    await new Promise((r) => setTimeout(r, 20));
  }
  return await relay.relay.get(id);
}

const DB = { question: 'Which database?', header: 'Database', options: [{ label: 'PostgreSQL (Recommended)', description: 'Managed' }, { label: 'SQLite' }] };
const FEATURES = { question: 'Which features?', options: [{ label: 'Auth' }, { label: 'Billing' }, { label: 'Search' }], multiSelect: true };
const NAME = { question: 'What is the project called?' };

type Result = { content: { type: string; text: string }[]; structuredContent?: unknown; isError?: boolean };
const call = (client: Client, args: unknown, options = {}) =>
  client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }, undefined, options) as Promise<Result>;

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
    const { client } = await connect();
    let settled = false;
    const pending = call(client, { questions: [DB] }).finally(() => (settled = true));
    const card = await nextCard();
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
    await new Promise((r) => setTimeout(r, 150));
    expect(settled).toBe(false);
    await answer(card.id, { q1: { selected: ['PostgreSQL (Recommended)'] } });
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
    const short = await startTestRelay({ ASKRELAY_WAIT: '600ms' });
    try {
      const { client } = await connect(short);
      const result = await call(client, { questions: [FEATURES] });
      expect(result.content[0].text).toBe(
        ['Which features? → (no answer)', 'Nobody answered within the wait. Proceed with your best judgement and say what you assumed.'].join('\n'),
      );
      expect(result.structuredContent).toMatchObject({ status: 'expired', answers: [{ question: 'Which features?', selected: [] }] });
      const id = (result.structuredContent as { cardId: string }).cardId;
      expect((await short.relay.get(id)).status).toBe('expired');
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
      await short.stop();
    }
  });

  it('progress notifications keep a client with a short timeout waiting', async () => {
    const { client } = await connect();
    const progress: number[] = [];
    const pending = call(client, { questions: [NAME] }, {
      timeout: 400,
      resetTimeoutOnProgress: true,
      onprogress: (p: { progress: number }) => progress.push(p.progress),
    });
    const card = await nextCard();
    await new Promise((r) => setTimeout(r, 1000));
    await answer(card.id, { q1: { selected: [], text: 'relay' } });
    const result = await pending;
    expect(result.content[0].text).toBe('What is the project called? → (free text) relay');
    expect(progress.length).toBeGreaterThanOrEqual(5);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('notifications/cancelled cancels the card at once', async () => {
    const { client } = await connect();
    const abort = new AbortController();
    const pending = call(client, { questions: [DB] }, { signal: abort.signal });
    const card = await nextCard();
    abort.abort('the agent moved on');
    await expect(pending).rejects.toThrow();
    expect((await statusOf(card.id, 'cancelled', 500)).status).toBe('cancelled'); // well before the 1 s grace
    // The server goes on.
    const again = call(client, { questions: [NAME] });
    const next = await nextCard();
    await answer(next.id, { q1: { selected: [], text: 'still here' } });
    expect((await again).content[0].text).toBe('What is the project called? → (free text) still here');
  });

  it('the client going away cancels the card after the re-attach grace', async () => {
    const { client, transport } = await connect();
    const pending = call(client, { questions: [DB] }).catch(() => 'gone');
    const card = await nextCard();
    await transport.close();
    expect(await pending).toBe('gone');
    await new Promise((r) => setTimeout(r, 500));
    expect((await relay.relay.get(card.id)).status).toBe('pending'); // within the grace a re-sent call could still re-attach
    expect((await statusOf(card.id, 'cancelled')).status).toBe('cancelled');
  });

  it('the same call re-sent in the same session re-attaches to its card', async () => {
    const { transport } = await connect();
    const headers = {
      authorization: `Bearer ${relay.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId!,
      'mcp-protocol-version': '2025-06-18',
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'retry-1', method: 'tools/call', params: { name: 'ask_user', arguments: { questions: [DB] } } });
    const first = new AbortController();
    const firstRes = await fetch(new URL('/mcp', relay.url), { method: 'POST', headers, body, signal: first.signal });
    expect(firstRes.status).toBe(200);
    const card = await nextCard();
    first.abort();
    await new Promise((r) => setTimeout(r, 100));
    const second = await fetch(new URL('/mcp', relay.url), { method: 'POST', headers, body });
    await new Promise((r) => setTimeout(r, 1500)); // longer than the grace: the re-attached call keeps it alive
    expect((await relay.relay.get(card.id)).status).toBe('pending');
    expect((await relay.relay.list({ status: 'pending' })).filter((c) => c.provider === 'cursor')).toHaveLength(1);
    await answer(card.id, { q1: { selected: ['SQLite'] } });
    const text = await second.text();
    const message = JSON.parse(/^data: (.*)$/m.exec(text)![1]);
    expect(message).toMatchObject({ id: 'retry-1', result: { content: [{ type: 'text', text: 'Which database? → SQLite' }] } });
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
