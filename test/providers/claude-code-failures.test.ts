import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { API_ERRORS, lastToolResult, startAnthropicServer, type AnthropicServer, type LoggedRequest, type ScriptedReply, type ScriptStep } from '../fakes/anthropic-server.js';
import { claudeCodeProcesses } from '../support/claude-code-process.js';
import { freePort } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { cacheQuestion, casesModel, claudeRelayEnv, dbQuestion, tagOf } from './claude-fixtures.js';

// What the `code` engine does when the model API fails, when Claude Code's process dies, and
// when Claude Code ends a turn on its turn limit (docs/providers/claude.md, "Turns"). Claude
// Code retries API failures itself (CLAUDE_CODE_MAX_RETRIES, set to 1 here so a test waits
// out one back-off of about half a second) and the session fails with the sentence of
// Claude Code's own error result. Each session first asks a question that is answered, so
// each case also shows that an answered card stays answered. Claude Code takes seconds to
// start, so the cases run concurrently.

const ASK_DB: ScriptedReply = { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [dbQuestion()] } } };
const ASK_CACHE: ScriptedReply = { text: 'One more.', toolUse: { name: 'AskUserQuestion', input: { questions: [cacheQuestion] } } };
const ANSWERED = 'Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.';
const CARRIED_ON = 'Going on with SQLite.';
const REPLY = 'A reply the API does not finish.';
/** What Claude Code appends to its API errors, naming the endpoint. */
const serverSide = (host: string) => `This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (${host}).`;

/** Failures Claude Code recovers from by asking again (CLAUDE_CODE_MAX_RETRIES=1 lets it retry once). */
const RETRIED: Array<[string, ScriptedReply]> = [
  // retry-after 0: Claude Code falls back to its own first back-off, about half a second.
  ['429 with retry-after', API_ERRORS.rateLimit(0)],
  ['500', API_ERRORS.internal()],
  ['529', API_ERRORS.overloaded()],
  ['an error event in the stream', { text: REPLY, streamError: { afterEvents: 4, type: 'overloaded_error', message: 'Overloaded' } }],
  ['a stream cut in the middle', { text: REPLY, cutAfterEvents: 4 }],
];

/** Failures that outlast the retries: the sentence the session fails with (`host`: the fake's host:port). */
const EXHAUSTED: Array<[string, ScriptedReply, (host: string) => string]> = [
  ['500', API_ERRORS.internal(), (host) => `API Error: 500 Internal server error. ${serverSide(host)}`],
  ['529', API_ERRORS.overloaded(), (host) => `API Error: 529 Overloaded. ${serverSide(host)}`],
];

let fake: AnthropicServer;
let home: string;
let relay: TestRelay;
const api = sessionApi(() => relay, { waitMs: 60_000 });
const requestsOf = (tag: string): LoggedRequest[] => fake.requests.filter((r) => r.path === '/v1/messages' && tagOf(r.body ?? {}) === tag);
const env = (extra: Record<string, string> = {}, folder = home) => ({ ...claudeRelayEnv(fake.url, folder), ANTHROPIC_API_KEY: 'sk-test', CLAUDE_CODE_MAX_RETRIES: '1', ...extra });

beforeAll(async () => {
  // One Claude Code session meets every failure it recovers from: the first before its first
  // question, each other one right after an answer.
  const scripts: Record<string, ScriptStep[]> = { retried: [...RETRIED.flatMap(([, failure]) => [failure, ASK_DB]), CARRIED_ON] };
  for (const [name, failure] of EXHAUSTED) scripts[`exhausted ${name}`] = [ASK_DB, failure, failure];
  scripts.crash = [ASK_DB, ASK_CACHE];
  scripts['turn limit'] = [ASK_DB, CARRIED_ON];
  fake = await startAnthropicServer({ model: casesModel(scripts), apiKey: 'sk-test', bearer: false });
  home = mkdtempSync(join(tmpdir(), 'askrelay-cc-failures-'));
  relay = await startTestRelay(env());
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

async function start(prompt: string, on = relay): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'code', prompt } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}

const answer = async (card: Card, label: string, on = relay) =>
  expect((await on.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: [label] } } } })).status).toBe(200);
const cardOf = async (id: string, on = relay) => (await (await on.api(`/api/cards/${id}`)).json()) as Card;
const failed = (id: string, on = relay) =>
  waitUntil(async () => {
    const s = await api.session(id, on);
    return s.status === 'failed' ? s : undefined;
  }, `${id} to fail`, 60_000);
const lines = (s: Session) => s.transcript!.map((e) => `${e.role}: ${e.text}`);

