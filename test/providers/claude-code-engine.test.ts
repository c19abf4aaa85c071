import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarizeToolInput, toolApprovalDraft, toolDecision } from '../../providers/claude/approvals.js';
import { STOPPED_MESSAGE } from '../../providers/claude/code-tool-calls.js';
import { codeEngine, codeEngineEnv } from '../../providers/claude/engine-code.js';
import type { Answer, Card, RelayMode } from '../../src/cards/model.js';
import { Relay } from '../../src/relay/relay.js';
import { SessionManager } from '../../src/sessions/manager.js';
import type { Session } from '../../src/sessions/model.js';
import type { RunnerFactory } from '../../src/sessions/runner.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import {
  lastToolResult,
  lastUserText,
  startAnthropicServer,
  type AnthropicServer,
  type MessagesRequest,
  type ScriptedReply,
  type ToolDefinition,
  type ToolResult,
} from '../fakes/anthropic-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitUntil } from '../support/wait-until.js';
import { cacheQuestion, dbQuestion } from './claude-fixtures.js';

// The `code` engine end to end: the real Claude Code binary (from @anthropic-ai/claude-agent-sdk)
// against the scripted Messages server, driven by a real SessionManager and Relay on SQLite.
// Cards are answered through the relay; what the model reads is taken from the server's log.
// Claude Code needs 1–2 s per query, so the cases run concurrently.

const MODEL = 'claude-sonnet-5';
const Q = 'Which database?';

const db = dbQuestion;
const cache = cacheQuestion;

const ask = (...questions: unknown[]): ScriptedReply => ({ text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions } } });
const planFileOf = (request: MessagesRequest) => JSON.stringify(request.messages).match(/(\/[^\s"\\]*\/plans\/[^\s"\\]+\.md)/)?.[1];

// What each scenario's model does, one step per tool call (the prompt names the scenario as
// `[scenario=<name>]`). After the last step it acknowledges the last tool_result; a turn
// that starts from typed text after the first one is answered `continued: <text>`.
const STEPS: Record<string, Array<ScriptedReply | ((request: MessagesRequest) => ScriptedReply)>> = {
  // One Claude Code process answers a whole series of cards.
  golden: [ask(db()), ask(db(true)), ask(db(true)), ask(db()), ask(db(), cache), ask(db())],
  expire: [ask(db())],
  late: [ask(db())],
  manual: [ask(db())],
  stop: [ask(db())],
  restart: [ask(db())],
  restartBash: [{ toolUse: { name: 'Bash', input: { command: 'touch allowed-after-restart && ls allowed-after-restart' } } }],
  bash: [
    { toolUse: { name: 'Bash', input: { command: 'touch made-by-askrelay && ls made-by-askrelay', description: 'Make a file' } } },
    { toolUse: { name: 'Bash', input: { command: 'rm -rf build', description: 'Clean up' } } },
  ],
  plan: [
    { toolUse: { name: 'EnterPlanMode', input: {} } },
    (request) => ({ toolUse: { name: 'Write', input: { file_path: planFileOf(request), content: '# Plan\n\n1. Use PostgreSQL\n' } } }),
    { toolUse: { name: 'ExitPlanMode', input: {} } },
    { toolUse: { name: 'ExitPlanMode', input: {} } },
  ],
  // No tool call: the model answers at once; the test reads the tools Claude Code offered.
  offered: [],
  apiError: [{ error: { status: 400, type: 'invalid_request_error', message: 'scripted refusal' } }],
};

const scenarioOf = (request: MessagesRequest) => JSON.stringify(request.messages).match(/\[scenario=(\w+)\]/)?.[1];
const toolCallsSoFar = (request: MessagesRequest) =>
  request.messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')).length;

function model(request: MessagesRequest): ScriptedReply {
  const scenario = scenarioOf(request) ?? '';
  const steps = STEPS[scenario];
  if (!steps) return { text: 'no scenario' };
  const result = lastToolResult(request);
  const typed = lastUserText(request).trim();
  const done = toolCallsSoFar(request);
  // Told after a restart that its Bash call was allowed, the model makes it again.
  if (scenario === 'restartBash' && typed.startsWith('(askrelay restarted')) return steps[0] as ScriptedReply;
  if (done > 0 && typed) return { text: `continued: ${typed}` };
  const step = steps[done];
  if (!step) return { text: `ack ${result?.is_error ? 'error' : 'ok'}` };
  return typeof step === 'function' ? step(request) : step;
}

