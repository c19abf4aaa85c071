import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import {
  lastToolResult,
  lastUserText,
  startAnthropicServer,
  type AnthropicServer,
  type MessagesRequest,
  type ScriptedReply,
} from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';
import { dbQuestion } from './claude-fixtures.js';

// The `messages` engine end to end: the real @anthropic-ai/sdk client against the
// scripted Messages server, sessions started through the HTTP API, cards answered
// through the HTTP API, and what the model reads taken from the server's request log.

const db = dbQuestion;

// Each session's prompt names the tool input its model sends first.
const INPUTS: Record<string, unknown> = {
  single: { questions: [db()] },
  multi: { questions: [db(true)] },
  free: { questions: [db()] },
  several: { questions: [db(), { question: 'Which cache?', header: 'Cache', options: [{ label: 'Redis', description: 'r' }, { label: 'None', description: 'n' }], multiSelect: false }] },
  skip: { questions: [db()] },
  expire: { questions: [db()] },
  manual: { questions: [db()] },
  restart: { questions: [db()] },
  none: { questions: [] },
  five: { questions: Array.from({ length: 5 }, (_, i) => ({ ...db(), question: `Q${i}?` })) },
  oneOption: { questions: [{ ...db(), options: [{ label: 'Only', description: 'x' }] }] },
  dupText: { questions: [db(), db()] },
  missing: { questions: [{ header: 'X', options: db().options }] },
};

function model(request: MessagesRequest): ScriptedReply {
  const result = lastToolResult(request);
  if (result) return { text: `ack ${result.is_error ? 'error' : 'ok'}` };
  const prompt = lastUserText(request);
  if (prompt.startsWith('after')) return { text: `continued: ${prompt}` };
  if (prompt === 'badjson') return { toolUse: { name: 'AskUserQuestion', input: {}, rawJson: '{"questions": [{"question": "Which' } };
  const input = INPUTS[prompt];
  return input ? { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input } } : { text: `no scenario ${prompt}` };
}

let fake: AnthropicServer;
let relay: TestRelay;
const env = () => ({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
  relay = await startTestRelay(env());
});
afterAll(async () => {
  await relay.stop();
  await fake.close();
});

async function start(prompt: string, on = relay, extra: Record<string, unknown> = {}): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt, ...extra } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}

const session = async (id: string, on = relay) => (await (await on.api(`/api/sessions/${id}`)).json()) as Session;
const pendingCard = (id: string, on = relay) =>
  waitUntil(async () => ((await (await on.api(`/api/cards?sessionId=${id}&status=pending`)).json()) as { cards: Card[] }).cards[0], `a card of ${id}`);
const idle = (id: string, on = relay) => waitUntil(async () => ((await session(id, on)).status === 'idle' ? session(id, on) : undefined), `${id} idle`);

async function askAndAnswer(prompt: string, answers: unknown) {
  const s = await start(prompt);
  const card = await pendingCard(s.id);
  expect(card).toMatchObject({ provider: 'claude', engine: 'messages', tool: 'AskUserQuestion', origin: 'native', layout: 'steps', sessionId: s.id });
  expect((await session(s.id)).status).toBe('waiting');
  const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
  const done = await idle(s.id);
  return { session: done, card };
}

function toolResultOf(s: Session): string {
  const entry = s.transcript!.find((e) => e.role === 'tool');
  return entry!.text;
}

