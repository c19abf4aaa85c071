import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import {
  API_ERRORS,
  lastToolResult,
  startAnthropicServer,
  type AnthropicServer,
  type LoggedRequest,
  type ScriptedReply,
  type ScriptStep,
} from '../fakes/anthropic-server.js';
import { freePort } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { casesModel, dbQuestion, tagOf } from './claude-fixtures.js';

// What the `messages` engine (@anthropic-ai/sdk, maxRetries 2) does when the model API fails,
// for Claude and for DeepSeek's Anthropic-compatible API: which failures the SDK retries (the
// session carries on), and the sentence a session fails with otherwise
// (docs/providers/claude.md, "Errors"). Every session first asks a question that is answered,
// so each case also shows that an answered card stays answered when the session fails.

const PROVIDERS = [
  { provider: 'claude', baseVar: 'ANTHROPIC_BASE_URL', keyVar: 'ANTHROPIC_API_KEY' },
  { provider: 'deepseek', baseVar: 'DEEPSEEK_BASE_URL', keyVar: 'DEEPSEEK_API_KEY' },
] as const;

const ASK: ScriptedReply = { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [dbQuestion()] } } };
const ANSWERED = 'Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.';
const CARRIED_ON = 'Going on with SQLite.';
const REPLY = 'A reply the API does not finish.';
// The SDK waits `retry-after-ms` before a retry (it reads it before `retry-after`): a short
// one keeps its own back-off (0.5 s, then 1 s) out of the test.
const quick = (reply: ScriptedReply): ScriptedReply => ({ error: { ...reply.error!, headers: { 'retry-after-ms': '5' } } });
// Not merely cut short: the SDK's own MessageStream throws on it while it streams.
const BROKEN_JSON = '{"questions": [ {"question": "Which database?", oops}';
const times = (n: number, step: ScriptedReply) => Array.from({ length: n }, () => step);

interface Case {
  name: string;
  /** What the API answers once the card is answered, one step per request. */
  failure: ScriptStep[];
  /** The sentence the session fails with (`base`: the provider's base URL); none: it carries on. */
  error?: (base: string) => string;
}

const CASES: Case[] = [
  // retry-after 0: the SDK falls back to its own first back-off, under half a second.
  { name: '429 with retry-after, retried', failure: [API_ERRORS.rateLimit(0)] },
  { name: '500, retried', failure: [quick(API_ERRORS.internal())] },
  { name: '529, retried', failure: [quick(API_ERRORS.overloaded())] },
  {
    name: '429 until the retries run out',
    failure: times(3, quick(API_ERRORS.rateLimit(0))),
    error: (base) => `The model API at ${base} answered 429: rate_limit_error: Number of request tokens has exceeded your per-minute rate limit.`,
  },
  { name: '500 until the retries run out', failure: times(3, quick(API_ERRORS.internal())), error: (base) => `The model API at ${base} answered 500: api_error: Internal server error` },
  { name: '529 until the retries run out', failure: times(3, quick(API_ERRORS.overloaded())), error: (base) => `The model API at ${base} answered 529: overloaded_error: Overloaded` },
  {
    name: 'an error event in the stream',
    failure: [{ text: REPLY, streamError: { afterEvents: 4, type: 'overloaded_error', message: 'Overloaded' } }],
    error: (base) => `The model API at ${base} broke off its reply with an error: overloaded_error: Overloaded`,
  },
  { name: 'a stream cut in the middle', failure: [{ text: REPLY, cutAfterEvents: 4 }], error: (base) => `The model API at ${base} broke off its reply: other side closed` },
];

let fake: AnthropicServer;
let relay: TestRelay;
const api = sessionApi(() => relay);
const requestsOf = (tag: string): LoggedRequest[] => fake.requests.filter((r) => tagOf(r.body ?? {}) === tag);

beforeAll(async () => {
  const scripts: Record<string, ScriptStep[]> = Object.fromEntries(CASES.map((c) => [c.name, [ASK, ...c.failure, CARRIED_ON]]));
  scripts['broken json'] = [{ text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: {}, rawJson: BROKEN_JSON } }, (r) => `read: ${lastToolResult(r)?.content}`];
  scripts['unknown tool'] = [{ text: 'Let me look.', toolUse: { name: 'Bash', input: { command: 'ls' } } }, (r) => `read: ${lastToolResult(r)?.content}`];
  fake = await startAnthropicServer({ model: casesModel(scripts), apiKey: 'sk-test', bearer: false });
  const env: Record<string, string> = { ASKRELAY_WAIT: '1h' };
  for (const p of PROVIDERS) Object.assign(env, { [p.baseVar]: fake.url, [p.keyVar]: 'sk-test' });
  relay = await startTestRelay(env);
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

async function start(provider: string, prompt: string, on = relay): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider, engine: 'messages', prompt } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}

const failed = (id: string, on = relay) =>
  waitUntil(async () => {
    const s = await api.session(id, on);
    return s.status === 'failed' ? s : undefined;
  }, `${id} to fail`);