// Every suite and case at once: they wait on Claude Code, not on the CPU, most of the time.
describe.concurrent('engine code', () => {
  describe('the model API fails', () => {
    it(`Claude Code asks again after each of: ${RETRIED.map(([name]) => name).join(', ')}; the session goes on and every answer reaches the model`, async () => {
      const session = await start('Pick a database [case:retried/code]');
      const cards: Card[] = [];
      for (let i = 0; i < RETRIED.length; i++) {
        const card = await waitUntil(async () => {
          const pending = await api.pendingCard(session.id);
          return cards.some((c) => c.id === pending.id) ? undefined : pending;
        }, `card ${i + 1}`, 60_000);
        await answer(card, 'SQLite');
        cards.push(card);
      }
      const done = await api.idleWith(session.id, CARRIED_ON);
      expect(done.error).toBeUndefined();
      const asked = ['assistant: Let me ask.', `tool: ${ANSWERED}`];
      expect(lines(done)).toEqual(['user: Pick a database [case:retried/code]', ...RETRIED.flatMap(() => asked), `assistant: ${CARRIED_ON}`]);
      for (const card of cards) expect(await cardOf(card.id)).toMatchObject({ status: 'answered', answer: { q1: { selected: ['SQLite'] } } });
      // Each failed request, then the same conversation asked again; after the first, each
      // failed request carries an answer.
      const sent = requestsOf('retried/code');
      expect(sent).toHaveLength(2 * RETRIED.length + 1);
      for (let i = 0; i < RETRIED.length; i++) {
        const [failedOne, again] = [sent[2 * i]!, sent[2 * i + 1]!];
        expect(lastToolResult(failedOne.body)?.content).toBe(i === 0 ? undefined : ANSWERED);
        expect(again.body.messages).toEqual(failedOne.body.messages);
      }
    }, 120_000);

    it.each(EXHAUSTED)('%s until the retries run out: "Claude Code reported an error", the answered card stands', async (name, _failure, sentence) => {
      const tag = `exhausted ${name}/code`;
      const session = await start(`Pick a database [case:${tag}]`);
      const card = await api.pendingCard(session.id);
      await answer(card, 'SQLite');
      const done = await failed(session.id);
      const apiError = sentence(new URL(fake.url).host);
      expect(done.error).toBe(`Claude Code reported an error: ${apiError}`);
      // Claude Code also writes the error as its reply.
      expect(lines(done)).toEqual([`user: Pick a database [case:${tag}]`, 'assistant: Let me ask.', `tool: ${ANSWERED}`, `assistant: ${apiError}`]);
      expect(await cardOf(card.id)).toMatchObject({ status: 'answered', answer: { q1: { selected: ['SQLite'] } } });
      // Asked once more (CLAUDE_CODE_MAX_RETRIES=1) with the same conversation before it gave up.
      const [, first, second, ...more] = requestsOf(tag);
      expect(more).toEqual([]);
      expect(lastToolResult(first!.body)?.content).toBe(ANSWERED);
      expect(second!.body.messages).toEqual(first!.body.messages);
    }, 120_000);
  });

  describe('Claude Code itself fails', () => {
    it('its process dies while a card is open: the session fails with "Claude Code failed", the open card is cancelled, the answered one stands', async () => {
      const folder = mkdtempSync(join(tmpdir(), 'askrelay-cc-crash-'));
      const own = await startTestRelay(env({}, folder));
      try {
        const session = await start('Pick a database and a cache [case:crash/code]', own);
        const first = await api.pendingCard(session.id, own);
        await answer(first, 'SQLite', own);
        const second = await waitUntil(async () => {
          const card = await api.pendingCard(session.id, own);
          return card.id !== first.id ? card : undefined;
        }, 'the second card');
        const [pid, ...others] = claudeCodeProcesses(folder);
        expect(others).toEqual([]);
        process.kill(pid!, 'SIGKILL');

        const done = await failed(session.id, own);
        expect(done.error).toBe('Claude Code failed: Claude Code process terminated by signal SIGKILL');
        expect(lines(done)).toEqual(['user: Pick a database and a cache [case:crash/code]', 'assistant: Let me ask.', `tool: ${ANSWERED}`, 'assistant: One more.']);
        expect(await cardOf(first.id, own)).toMatchObject({ status: 'answered', answer: { q1: { selected: ['SQLite'] } } });
        // Nobody would read its answer: the card is closed, as when the session is stopped.
        expect((await cardOf(second.id, own)).status).toBe('cancelled');
        const late = await own.api(`/api/cards/${second.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Redis'] } } } });
        expect(late.status).toBe(410);
      } finally {
        await own.stop();
        rmSync(folder, { recursive: true, force: true });
      }
    }, 120_000);

    it('it ends the turn on its turn limit (CLAUDE_CODE_MAX_TURNS): "Claude Code ended the turn with error_max_turns"', async () => {
      const limited = await startTestRelay(env({ CLAUDE_CODE_MAX_TURNS: '1' }));
      try {
        const session = await start('Pick a database [case:turn limit/code]', limited);
        const card = await api.pendingCard(session.id, limited);
        await answer(card, 'SQLite', limited);
        const done = await failed(session.id, limited);
        expect(done.error).toBe('Claude Code ended the turn with error_max_turns: Reached maximum number of turns (1)');
        expect(lines(done)).toEqual(['user: Pick a database [case:turn limit/code]', 'assistant: Let me ask.', `tool: ${ANSWERED}`]);
        expect(await cardOf(card.id, limited)).toMatchObject({ status: 'answered' });
        expect(requestsOf('turn limit/code')).toHaveLength(1); // the limit came before a second model request
      } finally {
        await limited.stop();
      }
    }, 120_000);

    it('an endpoint that refuses the connection fails the session with Claude Code\'s "Connection refused" after its retry', async () => {
      const closed = await startTestRelay(env({ ANTHROPIC_BASE_URL: `http://127.0.0.1:${await freePort()}` }));
      try {
        const session = await start('Pick a database', closed);
        const done = await failed(session.id, closed);
        const refused = 'API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)';
        expect(done.error).toBe(`Claude Code reported an error: ${refused}`);
        expect(lines(done)).toEqual(['user: Pick a database', `assistant: ${refused}`]);
      } finally {
        await closed.stop();
      }
    }, 120_000);
  });
});