describe('the messages engine answers AskUserQuestion as Claude Code would', () => {
  it.each([
    ['single', { q1: { selected: ['PostgreSQL'] } }, 'Your questions have been answered: "Which database?"="PostgreSQL". You can now continue with these answers in mind.'],
    ['multi', { q1: { selected: ['PostgreSQL', 'MySQL, MariaDB'] } }, 'Your questions have been answered: "Which database?"="PostgreSQL, "MySQL, MariaDB"". You can now continue with these answers in mind.'],
    ['free', { q1: { selected: [], text: 'Use DuckDB instead' } }, 'The user answered: "Which database?"="Use DuckDB instead". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.'],
    ['several', { q1: { selected: ['SQLite'] }, q2: { selected: ['Redis'] } }, 'Your questions have been answered: "Which database?"="SQLite", "Which cache?"="Redis". You can now continue with these answers in mind.'],
  ])('%s', async (prompt, answers, expected) => {
    const { session: s } = await askAndAnswer(prompt, answers);
    const sent = fake.requests.filter((r) => r.body?.messages).map((r) => lastToolResult(r.body)).filter(Boolean);
    expect(sent.map((t) => t!.content)).toContain(expected);
    expect(toolResultOf(s)).toBe(expected);
    expect(s.transcript!.map((e) => e.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(s.transcript!.at(-1)!.text).toBe('ack ok');
  });

  it('a skip reads as no answer and the turn goes on', async () => {
    const s = await start('skip');
    const card = await pendingCard(s.id);
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    const done = await idle(s.id);
    expect(toolResultOf(done)).toBe('The user did not answer the questions.');
    expect(done.transcript!.at(-1)!.text).toBe('ack ok');
  });
});

describe('bad tool input never crashes anything', () => {
  it.each([
    ['none', /questions/],
    ['five', /questions/],
    ['oneOption', /options/],
    ['dupText', /unique|twice|duplicate/i],
    ['missing', /question/],
    ['badjson', /not valid JSON/],
  ])('%s gets an is_error tool_result and the session goes on', async (prompt, message) => {
    const s = await start(prompt);
    const done = await idle(s.id);
    const text = toolResultOf(done);
    expect(text).toMatch(/^<tool_use_error>InputValidationError: /);
    expect(text).toMatch(message);
    expect(done.transcript!.at(-1)!.text).toBe('ack error');
    const sent = fake.requests.map((r) => r.body?.messages && lastToolResult(r.body)).filter((t) => t && t.content === text);
    expect(sent[0]!.is_error).toBe(true);
    expect(((await (await relay.api(`/api/cards?sessionId=${s.id}`)).json()) as { cards: Card[] }).cards).toEqual([]);
  });
});

describe('waiting, relay modes and stopping', () => {
  it('expiry: autopilot goes on; manual ends the turn and the next message continues', async () => {
    const quick = await startTestRelay({ ...env(), ASKRELAY_WAIT: '200ms' });
    try {
      const auto = await start('expire', quick);
      const manual = await start('manual', quick, { relayMode: 'manual' });
      const [a, m] = await Promise.all([idle(auto.id, quick), idle(manual.id, quick)]);
      expect(toolResultOf(a)).toBe('The user did not answer the questions.');
      expect(a.transcript!.at(-1)!.text).toBe('ack ok');
      expect(toolResultOf(m)).toBe('The user did not answer the questions.');
      expect(m.transcript!.at(-1)!.role).toBe('tool'); // the model was not called again
      const res = await quick.api(`/api/sessions/${m.id}/messages`, { method: 'POST', json: { text: 'after expiry: go on' } });
      expect(res.status).toBe(200);
      const next = await waitUntil(async () => {
        const s = await session(m.id, quick);
        return s.status === 'idle' && s.transcript!.at(-1)!.role === 'assistant' ? s : undefined;
      }, 'manual session continued');
      expect(next.transcript!.at(-1)!.text).toBe('ack ok');
    } finally {
      await quick.stop();
    }
  });

  it('DELETE stops the session and cancels its pending card; messages to it are refused', async () => {
    const s = await start('single');
    const card = await pendingCard(s.id);
    const res = await relay.api(`/api/sessions/${s.id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Session).status).toBe('stopped');
    expect(((await (await relay.api(`/api/cards/${card.id}`)).json()) as Card).status).toBe('cancelled');
    const msg = await relay.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: 'hello' } });
    expect(msg.status).toBe(410);
  });

  it('a message while the agent waits on a card is 409; unknown sessions are 404; bad starts are refused', async () => {
    const s = await start('single');
    await pendingCard(s.id);
    expect((await relay.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: 'hi' } })).status).toBe(409);
    expect((await relay.api('/api/sessions/s_nope')).status).toBe(404);
    const badEngine = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'warp', prompt: 'x' } });
    expect(badEngine.status).toBe(422);
    expect((await badEngine.json()).error.code).toBe('invalid_engine');
    const badProvider = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'nobody', prompt: 'x' } });
    expect(badProvider.status).toBe(400);
    const noPrompt = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', prompt: ' ' } });
    expect(noPrompt.status).toBe(400);
    await relay.api(`/api/sessions/${s.id}`, { method: 'DELETE' });
  });
});

describe('durability', () => {
  it('a restart while a card is pending loses nothing: the loop continues from the pending tool call', async () => {
    const first = await startTestRelay(env());
    const s = await start('restart', first);
    const card = await pendingCard(s.id, first);
    const requestsBefore = fake.requests.length;
    await first.close();
    const second = await startTestRelay(env(), first.dataDir);
    try {
      const again = await pendingCard(s.id, second);
      expect(again.id).toBe(card.id);
      expect(again.expiresAt).toBe(card.expiresAt);
      await second.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
      const done = await idle(s.id, second);
      expect(toolResultOf(done)).toBe('Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.');
      expect(done.transcript!.at(-1)!.text).toBe('ack ok');
      // The model was not asked again before the answer: the pending call was resumed, not re-run.
      const after = fake.requests.slice(requestsBefore).filter((r) => r.body?.messages);
      expect(after).toHaveLength(1);
      expect(lastToolResult(after[0].body)?.content).toBe(toolResultOf(done));
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
