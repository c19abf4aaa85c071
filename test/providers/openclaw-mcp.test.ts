import { serve, type ServerType } from '@hono/node-server';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Hono } from 'hono';
import { HUMAN_OPERATOR, sessionFacts } from '../../src/relay/access.js';
import { CardAccess } from '../../src/relay/card-access.js';
import type { AuthEnv } from '../../src/server/auth.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { Relay } from '../../src/relay/relay.js';
import { openclawDialect } from '../../providers/openclaw/index.js';
import { mcpRoute } from '../../src/server/mcp/route.js';
import { asyncCalls } from '../../src/store/call-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { asyncCards } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, startTestRelay, type TestRelay } from '../support/running-relay.js';
import { readGolden } from '../support/golden.js';
import { cardsAskedBy, MCP_TOOLS, MCP_TIMING_ENV, mcpClients, type ToolResult } from '../support/mcp-tools.js';
import { waitUntil } from '../support/wait-until.js';

// OpenClaw's ask_user at /mcp/openclaw, driven by the real MCP SDK client over Streamable
// HTTP and answered through the HTTP API. Results are pinned exactly (golden). What depends on
// time runs on a relay whose clock the test moves by hand.

const PROGRESS_MS = 30_000;
const GRACE_MS = 60_000;

let relay: TestRelay;
const clients = mcpClients('openclaw-test');
const timed: TestRelay[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' });
});
afterEach(async () => {
  await clients.closeAll();
  await Promise.all(timed.splice(0).map((r) => r.stop()));
});
afterAll(() => relay.stop());

/** A relay of its own whose time moves only when the test says. */
async function relayWithClock(): Promise<{ relay: TestRelay; clock: FakeClock }> {
  const own = await startRelayWithClock({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' });
  timed.push(own.relay);
  return own;
}

const connect = (url: string = relay.url, token: string | undefined = relay.token) => clients.connect(url, token, { path: '/mcp/openclaw' });

const askedByOpenclaw = cardsAskedBy('openclaw', 1500);
const nextCard = (target: Relay = relay.relay) => askedByOpenclaw(target);

async function answer(id: string, answers: unknown, target: TestRelay = relay) {
  const res = await target.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
}

const waitSeconds = (card: Card) => (Date.parse(card.expiresAt) - Date.parse(card.createdAt)) / 1000;

const TARGET = {
  id: 'deploy_target',
  header: 'Deploy',
  question: 'Where should this deploy?',
  options: [{ label: 'Staging (Recommended)', description: 'Safe' }, { label: 'Production' }],
};
const FEATURES = { id: 'features', header: 'Features', question: 'Which features?', options: [{ label: 'Auth' }, { label: 'Billing' }, { label: 'Search' }], multiSelect: true };
const DB = { id: 'db', header: 'Database', question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] };
// What OpenClaw's ask_user returns, byte for byte: a note, a blank line, the details as pretty JSON.
const NO_ANSWER = { content: [{ type: 'text', text: 'No answer arrived; proceed with best judgment.\n\n{\n  "status": "no_answer"\n}' }], structuredContent: { status: 'no_answer' } };
const CANCELLED = {
  content: [{ type: 'text', text: 'The question was cancelled; proceed with best judgment.\n\n{\n  "status": "no_answer"\n}' }],
  structuredContent: { status: 'no_answer' },
};

const call = (client: Client, args: unknown, options = {}) =>
  client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }, undefined, options) as Promise<ToolResult>;