let fake: AnthropicServer;
let root: string;
let env: NodeJS.ProcessEnv;

const factory = (): RunnerFactory => ({
  engines: ['code'],
  defaultModel: () => MODEL,
  create: (ctx) => codeEngine(ctx, { baseUrl: fake.url, apiKey: 'dummy', model: MODEL }),
});

interface Harness {
  store: SqliteStore;
  relay: Relay;
  sessions: SessionManager;
  close(): Promise<void>;
}

async function harness(file: string, waitMs: number, clock?: FakeClock): Promise<Harness> {
  const store = new SqliteStore(file);
  const relay = new Relay({ store: asyncCards(store), waits: { default: waitMs }, ...(clock ? { clock } : {}) });
  await relay.start();
  const sessions = new SessionManager({ relay, store: asyncSessions(store.sessions), providers: { claude: factory() }, env });
  await sessions.recover();
  return {
    store,
    relay,
    sessions,
    async close() {
      await sessions.close();
      relay.stop();
      store.close();
    },
  };
}

let main: Harness;
/** Its cards expire when the test moves its clock past QUICK_WAIT_MS. */
let quick: Harness;
const quickClock = new FakeClock(Date.now());
// The manual and late-answer cases have their own: the cases run at once, and a clock moved by
// one would expire another's card before that one saw it open (a loaded run timed out so).
let manualHarness: Harness;
const manualClock = new FakeClock(Date.now());
let lateHarness: Harness;
const lateClock = new FakeClock(Date.now());
const QUICK_WAIT_MS = 60_000;

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
  root = mkdtempSync(join(tmpdir(), 'askrelay-claude-code-'));
  mkdirSync(join(root, 'home'));
  mkdirSync(join(root, 'work'));
  env = {
    PATH: process.env.PATH,
    HOME: join(root, 'home'),
    CLAUDE_CODE_TOTAL_TOKENS_REMINDER: 'off',
    ASKRELAY_WORKDIR: join(root, 'work'),
    ASKRELAY_TOKEN: 'must-not-reach-claude-code',
  };
  main = await harness(join(root, 'main.sqlite'), 3_600_000);
  quick = await harness(join(root, 'quick.sqlite'), QUICK_WAIT_MS, quickClock);
  manualHarness = await harness(join(root, 'manual.sqlite'), QUICK_WAIT_MS, manualClock);
  lateHarness = await harness(join(root, 'late.sqlite'), QUICK_WAIT_MS, lateClock);
});

