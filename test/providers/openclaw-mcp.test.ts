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
const NO_ANSWER = { content: [{ type: 'text', text: 'No answer arrived; proceed with best judgment.' }], structuredContent: { status: 'no_answer' } };

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
      content: [{ type: 'text', text: 'Deploy: Staging (Recommended)' }],
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
      content: [{ type: 'text', text: 'Features: Auth, Search' }],
      structuredContent: { status: 'answered', answers: { answers: { features: ['Auth', 'Search'] } } },
    });
  });

  it('free text: the typed text is the value (after any picks)', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [TARGET] });
    const card = await nextCard();
    await answer(card.id, { deploy_target: { selected: [], text: '  a canary box first  ' } });
    expect(await pending).toEqual({
      content: [{ type: 'text', text: 'Deploy: a canary box first' }],
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
      content: [{ type: 'text', text: 'Deploy: Production\nFeatures: Auth, Billing, audit logs\nDatabase: SQLite' }],
      structuredContent: {
        status: 'answered',
        answers: { answers: { deploy_target: ['Production'], features: ['Auth', 'Billing', 'audit logs'], db: ['SQLite'] } },
      },
    });
  });

  it('skip → no_answer', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [TARGET, DB] });
    const card = await nextCard();
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    expect(await pending).toEqual(NO_ANSWER);
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
    expect((await again).content[0].text).toBe('Database: PostgreSQL');
  });

  it('a card cancelled on the relay → no_answer', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [DB] });
    const card = await nextCard();
    await relay.relay.cancel(card.id);
    expect(await pending).toEqual(NO_ANSWER);
  });

  it('a 40-character header is cut to 12, not refused', async () => {
    const { client } = await connect();
    const pending = call(client, { questions: [{ ...DB, header: `  ${'Database choice for the new service x'.padEnd(40, 'y')}` }] });
    const card = await nextCard();
    expect(card.questions[0].header).toBe('Database cho');
    await answer(card.id, { db: { selected: ['SQLite'] } });
    expect((await pending).content[0].text).toBe('Database cho: SQLite');
  });

  it.each([
    [10, 30],
    [99999, 3600],
    [120.4, 120],
  ])('timeoutSeconds %s → the card waits %s s', async (timeoutSeconds, wait) => {
    const { client } = await connect();
    const pending = call(client, { questions: [DB], timeoutSeconds });
    const card = await nextCard();
    expect(waitSeconds(card)).toBe(wait);
    await relay.relay.cancel(card.id);
    await pending;
  });

  const opts = (...labels: string[]) => labels.map((label) => ({ label }));
  it.each([
    ['four questions', { questions: [DB, { ...DB, id: 'b' }, { ...DB, id: 'c' }, { ...DB, id: 'd' }] }, 'questions has 4 entries; ask at most 3 at once.'],
    ['no questions', { questions: [] }, 'questions is empty; ask 1-3 questions.'],
    ['one option', { questions: [{ ...DB, options: opts('A') }] }, 'questions[0].options has 1 entry; give 2-4.'],
    ['five options', { questions: [{ ...DB, options: opts('A', 'B', 'C', 'D', 'E') }] }, 'questions[0].options has 5 entries; give 2-4.'],
    ['no options', { questions: [{ id: 'name', header: 'Name', question: 'What name?' }] }, 'questions[0].options is required: give 2-4 options.'],
    [
      'a bad id',
      { questions: [{ ...DB, id: 'Deploy-Target' }] },
      'questions[0].id "Deploy-Target" must be snake_case: a lowercase letter, then lowercase letters, digits or "_".',
    ],
    ['no id', { questions: [{ header: 'H', question: 'Q?', options: opts('A', 'B') }] }, 'questions[0].id is required.'],
    ['duplicate ids', { questions: [DB, { ...TARGET, id: 'db' }] }, 'questions[1].id "db" is used twice; ids must be unique.'],
    [
      'duplicate labels ignoring case',
      { questions: [{ ...DB, options: opts('Yes', ' yES ') }] },
      'questions[0].options has the label "yES" twice; labels must be unique within a question (case is ignored).',
    ],
    ['a label of 65 characters', { questions: [{ ...DB, options: opts('A', 'x'.repeat(65)) }] }, 'questions[0].options[1].label is longer than 64 characters.'],
    [
      'an "Other" option',
      { questions: [{ ...DB, options: opts('A', 'Other') }] },
      'questions[0].options[1] "Other" is not allowed: the user can always type their own answer, so leave out "Other".',
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
    ['timeoutSeconds that is a text', { questions: [DB], timeoutSeconds: '900' }, 'timeoutSeconds must be a number of seconds.'],
    ['arguments that are not an object', 'Which database?', 'The arguments must be an object {questions: [...], timeoutSeconds?}.'],
    ['arguments that are a list', [DB], 'The arguments must be an object {questions: [...], timeoutSeconds?}.'],
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
    expect(await pending).toEqual(NO_ANSWER);
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
