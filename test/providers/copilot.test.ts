import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolMessage, lastUserText, startOpenAIServer, toolSchema, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { copilotRelayEnv } from './openai-fixtures.js';

// Copilot / OpenAI through the real @github/copilot-sdk runtime, offline: a BYOK provider
// pointed at the scripted Chat Completions server. What the model reads is taken from the
// server's request log (the `role: "tool"` message after the call).

const COLORS = ['Red', 'Green', 'Blue'];
const TEN = Array.from({ length: 10 }, (_, i) => `Option ${i + 1}`);
const CALLS: Record<string, unknown> = {
  single: { question: 'Which color?', choices: COLORS },
  several: { question: 'Which colors?', choices: COLORS, multi_select: true },
  free: { question: 'Which color?', choices: COLORS },
  empty: { question: 'Anything to add?' },
  ten: { question: 'Pick one', choices: TEN },
  selectAll: { question: 'Which checks? Select all that apply.', choices: ['Lint', 'Test', 'Build'] },
  toggle: { question: 'Which color?', choices: COLORS },
  skip: { question: 'Which color?', choices: COLORS },
  expire: { question: 'Which color?', choices: COLORS },
  manual: { question: 'Which color?', choices: COLORS },
  noQuestion: { choices: COLORS },
  badChoices: { question: 'Which color?', choices: 'Red' },
  multiNone: { question: 'Which colors?', multi_select: true },
  classic: { question: 'Which color?', choices: COLORS },
  classicFree: { question: 'Which color?', choices: COLORS },
  copilotSdk: { question: 'Which color?', choices: COLORS },
  copilotExtension: { question: 'Which color?', choices: COLORS },
};

function model(request: ChatRequest): ScriptedChatReply {
  if (lastToolMessage(request)) return { text: 'ack' };
  const name = /\[case=(\w+)\]/.exec(lastUserText(request))?.[1] ?? '';
  const args = CALLS[name];
  return args ? { toolCalls: [{ name: 'ask_user', arguments: args }] } : { text: `no case ${name}` };
}

let fake: OpenAIServer;
let relay: TestRelay;
let quick: TestRelay;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-home-'));
  fake = await startOpenAIServer({ model });
  const env = copilotRelayEnv(fake.url, home);
  [relay, quick] = await Promise.all([startTestRelay(env), startTestRelay({ ...env, ASKRELAY_WAIT: '300ms', ASKRELAY_WAIT_EXTENSION: '300ms' })]);
});
afterAll(async () => {
  await Promise.all([relay.stop(), quick.stop()]);
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

async function start(name: string, on = relay, extra: Record<string, unknown> = {}): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'openai', engine: 'sdk', model: 'gpt-scripted', prompt: `Help me. [case=${name}]`, ...extra } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const { pendingCard } = sessionApi(() => relay);
/** The tool result the model read for a case, once the session is idle again. */
async function modelRead(session: Session, on = relay): Promise<string> {
  await waitUntil(async () => {
    const s = (await (await on.api(`/api/sessions/${session.id}`)).json()) as Session;
    if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
    return s.status === 'idle';
  }, `${session.id} idle`, 30_000);
  const request = fake.requests.find((r) => r.body?.messages && lastToolMessage(r.body) && JSON.stringify(r.body.messages).includes(caseOf(session)));
  return lastToolMessage(request!.body)!.content;
}
const caseNames = new Map<string, string>();
const caseOf = (s: Session) => `[case=${caseNames.get(s.id)}]`;

async function ask(name: string, answer: Answer | 'skip', extra: Record<string, unknown> = {}) {
  const s = await start(name, relay, extra);
  caseNames.set(s.id, name);
  const card = await pendingCard(s.id);
  if (answer === 'skip') expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
  else expect((await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: answer } })).status).toBe(200);
  return { card, read: await modelRead(s) };
}