describe.each(PROVIDERS)('$provider, engine messages', ({ provider }) => {
  it.each(CASES)('$name', async ({ name, failure, error }) => {
    const tag = `${name}/${provider}`;
    const session = await start(provider, `Pick a database [case:${tag}]`);
    const card = await api.pendingCard(session.id);
    expect((await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } })).status).toBe(200);

    const done = error ? await failed(session.id) : await api.idleWith(session.id, CARRIED_ON);
    const roles = done.transcript!.map((e) => `${e.role}: ${e.text}`);
    const asked = [`user: Pick a database [case:${tag}]`, 'assistant: Let me ask.', `tool: ${ANSWERED}`];
    if (error) {
      expect(done.error).toBe(error(fake.url));
      expect(roles).toEqual(asked); // the broken-off reply left nothing behind
    } else {
      expect(done.error).toBeUndefined();
      expect(roles).toEqual([...asked, `assistant: ${CARRIED_ON}`]);
    }
    // The answer given before the failure stands.
    const after = (await (await relay.api(`/api/cards/${card.id}`)).json()) as Card;
    expect(after).toMatchObject({ status: 'answered', answer: { q1: { selected: ['SQLite'] } } });

    // The SDK retried each HTTP error with the same request (maxRetries 2); a stream that had
    // begun is not retried.
    const sent = requestsOf(tag);
    const afterAnswer = sent.slice(1);
    const httpErrors = failure.every((step) => typeof step === 'object' && 'error' in step);
    expect(afterAnswer).toHaveLength(!error ? failure.length + 1 : httpErrors ? 3 : 1);
    expect(afterAnswer.map((r) => r.headers['x-stainless-retry-count'])).toEqual(afterAnswer.map((_, i) => String(i)));
    for (const r of afterAnswer) {
      expect(r.body.messages).toEqual(afterAnswer[0]!.body.messages);
      expect(lastToolResult(r.body)?.content).toBe(ANSWERED);
    }
  });

  it('tool input that is not JSON gets an InputValidationError tool_result and the session goes on', async () => {
    const tag = `broken json/${provider}`;
    const session = await start(provider, `Pick a database [case:${tag}]`);
    const refusal = `<tool_use_error>InputValidationError: the tool input is not valid JSON: ${BROKEN_JSON}</tool_use_error>`;
    const done = await api.done(session.id);
    expect(done.transcript!.map((e) => `${e.role}: ${e.text}`)).toEqual([`user: Pick a database [case:${tag}]`, 'assistant: Let me ask.', `tool: ${refusal}`, `assistant: read: ${refusal}`]);
    const [, answered] = requestsOf(tag);
    // The call is kept as the model sent it; the tool_result says what was wrong.
    expect(answered!.body.messages[1].content[1]).toMatchObject({ type: 'tool_use', name: 'AskUserQuestion', input: { __invalid_json__: BROKEN_JSON } });
    expect(answered!.body.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: answered!.body.messages[1].content[1].id, content: refusal, is_error: true }]);
    expect(await api.cardsOf(session.id)).toEqual([]);
  });

  it('a call to a tool the engine does not have gets "No such tool available" and the session goes on', async () => {
    const tag = `unknown tool/${provider}`;
    const session = await start(provider, `List the files [case:${tag}]`);
    const NO_SUCH_TOOL = '<tool_use_error>Error: No such tool available: Bash</tool_use_error>';
    const done = await api.done(session.id);
    expect(done.transcript!.map((e) => `${e.role}: ${e.text}`)).toEqual([`user: List the files [case:${tag}]`, 'assistant: Let me look.', `assistant: read: ${NO_SUCH_TOOL}`]);
    const [, answered] = requestsOf(tag);
    const call = answered!.body.messages[1].content.find((b: { type: string }) => b.type === 'tool_use');
    expect(call).toMatchObject({ name: 'Bash', input: { command: 'ls' } });
    // Byte for byte, the block the model reads.
    expect(JSON.stringify(answered!.body.messages.at(-1))).toBe(
      `{"role":"user","content":[{"type":"tool_result","tool_use_id":"${call.id}","content":"${NO_SUCH_TOOL}","is_error":true}]}`,
    );
    expect(await api.cardsOf(session.id)).toEqual([]);
  });

});

it('an endpoint that refuses the connection fails each session with "could not be reached" after the retries', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {};
  for (const p of PROVIDERS) Object.assign(env, { [p.baseVar]: base, [p.keyVar]: 'sk-test' });
  const closed = await startTestRelay(env);
  try {
    // Both at once: each waits out the SDK's back-off (0.5 s, then 1 s) before it gives up.
    const sessions = await Promise.all(PROVIDERS.map((p) => start(p.provider, 'Pick a database', closed)));
    for (const session of sessions) {
      const done = await failed(session.id, closed);
      expect(done.error).toBe(`The model API at ${base} could not be reached: connect ECONNREFUSED 127.0.0.1:${port}`);
      expect(done.transcript!.map((e) => e.role)).toEqual(['user']);
    }
  } finally {
    await closed.stop();
  }
});
