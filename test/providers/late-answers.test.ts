import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolResult, lastUserText, startAnthropicServer, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { lastToolMessage, lastUserText as lastChatUserText, startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { dbQuestion } from './claude-fixtures.js';
import { copilotRelayEnv, GROK_KEY, grokRelayEnv } from './openai-fixtures.js';

// A late answer reaches a session the relay runs as its next user message, in the words
// every provider's model reads (pinned below, byte for byte), once the turn that went on
// without it has ended; a stopped session leaves it undelivered. Real SDK clients against
// the scripted model servers; the relay's clock is a fake one set to 14:00 UTC, so that each
// card expires when a test moves it, at a time the golden strings can name.

const MIN = 60_000;
const DAY = '2026-12-01';
const LATE_DB = (time: string, answer: string) => `Late answer to your question "Which database?" (it expired at ${time} UTC; you went on without it): ${answer}`;

/** Held replies: the model's answer to a tool result waits until the test releases it. */
const held = new Map<string, () => void>();
const hold = (marker: string) => new Promise<void>((resolve) => held.set(marker, resolve));

async function claudeModel(request: MessagesRequest): Promise<ScriptedReply> {
  const typed = lastUserText(request);
  if (typed.startsWith('Late answer')) return { text: 'Thanks, switching.' };
  const marker = /\[(\w+)\]/.exec(JSON.stringify(request.messages))?.[1] ?? '';
  if (lastToolResult(request)) {
    if (marker === 'busy') await hold(marker);
    return { text: 'ack ok' };
  }
  return { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [dbQuestion()] } } };
}

function copilotModel(request: ChatRequest): ScriptedChatReply {
  if (lastChatUserText(request).startsWith('Late answer')) return { text: 'Thanks, switching.' };
  if (lastToolMessage(request)) return { text: 'ack' };
  return { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which color?', choices: ['Red', 'Green'] } }] };
}

function grokModel(request: ChatRequest): ScriptedChatReply {
  if (lastChatUserText(request).startsWith('Late answer')) return { text: 'Thanks, starting it now.' };
  if (lastToolMessage(request)) return { text: 'It was not approved.' };
  return { toolCalls: [{ id: 'call_start', name: 'start_session', arguments: { provider: 'grok', prompt: 'Say hello.' } }] };
}

let anthropic: AnthropicServer;
let copilot: OpenAIServer;
let grok: OpenAIServer;
let relay: TestRelay;
let clock: FakeClock;
let home: string;
const { session, pendingCard, idleWith } = sessionApi(() => relay);

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-late-home-'));
  [anthropic, copilot, grok] = await Promise.all([
    startAnthropicServer({ model: claudeModel }),
    startOpenAIServer({ model: copilotModel }),
    startOpenAIServer({ model: grokModel, apiKey: GROK_KEY }),
  ]);
  const env = { ...copilotRelayEnv(copilot.url, home), ...grokRelayEnv(grok.url), ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '2m' };
  ({ relay, clock } = await startRelayWithClock(env, undefined, '0', Date.parse(`${DAY}T14:00:00.000Z`)));
});
afterAll(async () => {
  await relay?.stop();
  await Promise.all([anthropic?.close(), copilot?.close(), grok?.close()]);
  rmSync(home, { recursive: true, force: true });
});

/** Moves the relay's clock forward to hh:00 UTC, so that the next card expires at hh:02. */
function atHour(hour: number): void {
  const target = Date.parse(`${DAY}T${String(hour).padStart(2, '0')}:00:00.000Z`);
  if (clock.now() > target) throw new Error(`the clock is past ${hour}:00 already`);
  clock.advance(target - clock.now());
}

async function start(json: Record<string, unknown>): Promise<Session> {
  const res = await relay.api('/api/sessions', { method: 'POST', json });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}

async function expire(card: Card): Promise<void> {
  clock.advance(2 * MIN);
  await waitUntil(async () => (await getCard(card.id)).status === 'expired', `${card.id} expired`);
}

const getCard = async (id: string) => (await (await relay.api(`/api/cards/${id}`)).json()) as Card;

async function answerLate(card: Card, answers: unknown): Promise<Card> {
  const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers, late: true } });
  expect(res.status).toBe(200);
  return (await res.json()) as Card;
}

const deliveredTo = (id: string) =>
  waitUntil(async () => {
    const card = await getCard(id);
    return card.delivery?.state === 'delivered' ? card.delivery : undefined;
  }, `${id} delivered`);

const claudeUserTexts = (marker: string) =>
  anthropic.requests.filter((r) => r.body?.messages && JSON.stringify(r.body.messages).includes(`[${marker}]`)).map((r) => lastUserText(r.body as MessagesRequest));

