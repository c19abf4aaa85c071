import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Answer, Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { startAnthropicServer, toolResults, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';
import { cacheQuestion, claudeRelayEnv, dbQuestion } from './claude-fixtures.js';

// Fidelity: the `code` engine (Claude Code writes the tool_result) and the `messages`
// engine (the relay writes it) play the same scripted conversation, get the same answers,
// and the model must read the same bytes from both.

const db = dbQuestion;
const cache = cacheQuestion;

// The conversation: one question per step; how the human answers each; what the model reads.
const STEPS: { questions: unknown[]; answer: Answer | 'skip' | 'expire'; reads: string }[] = [
  { questions: [db()], answer: { q1: { selected: ['PostgreSQL'] } }, reads: 'Your questions have been answered: "Which database?"="PostgreSQL". You can now continue with these answers in mind.' },
  { questions: [db(true)], answer: { q1: { selected: ['PostgreSQL', 'SQLite'] } }, reads: 'Your questions have been answered: "Which database?"="PostgreSQL, SQLite". You can now continue with these answers in mind.' },
  { questions: [db(true)], answer: { q1: { selected: ['PostgreSQL', 'MySQL, MariaDB'] } }, reads: 'Your questions have been answered: "Which database?"="PostgreSQL, "MySQL, MariaDB"". You can now continue with these answers in mind.' },
  { questions: [db()], answer: { q1: { selected: [], text: 'Use DuckDB instead' } }, reads: 'The user answered: "Which database?"="Use DuckDB instead". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.' },
  { questions: [db(), cache], answer: { q1: { selected: ['SQLite'] }, q2: { selected: ['Redis'] } }, reads: 'Your questions have been answered: "Which database?"="SQLite", "Which cache?"="Redis". You can now continue with these answers in mind.' },
  { questions: [db()], answer: 'skip', reads: 'The user did not answer the questions.' },
  { questions: [db()], answer: 'expire', reads: 'The user did not answer the questions.' },
];

function model(request: MessagesRequest): ScriptedReply {
  const asked = request.messages.filter((m) => m.role === 'user' && toolResults({ messages: [m] }).length > 0).length;
  const step = STEPS[asked];
  if (!step) return { text: 'done' };
  return { text: `Question ${asked + 1}.`, toolUse: { name: 'AskUserQuestion', input: { questions: step.questions } } };
}

let fake: AnthropicServer;
let relay: TestRelay;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-fidelity-home-'));
  fake = await startAnthropicServer({ model });
  relay = await startTestRelay(claudeRelayEnv(fake.url, home, '2s'));
  // Answer every card as the plan says, as soon as it appears: a session's cards come one
  // after another, so its n-th card is step n.
  const seen = new Map<string | null, number>();
  relay.relay.events.subscribe((name, data) => {
    if (name !== 'card.created') return;
    const card = data as Card;
    const index = seen.get(card.sessionId) ?? 0;
    seen.set(card.sessionId, index + 1);
    const { answer } = STEPS[index];
    // Closed once stored; a refusal is an unhandled rejection, which fails the run.
    if (answer === 'skip') void relay.relay.skip(card.id);
    else if (answer !== 'expire') void relay.relay.answer(card.id, answer);
  });
});
afterAll(async () => {
  await relay.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

async function run(engine: 'code' | 'messages'): Promise<string[]> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine, model: 'claude-sonnet-5', prompt: `Pick a database (${engine}).` } });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as Session;
  await waitUntil(async () => {
    const s = (await (await relay.api(`/api/sessions/${id}`)).json()) as Session;
    if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
    return s.status === 'idle' && s.transcript!.at(-1)?.text === 'done';
  }, `${engine} session done`, 60_000);
  const last = fake.requests.filter((r) => r.body?.messages && JSON.stringify(r.body.messages).includes(`(${engine})`)).at(-1)!;
  return (last.body as MessagesRequest).messages.flatMap((m) => toolResults({ messages: [m] }).map((t) => t.content));
}

it('both engines make the model read the same bytes, and those are the golden strings', async () => {
  const [code, messages] = await Promise.all([run('code'), run('messages')]);
  expect(messages).toEqual(STEPS.map((s) => s.reads));
  expect(code).toEqual(messages);
}, 90_000);
