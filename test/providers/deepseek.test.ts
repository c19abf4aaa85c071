import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolResult, startAnthropicServer, toolNames, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// DeepSeek through its Anthropic-compatible API: DEEPSEEK_BASE_URL and DEEPSEEK_API_KEY
// (as x-api-key), the default model deepseek-chat, and Claude's own answer formats.

const QUESTION = { questions: [{ question: 'Which database?', header: 'DB', multiSelect: false, options: [{ label: 'PostgreSQL', description: 'p' }, { label: 'SQLite', description: 's' }] }] };
// A prompt with `[relay]` calls the relay tool's list_questions (Claude Code names it mcp__askrelay__list_questions).
const listQuestions = (request: MessagesRequest) => toolNames(request).find((t) => t.endsWith('list_questions')) ?? 'missing';
const model = (request: MessagesRequest): ScriptedReply => {
  const result = lastToolResult(request);
  if (JSON.stringify(request.messages).includes('[relay]')) {
    return result ? { text: `read${result.is_error ? ' (error)' : ''}: ${result.content}` } : { toolUse: { name: listQuestions(request), input: {} } };
  }
  return result ? { text: 'ok' } : { text: 'Asking.', toolUse: { name: 'AskUserQuestion', input: QUESTION } };
};

let fake: AnthropicServer;
let relay: TestRelay;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-deepseek-home-'));
  fake = await startAnthropicServer({ model });
  relay = await startTestRelay({
    DEEPSEEK_BASE_URL: fake.url,
    DEEPSEEK_API_KEY: 'ds-key',
    ANTHROPIC_API_KEY: '',
    HOME: home,
    ASKRELAY_WORKDIR: home,
    CLAUDE_CODE_TOTAL_TOKENS_REMINDER: 'off',
  });
});
afterAll(async () => {
  await relay.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

it.each(['messages', 'code'])('the %s engine asks through DeepSeek and reads Claude Code\'s format', async (engine) => {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'deepseek', engine, prompt: `Pick a database (${engine})` } });
  const session = (await res.json()) as Session;
  expect(res.status).toBe(201);
  expect(session).toMatchObject({ provider: 'deepseek', engine, model: 'deepseek-chat' });
  const card = await waitUntil(
    async () => ((await (await relay.api(`/api/cards?sessionId=${session.id}&status=pending`)).json()) as { cards: Card[] }).cards[0],
    'the card',
    30_000,
  );
  expect(card).toMatchObject({ provider: 'deepseek', tool: 'AskUserQuestion', origin: 'native' });
  await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
  const done = await waitUntil(async () => {
    const s = (await (await relay.api(`/api/sessions/${session.id}`)).json()) as Session;
    return s.status === 'idle' && s.transcript!.at(-1)!.text === 'ok' ? s : undefined;
  }, 'the session to finish', 30_000);
  expect(done.transcript!.find((e) => e.role === 'tool')!.text).toBe(
    'Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.',
  );
  const sent = fake.requests.filter((r) => r.path === '/v1/messages' && JSON.stringify(r.body?.messages ?? '').includes(`(${engine})`));
  expect(sent.length).toBeGreaterThanOrEqual(2);
  for (const r of sent) {
    expect(r.headers['x-api-key']).toBe('ds-key');
    expect(r.headers.authorization).toBeUndefined();
    expect(r.body.model).toBe('deepseek-chat');
  }
}, 60_000);

it.each(['messages', 'code'])('the %s engine offers the relay tool through DeepSeek', async (engine) => {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'deepseek', engine, prompt: `Anyone waiting? [relay] (${engine})` } });
  const session = (await res.json()) as Session;
  const done = await waitUntil(async () => {
    const s = (await (await relay.api(`/api/sessions/${session.id}`)).json()) as Session;
    if (s.status === 'failed') throw new Error(s.error);
    return s.status === 'idle' && s.transcript!.at(-1)!.role === 'assistant' ? s : undefined;
  }, 'the session to finish', 30_000);
  // Nothing is pending that this agent may see: the model reads the relay tool's sentence.
  expect(done.transcript!.at(-1)!.text).toBe('read: No pending questions that you can see.');
  const sent = fake.requests.filter((r) => r.path === '/v1/messages' && JSON.stringify(r.body?.messages ?? '').includes(`[relay] (${engine})`));
  expect(lastToolResult(sent.at(-1)!.body)).toEqual({ tool_use_id: expect.any(String), content: 'No pending questions that you can see.' });
  const prefix = engine === 'code' ? 'mcp__askrelay__' : '';
  for (const r of sent) {
    expect(r.headers['x-api-key']).toBe('ds-key');
    expect(toolNames(r.body)).toEqual(expect.arrayContaining(['AskUserQuestion', ...['list_questions', 'answer_question', 'start_session', 'watch_session'].map((t) => prefix + t)]));
  }
}, 60_000);

it('a session without DEEPSEEK_API_KEY fails with a sentence saying so', async () => {
  const bare = await startTestRelay({ DEEPSEEK_BASE_URL: fake.url, DEEPSEEK_API_KEY: '' });
  try {
    const res = await bare.api('/api/sessions', { method: 'POST', json: { provider: 'deepseek', engine: 'messages', prompt: 'hi' } });
    const { id } = (await res.json()) as Session;
    const failed = await waitUntil(async () => {
      const s = (await (await bare.api(`/api/sessions/${id}`)).json()) as Session;
      return s.status === 'failed' ? s : undefined;
    }, 'the session to fail');
    expect(failed.error).toBe('DEEPSEEK_API_KEY is not set: DeepSeek sessions need it (and DEEPSEEK_BASE_URL for another endpoint).');
  } finally {
    await bare.stop();
  }
});