describe('/mcp/openclaw: ask_user in the OpenClaw dialect', () => {
  it('lists ask_user with OpenClaw schema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS);
    // Every field of every tool, as recorded in golden/mcp-tools-openclaw.json (not the constants they come from).
    expect(tools).toEqual(readGolden<{ tools: unknown[] }>('mcp-tools-openclaw').tools);
  });

  it('one question: blocks until answered; the card waits 900 s by default', async () => {
    const { relay: own, clock } = await relayWithClock();
    const { client } = await connect(own.url);
    let settled = false;
    const progress: unknown[] = [];
    const pending = call(client, { questions: [TARGET] }, { onprogress: (p: unknown) => progress.push(p) }).finally(() => (settled = true));
    const card = await nextCard(own.relay);
    expect(card).toMatchObject({
      provider: 'openclaw',
      tool: 'ask_user',
      origin: 'relay',
      kind: 'question',
      layout: 'steps',
      sessionId: null,
      questions: [
        {
          id: 'deploy_target',
          header: 'Deploy',
          text: 'Where should this deploy?',
          options: [{ label: 'Staging (Recommended)', description: 'Safe' }, { label: 'Production' }],
          multiSelect: false,
          freeText: true,
        },
      ],
    });
    expect(waitSeconds(card)).toBe(900);
    // A progress notification comes on the stream the result would come on: an interval after
    // the card, the call was still waiting.
    await waitUntil(() => clock.armed(PROGRESS_MS) === 1, 'the progress beat to be armed');
    clock.advance(PROGRESS_MS);
    await waitUntil(() => progress.length === 1, 'a progress notification');
    expect(settled).toBe(false);
    await answer(card.id, { deploy_target: { selected: ['Staging (Recommended)'] } }, own);
    expect(await pending).toEqual({
      content: [
        {
          type: 'text',
          text: 'Deploy: Staging (Recommended)\n\n{\n  "status": "answered",\n  "answers": {\n    "answers": {\n      "deploy_target": [\n        "Staging (Recommended)"\n      ]\n    }\n  }\n}',
        },
      ],
      structuredContent: { status: 'answered', answers: { answers: { deploy_target: ['Staging (Recommended)'] } } },
    });
  });

  it('multiSelect: every pick, in order', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [FEATURES] });
    const card = await nextCard();
    expect(card.questions[0].multiSelect).toBe(true);
    await answer(card.id, { features: { selected: ['Auth', 'Search'] } });
    expect(await pending).toEqual({
      content: [{ type: 'text', text: 'Features: Auth, Search\n\n{\n  "status": "answered",\n  "answers": {\n    "answers": {\n      "features": [\n        "Auth",\n        "Search"\n      ]\n    }\n  }\n}' }],
      structuredContent: { status: 'answered', answers: { answers: { features: ['Auth', 'Search'] } } },
    });
  });

  it('free text: the typed text is the value (after any picks)', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [TARGET] });
    const card = await nextCard();
    await answer(card.id, { deploy_target: { selected: [], text: '  a canary box first  ' } });
    expect(await pending).toEqual({
      content: [{ type: 'text', text: 'Deploy: a canary box first\n\n{\n  "status": "answered",\n  "answers": {\n    "answers": {\n      "deploy_target": [\n        "a canary box first"\n      ]\n    }\n  }\n}' }],
      structuredContent: { status: 'answered', answers: { answers: { deploy_target: ['a canary box first'] } } },
    });
  });

  it('several questions: one line each, keyed by id', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [TARGET, FEATURES, DB] });
    const card = await nextCard();
    expect(card.questions.map((q) => q.id)).toEqual(['deploy_target', 'features', 'db']);
    await answer(card.id, {
      deploy_target: { selected: ['Production'] },
      features: { selected: ['Auth', 'Billing'], text: 'audit logs' },
      db: { selected: ['SQLite'] },
    });
    expect(await pending).toEqual({
      content: [
        {
          type: 'text',
          text: [
            'Deploy: Production',
            'Features: Auth, Billing, audit logs',
            'Database: SQLite',
            '',
            '{',
            '  "status": "answered",',
            '  "answers": {',
            '    "answers": {',
            '      "deploy_target": [',
            '        "Production"',
            '      ],',
            '      "features": [',
            '        "Auth",',
            '        "Billing",',
            '        "audit logs"',
            '      ],',
            '      "db": [',
            '        "SQLite"',
            '      ]',
            '    }',
            '  }',
            '}',
          ].join('\n'),
        },
      ],
      structuredContent: {
        status: 'answered',
        answers: { answers: { deploy_target: ['Production'], features: ['Auth', 'Billing', 'audit logs'], db: ['SQLite'] } },
      },
    });
  });

  it('skip → no_answer, as a cancelled question (the person declined it)', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [TARGET, DB] });
    const card = await nextCard();
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    expect(await pending).toEqual(CANCELLED);
  });

  it('cancellation (notifications/cancelled) → the card is cancelled at once; the server goes on', async () => {
    // The clock stands still: the cancel cannot be the grace running out.
    const { relay: own, clock } = await relayWithClock();
    const { client } = await connect(own.url);
    const abort = new AbortController();
    const pending = call(client, { questions: [DB] }, { signal: abort.signal });
    const card = await nextCard(own.relay);
    abort.abort('the agent moved on');
    await expect(pending).rejects.toThrow();
    await waitUntil(async () => (await own.relay.get(card.id)).status === 'cancelled', 'the card to be cancelled');
    expect(clock.armed(GRACE_MS)).toBe(0);
    const again = call(client, { questions: [DB] });
    const next = await nextCard(own.relay);
    await answer(next.id, { db: { selected: ['PostgreSQL'] } }, own);
    expect((await again).content[0].text).toMatch(/^Database: PostgreSQL\n\n\{/);
  });

  it('a card cancelled on the relay → no_answer, with the cancelled note', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [DB] });
    const card = await nextCard();
    await relay.relay.cancel(card.id);
    expect(await pending).toEqual(CANCELLED);
  });

  it('a 40-character header is cut to 12, not refused', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [{ ...DB, header: `  ${'Database choice for the new service x'.padEnd(40, 'y')}` }] });
    const card = await nextCard();
    expect(card.questions[0].header).toBe('Database cho');
    await answer(card.id, { db: { selected: ['SQLite'] } });
    expect((await pending).content[0].text).toMatch(/^Database cho: SQLite\n\n/);
  });

  it.each([
    [10, 30],
    [99999, 3600],
    [120, 120],
  ])('timeoutSeconds %s → the card waits %s s', async (timeoutSeconds, wait) => {
    const { client } = await connect();
    const pending = call(client, { questions: [DB], timeoutSeconds });
    const card = await nextCard();
    expect(waitSeconds(card)).toBe(wait);
    await relay.relay.cancel(card.id);
    await pending;
  });

  const opts = (...labels: string[]) => labels.map((label) => ({ label }));
  // OpenClaw's sentence first (what an agent's error handling matches), then the field that broke it.
  const CONTRACT = 'ask_user arguments do not match the model-facing question contract: ';
  it.each([
    ['four questions', { questions: [DB, { ...DB, id: 'b' }, { ...DB, id: 'c' }, { ...DB, id: 'd' }] }, `${CONTRACT}questions has 4 entries; ask at most 3 at once.`],
    ['no questions', { questions: [] }, `${CONTRACT}questions is empty; ask 1-3 questions.`],
    ['one option', { questions: [{ ...DB, options: opts('A') }] }, `${CONTRACT}questions[0].options has 1 entry; give 2-4.`],
    ['five options', { questions: [{ ...DB, options: opts('A', 'B', 'C', 'D', 'E') }] }, `${CONTRACT}questions[0].options has 5 entries; give 2-4.`],
    ['no options', { questions: [{ id: 'name', header: 'Name', question: 'What name?' }] }, `${CONTRACT}questions[0].options is required: give 2-4 options.`],
    [
      'a bad id',
      { questions: [{ ...DB, id: 'Deploy-Target' }] },
      `${CONTRACT}questions[0].id "Deploy-Target" must be snake_case: a lowercase letter, then lowercase letters, digits or "_".`,
    ],
    ['no id', { questions: [{ header: 'H', question: 'Q?', options: opts('A', 'B') }] }, `${CONTRACT}questions[0].id is required.`],
    ['no header', { questions: [{ id: 'db', question: 'Which database?', options: opts('A', 'B') }] }, `${CONTRACT}questions[0].header is required.`],
    ['an empty header', { questions: [{ ...DB, header: '' }] }, `${CONTRACT}questions[0].header is empty.`],
    ['isSecret on a question', { questions: [{ ...DB, isSecret: true }] }, `${CONTRACT}questions[0] has a field ask_user does not take: "isSecret".`],
    ['a field on an option', { questions: [{ ...DB, options: [{ label: 'A', isOther: true }, { label: 'B' }] }] }, `${CONTRACT}questions[0].options[0] has a field ask_user does not take: "isOther".`],
    ['an unknown top-level field', { questions: [DB], wait: 5 }, `${CONTRACT}The arguments have a field ask_user does not take: "wait".`],
    ['timeoutSeconds that is a text', { questions: [DB], timeoutSeconds: '900' }, `${CONTRACT}timeoutSeconds must be a whole number of seconds.`],
    ['timeoutSeconds that is not whole', { questions: [DB], timeoutSeconds: 120.5 }, `${CONTRACT}timeoutSeconds must be a whole number of seconds.`],
    ['arguments that are not an object', 'Which database?', `${CONTRACT}The arguments must be an object {questions: [...], timeoutSeconds?, threadId?}.`],
    ['arguments that are a list', [DB], `${CONTRACT}The arguments must be an object {questions: [...], timeoutSeconds?, threadId?}.`],
    ['a header blank after trimming', { questions: [{ ...DB, header: '   ' }] }, 'ask_user questions exceed the model-facing display contract: questions[0].header is blank.'],
    [
      'a label of 65 characters',
      { questions: [{ ...DB, options: opts('A', 'x'.repeat(65)) }] },
      'ask_user questions exceed the model-facing display contract: questions[0].options[1].label is longer than 64 characters.',
    ],
    ['a question of spaces', { questions: [{ ...DB, question: '   ' }] }, 'ask_user questions do not match the required question format: questions[0].question shows nothing.'],
    [
      'a label of invisible characters only',
      { questions: [{ ...DB, options: opts('A', '\u200b') }] },
      'ask_user questions do not match the required question format: questions[0].options[1].label shows nothing.',
    ],
    ['duplicate ids', { questions: [DB, { ...TARGET, id: 'db' }] }, "duplicate question id 'db'"],
    ['the same label twice', { questions: [{ ...DB, options: opts('Yes', 'Yes') }] }, "question 'db' has duplicate option values"],
    ['duplicate labels ignoring case', { questions: [{ ...DB, options: opts('Yes', ' yES ') }] }, "question 'db' has duplicate option label 'yES'"],
    ['a blank threadId', { questions: [DB], threadId: '   ' }, 'threadId must be a non-empty string'],
    [
      'a threadId with two questions',
      { questions: [DB, TARGET], threadId: '1700000000.000200' },
      'threadId supports only one single-select question; ask multi-question or multi-select prompts without threadId',
    ],
    [
      'a threadId with a multi-select question',
      { questions: [FEATURES], threadId: '1700000000.000200' },
      'threadId supports only one single-select question; ask multi-question or multi-select prompts without threadId',
    ],
    [
      'a credential question',
      { questions: [{ ...DB, id: 'key', header: 'Key', question: 'What is your OpenAI API key?' }] },
      'questions[0] asks for a credential, which must never travel through ask_user; have the user put it in a secrets store or the environment instead.',
    ],
    [
      'a password question',
      { questions: [DB, { ...DB, id: 'pw', header: 'Login', question: 'Which one is the admin password?' }] },
      'questions[1] asks for a credential, which must never travel through ask_user; have the user put it in a secrets store or the environment instead.',
    ],
  ])('%s → isError with one sentence', async (_name, args, message) => {
    const { client } = await connect();
    const before = (await relay.relay.list()).length;
    const result = await call(client, args);
    expect(result).toEqual({ content: [{ type: 'text', text: message }], isError: true });
    expect((await relay.relay.list()).length).toBe(before);
  });

  it('a question about token limits or password hashing is not a credential question', async () => {
    const { client } = await connect();
    const pending = call(client, {
      questions: [
        { ...DB, id: 'limit', header: 'Limit', question: 'What should the token limit be per request?' },
        { ...DB, id: 'hash', header: 'Hashing', question: 'Should passwords be hashed with bcrypt or argon2?' },
      ],
    });
    const card = await nextCard();
    await relay.relay.cancel(card.id);
    expect(await pending).toEqual(CANCELLED);
  });

  it('needs the bearer token (401 without it)', async () => {
    const res = await fetch(new URL('/mcp/openclaw', relay.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(401);
    await expect(connect(relay.url, 'nope')).rejects.toThrow(/401|nauthorized/);
  });
});

