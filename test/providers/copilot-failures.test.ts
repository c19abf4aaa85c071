import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import {
  lastToolMessage,
  lastUserText,
  scriptedChat,
  startOpenAIServer,
  type ChatRequest,
  type ChatScriptStep,
  type LoggedRequest,
  type OpenAIServer,
  type ScriptedChatModel,
} from '../fakes/openai-server.js';
import { closedPort } from '../support/closed-port.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { copilotRelayEnv } from './openai-fixtures.js';

// The model API failing under Copilot and OpenAI sessions: the real Copilot runtime
// (@github/copilot-sdk) against the scripted Chat Completions server. The runtime retries every
// failure but a 400 (429, 5xx, a stream that broke off or carried an error event, no
// connection) up to 5 times with its own back-off (about 0.5 s, then doubling; a longer
// retry-after is honoured, a shorter one is not), so a failure costs about a second of real
// time: each test meets only the failures it needs. docs/providers/copilot.md, "When the model
// API fails", has the sentences and the measured retry behaviour.

const RUNNERS = [
  { provider: 'copilot', engine: 'sdk' },
  { provider: 'copilot', engine: 'extension' },
  { provider: 'openai', engine: 'sdk' },
] as const;
type Runner = (typeof RUNNERS)[number];

const ASK: ChatScriptStep = { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which color?', choices: ['Red', 'Green', 'Blue'] } }] };
const LIMITED = { error: { status: 429, message: 'Rate limit reached for requests', retryAfter: 0 } };
const BROKEN = { error: { status: 500, message: 'The server had an error while processing your request. Sorry about that!' } };
const REJECTED = { error: { status: 400, message: 'The request was rejected.' } };
const STREAM_ERROR = { text: 'Half an answer', streamError: { afterChunks: 2, message: 'The server had an error while processing your request.', code: 'server_error' } };
const CUT = { text: 'Half an answer', cutAfterChunks: 2 };

/** Each case's script, one step per request that reaches the model (a retry is a request). */
const SCRIPTS: Record<string, ChatScriptStep[]> = {
  // 429 before the card; an error event, a cut and a 500 after it.
  recovers: [LIMITED, ASK, STREAM_ERROR, CUT, BROKEN, 'All set.'],
  // A 400 is not retried: the session fails right after the card was answered.
  rejected: [ASK, REJECTED, 'never read'],
  exhausted: Array.from({ length: 6 }, () => BROKEN),
};

const models = new Map<string, ScriptedChatModel>();
function model(request: ChatRequest, index: number) {
  const marker = /\[case=(\w+)\]/.exec(lastUserText(request))?.[1] ?? '';
  const script = SCRIPTS[marker.split('_')[0]!];
  if (!script) return { text: `no case ${marker}` };
  if (!models.has(marker)) models.set(marker, scriptedChat(script));
  return models.get(marker)!(request, index);
}

let fake: OpenAIServer;
let relay: TestRelay;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-failures-'));
  fake = await startOpenAIServer({ model });
  relay = await startTestRelay(copilotRelayEnv(fake.url, home));
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

const { session, pendingCard, done } = sessionApi(() => relay, { waitMs: 60_000 });
const marker = (kind: string, r: Runner) => `${kind}_${r.provider}_${r.engine}`;
async function start(kind: string, r: Runner, on = relay): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { ...r, model: 'gpt-scripted', prompt: `Pick a color. [case=${marker(kind, r)}]` } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
async function answer(sessionId: string): Promise<Card> {
  const card = await pendingCard(sessionId);
  const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Green'] } } } });
  expect(res.status).toBe(200);
  return card;
}
const failed = (id: string, on = relay) =>
  waitUntil(async () => {
    const s = await session(id, on);
    return s.status === 'failed' ? s : undefined;
  }, `${id} to fail`, 60_000);
const requestsOf = (name: string): LoggedRequest[] => fake.requests.filter((r) => lastUserText(r.body ?? {}).includes(`[case=${name}]`));
const messagesOf = (r: LoggedRequest) => JSON.stringify(r.body.messages);
const cardOf = async (id: string) => (await (await relay.api(`/api/cards/${id}`)).json()) as Card;

/**
 * Resolves once the runtime that ran the session with this prompt marker has let it go: the
 * runtime holds `inuse.<pid>.lock` in the session's folder while it runs it.
 */
function runtimeReleased(homeDir: string, name: string) {
  const root = join(homeDir, '.copilot', 'session-state');
  return waitUntil(() => {
    const folder = readdirSync(root).find((id) => {
      try {
        return readFileSync(join(root, id, 'events.jsonl'), 'utf8').includes(`[case=${name}]`);
      } catch {
        return false;
      }
    });
    return folder !== undefined && !readdirSync(join(root, folder)).some((f) => /^inuse\.\d+\.lock$/.test(f));
  }, `the runtime to let go of ${name}`, 15_000);
}

// All at once (the runtime mostly waits out its back-off): the two slow ones first.
describe.concurrent('the model API fails', () => {
  describe('what the runtime gives up on (its back-off: about 15 s for five retries)', () => {
    it('a 500 on every retry: the session fails after five retries', async () => {
      const runner = RUNNERS[2];
      const name = marker('exhausted', runner);
      const s = await start('exhausted', runner);
      const end = await failed(s.id);
      expect(end.error).toMatch(
        /^Copilot reported an error: Failed to get response from the AI model; retried 5 times \(total retry wait time: \d+(\.\d+)? seconds\) Last error: 500 The server had an error while processing your request\. Sorry about that!$/,
      );
      expect(requestsOf(name)).toHaveLength(6);
      await runtimeReleased(home, name);
    }, 90_000);

    it('no connection: the session fails after five retries with the endpoint it could not reach', async () => {
      const port = await closedPort();
      const url = `http://127.0.0.1:${port}/v1`;
      const refusedHome = mkdtempSync(join(tmpdir(), 'askrelay-copilot-refused-'));
      const refused = await startTestRelay(copilotRelayEnv(url, refusedHome));
      try {
        const runner = RUNNERS[1];
        const s = await start('refused', runner, refused);
        const end = await failed(s.id, refused);
        expect(end.error).toBe(`Copilot reported an error: Could not connect to local model provider at ${url}.\n  Check that the service is running and the port is correct.`);
        await runtimeReleased(refusedHome, marker('refused', runner));
      } finally {
        await refused.stop();
        rmSync(refusedHome, { recursive: true, force: true });
      }
    }, 90_000);
  });

  describe.each(RUNNERS)('$provider, engine $engine', (runner) => {
    it('429 before the card, an error event, a cut and a 500 after it: the runtime retries each, the turn ends, the answer stands', async () => {
      const name = marker('recovers', runner);
      const s = await start('recovers', runner);
      const card = await answer(s.id);
      const end = await done(s.id);
      expect(end.transcript!.map((e) => [e.role, e.text, e.cardId])).toEqual([
        ['user', `Pick a color. [case=${name}]`, undefined],
        ['tool', 'User selected: Green', card.id],
        ['assistant', 'All set.', undefined],
      ]);
      expect(await cardOf(card.id)).toMatchObject({ status: 'answered', answer: { q1: { selected: ['Green'] } }, answeredBy: { kind: 'human' } });
      // Six requests: the 429's retry asked the same; after the card, each failed request was
      // sent again as it was, carrying the answer the model read.
      const sent = requestsOf(name);
      expect(sent).toHaveLength(6);
      expect(messagesOf(sent[1]!)).toBe(messagesOf(sent[0]!));
      for (const r of sent.slice(2)) {
        expect(lastToolMessage(r.body)?.content).toBe('User selected: Green');
        expect(messagesOf(r)).toBe(messagesOf(sent[2]!));
      }
    }, 60_000);

    it('a 400 after the card: not retried; the session fails with "Copilot reported an error", the card stays answered', async () => {
      const name = marker('rejected', runner);
      const s = await start('rejected', runner);
      const card = await answer(s.id);
      const end = await failed(s.id);
      expect(end.error).toBe('Copilot reported an error: 400 The request was rejected.');
      expect(end.transcript!.map((e) => [e.role, e.text, e.cardId])).toEqual([
        ['user', `Pick a color. [case=${name}]`, undefined],
        ['tool', 'User selected: Green', card.id],
      ]);
      expect(await cardOf(card.id)).toMatchObject({ status: 'answered', answer: { q1: { selected: ['Green'] } } });
      const sent = requestsOf(name);
      expect(sent).toHaveLength(2);
      expect(lastToolMessage(sent[1]!.body)?.content).toBe('User selected: Green');
      // A failed session's runtime is stopped with it.
      await runtimeReleased(home, name);
    }, 60_000);
  });
});