describe('a late answer becomes the session\'s next user message', () => {
  it('Claude, messages engine, autopilot: after the turn that went on without it', async () => {
    atHour(14);
    const s = await start({ provider: 'claude', engine: 'messages', prompt: 'Pick a database. [auto]' });
    const card = await pendingCard(s.id);
    await expire(card);
    await idleWith(s.id, 'ack ok');
    const late = await answerLate(card, { q1: { selected: ['PostgreSQL'] } });
    expect(late).toMatchObject({ status: 'expired', lateAnswer: { answer: { q1: { selected: ['PostgreSQL'] } }, answeredBy: { kind: 'human', id: 'operator' } }, delivery: { state: 'sent' } });
    const done = await idleWith(s.id, 'Thanks, switching.');
    expect(claudeUserTexts('auto')).toContain(LATE_DB('14:02', 'PostgreSQL.'));
    expect(done.transcript!.map((e) => e.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
    expect(done.transcript![4].text).toBe(LATE_DB('14:02', 'PostgreSQL.'));
    expect(await deliveredTo(card.id)).toMatchObject({ state: 'delivered', to: 'session' });
  });

  it('Claude, messages engine: a late answer that comes while the turn runs waits for the turn to end', async () => {
    atHour(15);
    const s = await start({ provider: 'claude', engine: 'messages', prompt: 'Pick a database. [busy]' });
    const card = await pendingCard(s.id);
    await expire(card);
    // The model holds its reply to the no-answer result: the turn is running.
    await waitUntil(() => held.has('busy'), 'the model to hold its reply');
    await answerLate(card, { q1: { selected: [], text: 'Use SQLite for now' } });
    expect((await getCard(card.id)).delivery?.state).toBe('sent');
    held.get('busy')!();
    const done = await idleWith(s.id, 'Thanks, switching.');
    // The late answer came after the reply the turn was waiting for, never inside the turn.
    expect(done.transcript!.map((e) => `${e.role}: ${e.text}`).slice(2)).toEqual([
      'tool: The user did not answer the questions.',
      'assistant: ack ok',
      `user: ${LATE_DB('15:02', 'Use SQLite for now.')}`,
      'assistant: Thanks, switching.',
    ]);
    expect(await deliveredTo(card.id)).toMatchObject({ to: 'session' });
  });

  it('Claude, messages engine, manual: the turn ended on the expiry, and the late answer starts the next one', async () => {
    atHour(16);
    const s = await start({ provider: 'claude', engine: 'messages', prompt: 'Pick a database. [manual]', relayMode: 'manual' });
    const card = await pendingCard(s.id);
    await expire(card);
    await waitUntil(async () => {
      const now = await session(s.id);
      return now.status === 'idle' && now.transcript!.at(-1)!.role === 'tool';
    }, 'the manual turn to end on the expiry');
    await answerLate(card, { q1: { selected: ['SQLite'] } });
    await idleWith(s.id, 'Thanks, switching.');
    expect(claudeUserTexts('manual').at(-1)).toBe(LATE_DB('16:02', 'SQLite.'));
  });

  it('Copilot, sdk engine: in the same words', async () => {
    atHour(17);
    const s = await start({ provider: 'openai', engine: 'sdk', model: 'gpt-scripted', prompt: 'Pick a color.' });
    const card = await pendingCard(s.id);
    await expire(card);
    await idleWith(s.id, 'ack');
    await answerLate(card, { q1: { selected: ['Red'] } });
    await idleWith(s.id, 'Thanks, switching.');
    const texts = copilot.requests.filter((r) => r.body?.messages).map((r) => lastChatUserText(r.body as ChatRequest));
    expect(texts).toContain('Late answer to your question "Which color?" (it expired at 17:02 UTC; you went on without it): Red.');
    expect(await deliveredTo(card.id)).toMatchObject({ to: 'session' });
  });

  it('Grok: a late approval too', async () => {
    atHour(18);
    const s = await start({ provider: 'grok', prompt: 'Start a helper.' });
    const card = await pendingCard(s.id);
    expect(card.kind).toBe('approval');
    await expire(card);
    await idleWith(s.id, 'It was not approved.');
    await answerLate(card, { [card.questions[0].id]: { selected: [card.questions[0].options[0].label] } });
    await idleWith(s.id, 'Thanks, starting it now.');
    const texts = grok.requests.filter((r) => r.body?.messages).map((r) => lastChatUserText(r.body as ChatRequest));
    expect(texts.find((t) => t.startsWith('Late answer'))).toBe(
      'Late answer to your request "Start a session?" (it expired at 18:02 UTC; you went on without it): Approve.',
    );
  });

  it('a stopped session leaves it undelivered, and says so at once', async () => {
    atHour(19);
    const s = await start({ provider: 'claude', engine: 'messages', prompt: 'Pick a database. [stopped]' });
    const card = await pendingCard(s.id);
    await expire(card);
    await idleWith(s.id, 'ack ok');
    expect((await relay.api(`/api/sessions/${s.id}`, { method: 'DELETE' })).status).toBe(200);
    await answerLate(card, { q1: { selected: ['SQLite'] } });
    await waitUntil(async () => (await getCard(card.id)).delivery?.state === 'undelivered', 'undelivered');
    expect(claudeUserTexts('stopped').filter((t) => t.startsWith('Late answer'))).toEqual([]);
  });
});