describe('/mcp/openclaw: expiry on a relay with a hand-moved clock', () => {
  it('timeoutSeconds 10 waits 30 s, then no_answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-openclaw-'));
    const store = new SqliteStore(join(dir, 'cards.db'));
    const clock = new FakeClock(Date.now());
    const own = new Relay({ store: asyncCards(store), clock, waits: { default: 3_600_000 } });
    await own.start();
    const access = new CardAccess(own, sessionFacts(asyncSessions(store.sessions)), store.audit);
    const app = new Hono<AuthEnv>();
    app.use('*', async (c, next) => {
      c.set('principal', HUMAN_OPERATOR('api'));
      await next();
    });
    app.all('/mcp/openclaw', mcpRoute(access, openclawDialect, { calls: asyncCalls(store.calls), timing: { progressIntervalMs: 100, reattachGraceMs: 1000 } }));
    const server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const address = server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
    try {
      const { client } = await connect(url, undefined);
      const pending = call(client, { questions: [DB], timeoutSeconds: 10 });
      const card = await nextCard(own);
      expect(waitSeconds(card)).toBe(30);
      clock.advance(29_999);
      expect((await own.get(card.id)).status).toBe('pending');
      clock.advance(1);
      expect(await pending).toEqual(NO_ANSWER);
      expect((await own.get(card.id)).status).toBe('expired');
    } finally {
      await clients.closeAll();
      await new Promise((r) => server.close(r));
      own.stop();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