afterAll(async () => {
  await main?.close();
  await quick?.close();
  await manualHarness?.close();
  await lateHarness?.close();
  await fake?.close();
  rmSync(root, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------

function start(h: Harness, scenario: string, relayMode: RelayMode = 'autopilot'): Promise<Session> {
  return h.sessions.start({ provider: 'claude', prompt: `Pick a database. [scenario=${scenario}]`, relayMode });
}

const sessionOf = (h: Harness, id: string) => h.sessions.get(id);
async function failed(h: Harness, id: string): Promise<void> {
  const s = await sessionOf(h, id);
  if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
}
const pendingCard = (h: Harness, id: string) =>
  waitUntil(async () => {
    await failed(h, id);
    return (await h.relay.list({ sessionId: id, status: 'pending' }))[0];
  }, `a card of ${id}`);
const idle = (h: Harness, id: string) =>
  waitUntil(async () => {
    await failed(h, id);
    const s = await sessionOf(h, id);
    return s.status === 'idle' ? s : undefined;
  }, `${id} idle`);

/** Requests of one scenario (its marker is in every request of the conversation). */
const requestsOf = (scenario: string) => fake.requests.filter((r) => r.body?.messages && scenarioOf(r.body) === scenario).map((r) => r.body as MessagesRequest);
const toolResultsOf = (scenario: string): ToolResult[] =>
  requestsOf(scenario)
    .map((r) => lastToolResult(r))
    .filter((t): t is ToolResult => t !== undefined);
const waitForToolResult = (scenario: string, match: (t: ToolResult) => boolean = () => true) =>
  waitUntil(() => toolResultsOf(scenario).find(match), `a tool_result in ${scenario}`);

/** Answers the card: for each question (in order) either picked labels or typed text. */
function answerOf(card: Card, entries: Array<string[] | { text: string }>): Answer {
  return Object.fromEntries(
    card.questions.map((q, i) => {
      const e = entries[i]!;
      return [q.id, Array.isArray(e) ? { selected: e } : { selected: [], text: e.text }];
    }),
  );
}

const ANSWERED = (pairs: string) => `Your questions have been answered: ${pairs}. You can now continue with these answers in mind.`;
const USER_ANSWERED = (pairs: string) =>
  `The user answered: ${pairs}. Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.`;
const NO_ANSWER = 'The user did not answer the questions.';

// ---------------------------------------------------------------------------

/** The next pending card of a session that is not one of `seen`. */
const nextCard = (h: Harness, id: string, seen: Set<string>) =>
  waitUntil(async () => {
    failed(h, id);
    const card = (await h.relay.list({ sessionId: id, status: 'pending' })).find((c) => !seen.has(c.id));
    if (card) seen.add(card.id);
    return card;
  }, `the next card of ${id}`);

// Ten Claude Code processes start at once: on a small, busy machine a case takes tens of seconds.
describe.concurrent('the code engine: real Claude Code, real relay', { timeout: 90_000 }, () => {
  it('Claude Code offers the model exactly the AskUserQuestion definition in golden/claude-code-ask-user-question.json', async () => {
    // The relay's messages engine offers ASK_USER_QUESTION_TOOL, which claude-adapter.test.ts
    // compares with the same file: a Claude Code upgrade that changes its definition fails here.
    const golden = JSON.parse(readFileSync(new URL('./golden/claude-code-ask-user-question.json', import.meta.url), 'utf8')) as { tool: ToolDefinition };
    const s = await start(main, 'offered');
    await idle(main, s.id);
    const withTools = requestsOf('offered').filter((r) => r.tools?.length);
    expect(withTools.length).toBeGreaterThan(0);
    for (const request of withTools) {
      const offered = request.tools!.filter((t) => t.name === 'AskUserQuestion');
      expect(offered).toHaveLength(1);
      expect(offered[0]).toEqual(golden.tool);
      expect(JSON.stringify(offered[0])).toBe(JSON.stringify(golden.tool)); // key order too
    }
  });

  it('AskUserQuestion: the exact tool_result Claude Code sends for each kind of answer', async () => {
    const cases: Array<[string, (card: Card) => Promise<Card>, string]> = [
      ['single', (c) => main.relay.answer(c.id, answerOf(c, [['PostgreSQL']])), ANSWERED('"Which database?"="PostgreSQL"')],
      ['multi', (c) => main.relay.answer(c.id, answerOf(c, [['PostgreSQL', 'SQLite']])), ANSWERED('"Which database?"="PostgreSQL, SQLite"')],
      ['comma', (c) => main.relay.answer(c.id, answerOf(c, [['PostgreSQL', 'MySQL, MariaDB']])), ANSWERED('"Which database?"="PostgreSQL, "MySQL, MariaDB""')],
      ['free', (c) => main.relay.answer(c.id, answerOf(c, [{ text: 'Use DuckDB instead' }])), USER_ANSWERED('"Which database?"="Use DuckDB instead"')],
      ['several', (c) => main.relay.answer(c.id, answerOf(c, [['SQLite'], ['Redis']])), ANSWERED('"Which database?"="SQLite", "Which cache?"="Redis"')],
      ['skip', (c) => main.relay.skip(c.id), NO_ANSWER],
    ];
    const s = await start(main, 'golden');
    const seen = new Set<string>();
    const cardIds: string[] = [];
    for (const [name, answer, expected] of cases) {
      const card = await nextCard(main, s.id, seen);
      cardIds.push(card.id);
      expect(card, name).toMatchObject({ provider: 'claude', engine: 'code', tool: 'AskUserQuestion', kind: 'question', origin: 'native', sessionId: s.id });
      expect((await sessionOf(main, s.id)).status).toBe('waiting');
      await answer(card);
      const result = await waitUntil(() => toolResultsOf('golden')[cardIds.length - 1], `the tool_result for ${name}`);
      expect(result.content, name).toBe(expected);
      expect(result.is_error, name).toBeUndefined();
    }
    const done = await idle(main, s.id);
    const tools = done.transcript!.filter((e) => e.role === 'tool');
    expect(tools.map((e) => e.text)).toEqual(cases.map(([, , expected]) => expected));
    expect(tools.map((e) => e.cardId)).toEqual(cardIds);
    expect(done.transcript![1]).toMatchObject({ role: 'assistant', text: 'Let me ask.' });
    expect(done.transcript!.at(-1)).toMatchObject({ role: 'assistant', text: 'ack ok' });
  });

  it('expiry in autopilot: nobody answered, the turn goes on', async () => {
    const s = await start(quick, 'expire', 'autopilot');
    const card = await pendingCard(quick, s.id);
    quickClock.advance(QUICK_WAIT_MS);
    const done = await idle(quick, s.id);
    expect((await quick.relay.get(card.id)).status).toBe('expired');
    expect(toolResultsOf('expire').map((t) => t.content)).toEqual([NO_ANSWER]);
    expect(done.transcript!.at(-1)!.text).toBe('ack ok');
  });

  it('a late answer after the expiry is the next turn\'s user message, in the words every provider reads', async () => {
    const s = await start(lateHarness, 'late', 'autopilot');
    const card = await pendingCard(lateHarness, s.id);
    lateClock.advance(QUICK_WAIT_MS);
    await idle(lateHarness, s.id);
    const expiredAt = `${(await lateHarness.relay.get(card.id)).expiresAt.slice(11, 16)} UTC`;
    await lateHarness.relay.answerLate(card.id, answerOf(card, [['SQLite']]));
    const late = `Late answer to your question "${Q}" (it expired at ${expiredAt}; you went on without it): SQLite.`;
    const after = await waitUntil(async () => {
      await failed(lateHarness, s.id);
      const x = await sessionOf(lateHarness, s.id);
      return x.status === 'idle' && x.transcript!.at(-1)!.text === `continued: ${late}` ? x : undefined;
    }, 'the late answer\'s turn');
    expect(lastUserText(requestsOf('late').at(-1)!)).toBe(late);
    expect(after.transcript!.at(-2)).toMatchObject({ role: 'user', text: late });
    expect((await lateHarness.relay.get(card.id)).delivery).toMatchObject({ state: 'delivered', to: 'session' });
  });

  it('expiry in manual mode ends the turn (no further model request); the next message continues', async () => {
    const s = await start(manualHarness, 'manual', 'manual');
    await pendingCard(manualHarness, s.id);
    manualClock.advance(QUICK_WAIT_MS);
    const done = await idle(manualHarness, s.id);
    expect(requestsOf('manual')).toHaveLength(1); // only the ask: the model was not asked to go on
    expect(done.transcript!.map((e) => e.role)).toEqual(['user', 'assistant', 'tool']);
    expect(done.transcript!.at(-1)!.text).toBe(NO_ANSWER);

    await manualHarness.sessions.message(s.id, 'Use SQLite.');
    const after = await waitUntil(async () => {
      await failed(manualHarness, s.id);
      const x = await sessionOf(manualHarness, s.id);
      return x.status === 'idle' && x.transcript!.at(-1)!.role === 'assistant' ? x : undefined;
    }, 'the next turn');
    const next = requestsOf('manual')[1]!;
    expect(lastToolResult(next)?.content).toBe(NO_ANSWER);
    expect(lastUserText(next)).toBe('Use SQLite.');
    // MANUAL_EXPIRY_STOP in providers/claude/code-tool-calls.ts, written out so a change to it is noticed.
    expect(JSON.stringify(next.messages)).toContain("Nobody answered in time and askrelay is in manual mode, so the turn ended to wait for the user's next message.");
    expect(after.transcript!.at(-1)!.text).toBe('continued: Use SQLite.');
  });

  it('stopping the session cancels its pending card', async () => {
    const s = await start(main, 'stop');
    const card = await pendingCard(main, s.id);
    const stopped = await main.sessions.stop(s.id);
    expect(stopped.status).toBe('stopped');
    expect((await main.relay.get(card.id)).status).toBe('cancelled');
    // stop() returned once Claude Code's query had ended; what the ended turn does next are
    // promise continuations on the in-process store, all run before the next pass of the event loop.
    await new Promise((r) => setImmediate(r));
    expect((await sessionOf(main, s.id)).status).toBe('stopped');
    expect(requestsOf('stop')).toHaveLength(1);
  });

  it('an API error fails the session with a clear message', async () => {
    const s = await start(main, 'apiError');
    const failedSession = await waitUntil(async () => {
      const x = await sessionOf(main, s.id);
      return x.status === 'failed' ? x : undefined;
    }, 'the session failing');
    expect(failedSession.error).toMatch(/^Claude Code reported an error: .*scripted refusal/);
  });

  it('other tools (Bash) need an approval card: Allow runs the call, a denial carries what the user typed', async () => {
    const s = await start(main, 'bash');
    const seen = new Set<string>();
    const allow = await nextCard(main, s.id, seen);
    expect(allow).toMatchObject({
      kind: 'approval',
      tool: 'Bash',
      questions: [{ text: 'Allow Bash?\n\nMake a file\n$ touch made-by-askrelay && ls made-by-askrelay', options: [{ label: 'Allow' }, { label: 'Deny' }] }],
    });
    await main.relay.answer(allow.id, { [allow.questions[0]!.id]: { selected: ['Allow'] } });
    expect(await waitForToolResult('bash')).toEqual({ tool_use_id: expect.any(String), content: 'made-by-askrelay', is_error: false });

    const deny = await nextCard(main, s.id, seen);
    await main.relay.answer(deny.id, { [deny.questions[0]!.id]: { selected: ['Deny'], text: 'not now' } });
    expect(await waitForToolResult('bash', (t) => t.is_error === true)).toMatchObject({
      content: 'The user denied this tool use. The user said: not now',
      is_error: true,
    });
    await idle(main, s.id);
  });

  it('ExitPlanMode becomes a plan approval card: "Keep planning" denies (still in plan mode), "Approve" approves', async () => {
    const s = await start(main, 'plan');
    const seen = new Set<string>();
    const first = await nextCard(main, s.id, seen);
    expect(first).toMatchObject({ kind: 'approval', tool: 'ExitPlanMode', questions: [{ text: 'Approve this plan?\n\n# Plan\n\n1. Use PostgreSQL' }] });
    await main.relay.answer(first.id, { plan: { selected: ['Keep planning'], text: 'Use SQLite instead' } });
    expect(await waitForToolResult('plan', (t) => t.is_error === true)).toMatchObject({
      content: 'The user wants to keep planning. Their feedback: Use SQLite instead',
    });

    const second = await nextCard(main, s.id, seen);
    await main.relay.answer(second.id, { plan: { selected: ['Approve'] } });
    const approved = await waitForToolResult('plan', (t) => t.content.startsWith('User has approved'));
    expect(approved.content).toMatch(
      /^User has approved your plan\. You can now start coding\. Start with updating your todo list if applicable\n\nYour plan has been saved to: \/.*\.md\nYou can refer back to it if needed during implementation\.\n\n## Approved Plan:\n# Plan\n\n1\. Use PostgreSQL\n$/,
    );
    await idle(main, s.id);
  });

  it('a restart while a question is open: the resumed Claude Code session gets the answer in its prompt', async () => {
    const file = join(root, 'restart.sqlite');
    const first = await harness(file, 3_600_000);
    const s = await start(first, 'restart');
    const card = await pendingCard(first, s.id);
    const state = first.store.sessions.loadState<Record<string, unknown>>(s.id)!;
    expect(state).toMatchObject({ claudeSessionId: expect.any(String), pendingToolUseId: expect.stringMatching(/^toolu_/), pendingTool: 'AskUserQuestion' });
    await first.close();

    const second = await harness(file, 3_600_000);
    try {
      await waitUntil(async () => (await second.sessions.get(s.id)).status === 'waiting', 'the resumed session waiting on its card');
      expect(await second.relay.list({ sessionId: s.id })).toHaveLength(1);
      await second.relay.answer(card.id, answerOf(card, [['PostgreSQL']]));
      const done = await waitUntil(async () => {
        await failed(second, s.id);
        const x = await second.sessions.get(s.id);
        return x.status === 'idle' && x.transcript!.at(-1)!.role === 'assistant' ? x : undefined;
      }, 'the resumed turn');
      // RESTART_ANSWER_PREFIX in providers/claude/code-resume.ts, written out so a change to it is noticed.
      const expected = `(askrelay restarted while your question was open. The user's answer:)\n${ANSWERED('"Which database?"="PostgreSQL"')}`;
      const resumed = requestsOf('restart').at(-1)!;
      expect(lastUserText(resumed)).toBe(expected);
      expect(done.transcript!.at(-2)).toMatchObject({ role: 'tool', text: expected, cardId: card.id });
      expect(done.transcript!.at(-1)!.text).toBe(`continued: ${expected}`);
      expect(second.store.sessions.loadState<Record<string, unknown>>(s.id)).toEqual({ claudeSessionId: state.claudeSessionId });
      // The same Claude Code session, resumed: its history (the original ask) came along.
      const raw = fake.requests.filter((r) => r.body?.messages && scenarioOf(r.body) === 'restart').at(-1)!;
      expect(raw.headers['x-claude-code-session-id']).toBe(state.claudeSessionId);
      expect(JSON.stringify(resumed.messages)).toContain('"name":"AskUserQuestion"');
    } finally {
      await second.close();
    }
  });
  it('a restart while a tool approval is open: the answer goes into the prompt, and the repeated call runs without a second card', async () => {
    const file = join(root, 'restart-bash.sqlite');
    const first = await harness(file, 3_600_000);
    const s = await start(first, 'restartBash');
    const card = await pendingCard(first, s.id);
    expect(card).toMatchObject({ kind: 'approval', tool: 'Bash' });
    await first.close();

    const second = await harness(file, 3_600_000);
    try {
      await waitUntil(async () => (await second.sessions.get(s.id)).status === 'waiting', 'the resumed session waiting on its card');
      await second.relay.answer(card.id, { [card.questions[0]!.id]: { selected: ['Allow'] } });
      await waitUntil(async () => {
        await failed(second, s.id);
        const x = await second.sessions.get(s.id);
        return x.status === 'idle' && x.transcript!.at(-1)!.text === 'ack ok' ? x : undefined;
      }, 'the resumed turn');
      const prompts = requestsOf('restartBash').map((r) => lastUserText(r));
      expect(prompts).toContain('(askrelay restarted while your Bash call was waiting for approval.)\nThe user allowed it: make the Bash call again.');
      expect(toolResultsOf('restartBash').at(-1)).toMatchObject({ content: 'allowed-after-restart', is_error: false });
      expect(await second.relay.list({ sessionId: s.id })).toHaveLength(1); // no second card
    } finally {
      await second.close();
    }
  });
});

describe('pure parts', () => {
  it("Claude Code's environment: the agent's (the session's token and URL, no other ASKRELAY_*), plus the endpoint and the quiet switches", () => {
    const ctxEnv = { PATH: '/bin', HOME: '/h', ASKRELAY_TOKEN: 'asa_session', ASKRELAY_URL: 'http://r/', ASKRELAY_AUDIT_KEY: 'operator', ANTHROPIC_API_KEY: 'old', EMPTY: undefined };
    const out = codeEngineEnv(ctxEnv, { baseUrl: 'http://x', apiKey: 'k', model: 'm' });
    expect(out).toEqual({
      PATH: '/bin',
      HOME: '/h',
      ASKRELAY_TOKEN: 'asa_session',
      ASKRELAY_URL: 'http://r/',
      ANTHROPIC_BASE_URL: 'http://x',
      ANTHROPIC_API_KEY: 'k',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
    });
  });

  it('summarizes commands, files and anything else, cut to ~1500 characters', () => {
    expect(summarizeToolInput('Bash', { command: 'ls -la' })).toBe('$ ls -la');
    expect(summarizeToolInput('Write', { file_path: '/x/a.txt', content: 'hello' })).toBe('/x/a.txt\n\nhello');
    expect(summarizeToolInput('Edit', { file_path: '/x/a.txt', old_string: 'a', new_string: 'b' })).toBe('/x/a.txt\n\n- a\n+ b');
    expect(summarizeToolInput('Other', { a: 1 })).toBe('{\n  "a": 1\n}');
    expect(summarizeToolInput('Bash', { command: 'x'.repeat(5000) })).toHaveLength(1500);
  });

  it('allows only on Allow; a denial carries what the user typed', () => {
    const draft = toolApprovalDraft('Bash', { command: 'ls' });
    expect(draft).toMatchObject({ kind: 'approval', tool: 'Bash', questions: [{ text: 'Allow Bash?\n\n$ ls' }] });
    const card = (status: Card['status'], answer?: Answer) => ({ status, relayMode: 'autopilot', answer }) as Card;
    expect(toolDecision({ command: 'ls' }, card('answered', { approve: { selected: ['Allow'] } }))).toEqual({ behavior: 'allow', updatedInput: { command: 'ls' } });
    expect(toolDecision({}, card('answered', { approve: { selected: ['Deny'] } }))).toEqual({ behavior: 'deny', message: 'The user denied this tool use.' });
    expect(toolDecision({}, card('answered', { approve: { selected: [], text: 'use make clean' } }))).toEqual({
      behavior: 'deny',
      message: 'The user denied this tool use. The user said: use make clean',
    });
    expect(toolDecision({}, card('skipped'))).toEqual({ behavior: 'deny', message: 'The user denied this tool use.' });
    expect(toolDecision({}, card('expired')).behavior).toBe('deny');
    expect(STOPPED_MESSAGE).toBe('The session was stopped.');
  });
});