describe('sdk engine: askrelay\'s ask_user replaces the built-in one', () => {
  it('the model sees askrelay\'s schema', async () => {
    const { read } = await ask('single', { q1: { selected: ['Green'] } });
    expect(read).toBe('User selected: Green');
    const first = fake.requests.find((r) => r.body?.tools);
    expect(toolSchema(first!.body, 'ask_user')).toMatchObject({ properties: { question: {}, choices: {}, multi_select: {} }, required: ['question'] });
  });

  it.concurrent.each([
    ['several', { q1: { selected: ['Red', 'Blue'] } }, 'User selected: Red, Blue'],
    ['free', { q1: { selected: [], text: 'Purple, please' } }, 'User responded: Purple, please'],
    ['toggle', { q1: { selected: ['Red', 'Green'] } }, 'User selected: Red, Green'],
    ['skip', 'skip', 'The user declined to answer. Proceed with your best judgement and say what you assumed.'],
  ] as const)('%s', async (name, answer, expected) => {
    const { card, read } = await ask(name, answer as unknown as Answer | "skip");
    expect(read).toBe(expected);
    if (name === 'toggle') expect(card).toMatchObject({ selectSeveral: true, questions: [{ multiSelect: false }] });
  });

  it('keeps the first 8 of 10 choices', async () => {
    const { card, read } = await ask('ten', { q1: { selected: ['Option 8'] } });
    expect(card.questions[0].options.map((o) => o.label)).toEqual(TEN.slice(0, 8));
    expect(read).toBe('User selected: Option 8');
  });

  it('"select all that apply" makes the question multi-select', async () => {
    const { card, read } = await ask('selectAll', { q1: { selected: ['Lint', 'Build'] } });
    expect(card.questions[0].multiSelect).toBe(true);
    expect(read).toBe('User selected: Lint, Build');
  });

  it('expiry follows the relay mode', async () => {
    const auto = await start('expire', quick);
    caseNames.set(auto.id, 'expire');
    const manual = await start('manual', quick, { relayMode: 'manual' });
    caseNames.set(manual.id, 'manual');
    expect(await modelRead(auto, quick)).toBe('Nobody answered within the wait. Proceed with your best judgement and say what you assumed.');
    expect(await modelRead(manual, quick)).toBe("Nobody answered within the wait. Stop here and wait for the user's next message; do not guess.");
  });

  it.concurrent.each([
    ['noQuestion', 'Invalid ask_user call: question is required: the text of the question to ask. Fix the arguments and call ask_user again.'],
    ['badChoices', 'Invalid ask_user call: choices must be a list of texts. Fix the arguments and call ask_user again.'],
    ['multiNone', 'Invalid ask_user call: multi_select needs at least 2 choices; none were given. Fix the arguments and call ask_user again.'],
  ])('bad input %s gets a clear tool error and the session goes on', async (name, expected) => {
    const s = await start(name);
    caseNames.set(s.id, name);
    expect(await modelRead(s)).toBe(expected);
    const done = (await (await relay.api(`/api/sessions/${s.id}`)).json()) as Session;
    expect(done.transcript!.at(-1)!.text).toBe('ack');
  });
});

describe('extension engine: Copilot\'s own ask_user passes through', () => {
  it.concurrent.each([
    ['classic', { q1: { selected: ['Blue'] } }, 'User selected: Blue'],
    ['classicFree', { q1: { selected: [], text: 'teal' } }, 'User responded: teal'],
  ] as const)('%s', async (name, answer, expected) => {
    const { card, read } = await ask(name, answer as unknown as Answer, { engine: 'extension' });
    expect(card).toMatchObject({ engine: 'extension', origin: 'native', tool: 'ask_user' });
    expect(Date.parse(card.expiresAt) - Date.parse(card.createdAt)).toBe(2 * 3600_000);
    expect(read).toBe(expected);
  });
});

describe('provider copilot with a BYOK provider (COPILOT_PROVIDER_BASE_URL)', () => {
  it.concurrent.each(['sdk', 'extension'])('the %s engine asks and reads Copilot\'s format', async (engine) => {
    const name = engine === 'sdk' ? 'copilotSdk' : 'copilotExtension';
    const { card, read } = await ask(name, { q1: { selected: ['Red'] } }, { provider: 'copilot', engine });
    expect(card).toMatchObject({ provider: 'copilot', engine });
    expect(read).toBe('User selected: Red');
    const sent = fake.requests.filter((r) => r.headers.authorization === 'Bearer copilot-byok');
    expect(sent.length).toBeGreaterThanOrEqual(2);
  });
});
