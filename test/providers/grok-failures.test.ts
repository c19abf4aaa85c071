import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import {
  lastUserText,
  scriptedChat,
  startOpenAIServer,
  toolResultFor,
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
import { GROK_KEY, grokRelayEnv } from './openai-fixtures.js';

// Grok's model API failing, through the real `openai` client (maxRetries 2) against the
// scripted Chat Completions server. The client retries 408/409/429/5xx and a connection that
// cannot be made, never a stream that already began; what it gives up on fails the session
// with one sentence (docs/providers/grok.md, "Errors"). Each failure sends `retry-after-ms: 1`
// so the client's retries take no real time (without it the client backs off 0.5–8 s).

const LIMITED = { status: 429, message: 'Rate limit reached for requests', retryAfter: 0, retryAfterMs: 1 };
const BROKEN = { status: 500, message: 'The server had an error while processing your request. Sorry about that!', retryAfterMs: 1 };
const OVERLOADED = { status: 503, message: 'The engine is currently overloaded, please try again later.', retryAfterMs: 1 };
const WATCH = (sessionId: string) => ({ toolCalls: [{ id: 'call_watch', name: 'watch_session', arguments: { sessionId } }] });

/** Each case's script, one step per request that reaches the model (a retry is a request). */
const SCRIPTS: Record<string, (request: ChatRequest) => ChatScriptStep[]> = {
  plain: () => ['Nothing to add.'],
  limited: () => [{ error: LIMITED }, 'Back after the rate limit.'],
  broken: () => [{ error: BROKEN }, 'Back after the 500.'],
  overloaded: () => [{ error: OVERLOADED }, 'Back after the 503.'],
  limitedForGood: () => [{ error: LIMITED }, { error: LIMITED }, { error: LIMITED }, 'never read'],
  brokenForGood: (request) => [WATCH(/watch=(s_\w+)/.exec(lastUserText(request))![1]!), { error: BROKEN }, { error: BROKEN }, { error: BROKEN }, 'never read'],
  streamError: () => [{ text: 'Half an answer', streamError: { afterChunks: 2, message: 'The server had an error while processing your request.', code: 'server_error' } }, 'never read'],
  cut: () => [{ text: 'Half an answer', cutAfterChunks: 2 }, 'never read'],
};

const models = new Map<string, ScriptedChatModel>();
function model(request: ChatRequest, index: number) {
  const name = /\[case=(\w+)/.exec(lastUserText(request))?.[1] ?? '';
  if (!SCRIPTS[name]) return { text: `no case ${name}` };
  if (!models.has(name)) models.set(name, scriptedChat(SCRIPTS[name]!(request)));
  return models.get(name)!(request, index);
}

let fake: OpenAIServer;
let relay: TestRelay;

beforeAll(async () => {
  fake = await startOpenAIServer({ model, apiKey: GROK_KEY });
  relay = await startTestRelay(grokRelayEnv(fake.url));
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

const { session, idleWith } = sessionApi(() => relay, { waitMs: 20_000 });
async function start(prompt: string, on = relay): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'grok', prompt } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const failed = (id: string, on = relay) =>
  waitUntil(async () => {
    const s = await session(id, on);
    return s.status === 'failed' ? s : undefined;
  }, `${id} to fail`, 20_000);
const requestsOf = (name: string): LoggedRequest[] => fake.requests.filter((r) => lastUserText(r.body ?? {}).includes(`[case=${name}`));
const messagesOf = (r: LoggedRequest) => JSON.stringify(r.body.messages);

describe('the client retries and the session carries on', () => {
  it.each([
    ['limited', 'Back after the rate limit.'],
    ['broken', 'Back after the 500.'],
    ['overloaded', 'Back after the 503.'],
  ])('%s: the retried request arrives with the same conversation and the turn ends on its reply', async (name, reply) => {
    const s = await start(`Plan my storage. [case=${name}]`);
    const done = await idleWith(s.id, reply);
    expect(done.transcript!.map((e) => [e.role, e.text])).toEqual([
      ['user', `Plan my storage. [case=${name}]`],
      ['assistant', reply],
    ]);
    const sent = requestsOf(name);
    expect(sent.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1']);
    expect(messagesOf(sent[1]!)).toBe(messagesOf(sent[0]!));
  });
});

describe('what the client gives up on fails the session with one sentence', () => {
  it('429 three times: two retries, then "answered 429"', async () => {
    const s = await start('Plan my storage. [case=limitedForGood]');
    expect((await failed(s.id)).error).toBe(`The model API at ${fake.url} answered 429: rate_limit_exceeded: Rate limit reached for requests`);
    expect(requestsOf('limitedForGood').map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
  });

  it('500 three times after an approval card was answered: the card stays answered and the model had read its result', async () => {
    const target = await start('Say something. [case=plain]');
    await idleWith(target.id, 'Nothing to add.');
    const s = await start(`Watch the other session. [case=brokenForGood watch=${target.id}]`);
    const card = await waitUntil(
      async () => ((await (await relay.api(`/api/cards?sessionId=${s.id}&status=pending`)).json()) as { cards: Card[] }).cards[0],
      'the approval card',
    );
    expect(card).toMatchObject({ kind: 'approval', tool: 'watch_session' });
    const answer = { approve: { selected: ['Approve'] } };
    expect((await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: answer } })).status).toBe(200);

    const end = await failed(s.id);
    expect(end.error).toBe(`The model API at ${fake.url} answered 500: server_error: ${BROKEN.message}`);
    const after = (await (await relay.api(`/api/cards/${card.id}`)).json()) as Card;
    expect(after).toMatchObject({ status: 'answered', answer, answeredBy: { kind: 'human' } });
    // Every attempt after the card carried its result; the transcript keeps it too.
    const sent = requestsOf('brokenForGood');
    expect(sent.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '0', '1', '2']);
    const result = toolResultFor(sent.slice(1, 2), 'call_watch');
    expect(JSON.parse(result!)).toMatchObject({ session: { id: target.id } });
    for (const r of sent.slice(2)) expect(messagesOf(r)).toBe(messagesOf(sent[1]!));
    expect(end.transcript!.filter((e) => e.role === 'tool').map((e) => e.text)).toEqual([result]);
    // Failed is final: the next message is refused, nothing is sent.
    expect((await relay.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: 'again' } })).status).toBe(410);
    expect(requestsOf('brokenForGood')).toHaveLength(4);
  });

  it.each([
    ['streamError', 'sent an error in the middle of its answer: server_error: The server had an error while processing your request.'],
    ['cut', 'broke off its answer: terminated (other side closed)'],
  ])('%s: a stream that began is not retried', async (name, sentence) => {
    const s = await start(`Plan my storage. [case=${name}]`);
    const end = await failed(s.id);
    expect(end.error).toBe(`The model API at ${fake.url} ${sentence}`);
    expect(requestsOf(name)).toHaveLength(1);
    expect(end.transcript!.map((e) => e.role)).toEqual(['user']);
  });

  it('a refused connection: "could not be reached", with the reason', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/v1`;
    const refused = await startTestRelay(grokRelayEnv(url));
    try {
      const s = await start('Plan my storage.', refused);
      expect((await failed(s.id, refused)).error).toBe(`The model API at ${url} could not be reached: connect ECONNREFUSED 127.0.0.1:${port}`);
    } finally {
      await refused.stop();
    }
  });
});
