import { rmSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantMessage, asksUser, grokSystemPrompt, toolArguments, toolMessage, transcriptEntries } from '../../providers/grok/index.js';
import { readableApiError, unansweredCalls } from '../../providers/grok/engine.js';
import type { Session } from '../../src/sessions/model.js';
import { lastUserText, startOpenAIServer, toolNames, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { GROK_KEY, grokRelayEnv } from './openai-fixtures.js';
import { goldenGrokSystemPrompt } from './golden/grok-system-prompt.js';

// Grok: the real `openai` client against the scripted Chat Completions server, through the
// relay's HTTP API. No question tool, no cards: Grok asks in its reply text and the session
// idles. Its only tools are the relay tool's (test/providers/grok-relay-tool.test.ts).

const ASK = 'Which database should I use?\n\n1. PostgreSQL (Recommended)\n2. SQLite';

let gate: { promise: Promise<void>; open: () => void } | undefined;
function newGate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  gate = { promise, open };
  return gate;
}

async function model(request: ChatRequest): Promise<ScriptedChatReply> {
  const last = lastUserText(request);
  if (last.startsWith('fail')) return { error: { status: 400, message: 'Model grok-nope does not exist.', code: 'model_not_found' } };
  if (last.startsWith('slow') && gate) await gate.promise;
  if (/^\d|postgres|sqlite/i.test(last)) return { text: `Noted: ${last}. Setting it up now.` };
  return { text: ASK };
}

let fake: OpenAIServer;
let relay: TestRelay;
const env = () => grokRelayEnv(fake.url);

beforeAll(async () => {
  fake = await startOpenAIServer({ model, apiKey: GROK_KEY });
  relay = await startTestRelay(env());
});
afterAll(async () => {
  await relay.stop();
  await fake.close();
});

async function startSession(prompt: string, on = relay, extra: Record<string, unknown> = {}): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'grok', prompt, ...extra } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const { session: getSession, idleWith, cardsOf } = sessionApi(() => relay, { waitMs: 20_000 });
const requestsWith = (marker: string) =>
  fake.requests.filter((r) => r.path === '/v1/chat/completions' && JSON.stringify(r.body?.messages ?? '').includes(marker));

describe('the adapter (pure)', () => {
  it('tells Grok it has no question tool and to ask in its reply, in both relay modes', () => {
    for (const mode of ['autopilot', 'manual'] as const) {
      expect(grokSystemPrompt(mode)).toBe(goldenGrokSystemPrompt(mode, false));
      expect(grokSystemPrompt(mode, true)).toBe(goldenGrokSystemPrompt(mode, true));
      expect(grokSystemPrompt(mode)).not.toMatch(/ask_user|AskUserQuestion|list_questions/);
    }
  });

  it('asksUser spots a question or a numbered choice at the end of a reply', () => {
    expect(asksUser(ASK)).toBe(true);
    expect(asksUser('Done. Shall I also add tests?')).toBe(true);
    expect(asksUser('Pick one:\n1. A\n2. B')).toBe(true);
    expect(asksUser('I did three things:\n1. A\n2. B')).toBe(true);
    expect(asksUser('Why? Because.\n\nAll set, the schema is in place.')).toBe(false);
    expect(asksUser('Steps taken\n1. A\n2. B')).toBe(false);
    expect(asksUser('')).toBe(false);
  });

  it('transcriptEntries keeps the text and notes cut-off, filtered and empty replies', () => {
    expect(transcriptEntries({ content: ` ${ASK} `, finishReason: 'stop' })).toEqual([{ role: 'assistant', text: ASK }]);
    expect(transcriptEntries({ content: 'Half', finishReason: 'length' })).toEqual([
      { role: 'assistant', text: 'Half' },
      { role: 'system', text: "Grok's reply was cut off at the token limit." },
    ]);
    expect(transcriptEntries({ content: null, refusal: 'I cannot help with that.' })).toEqual([{ role: 'assistant', text: 'I cannot help with that.' }]);
    expect(transcriptEntries({ content: '', finishReason: 'stop' })).toEqual([{ role: 'system', text: 'Grok replied with no text.' }]);
  });

  it('a reply with relay tool calls is stored with its calls, adds no transcript note, and its calls stay open until each has a tool message', () => {
    const call = (id: string, args = '{}') => ({ id, type: 'function' as const, function: { name: 'list_questions', arguments: args } });
    const reply = { content: null, finishReason: 'tool_calls', toolCalls: [call('c1'), call('c2')] };
    expect(assistantMessage(reply)).toEqual({ role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] });
    expect(assistantMessage({ content: 'Looking.', toolCalls: [call('c1')] })).toEqual({ role: 'assistant', content: 'Looking.', tool_calls: [call('c1')] });
    expect(assistantMessage({ content: 'Hi', toolCalls: [] })).toEqual({ role: 'assistant', content: 'Hi' });
    expect(transcriptEntries(reply)).toEqual([]);

    const asked = [{ role: 'user' as const, content: 'go' }, assistantMessage(reply)];
    expect(unansweredCalls(asked).map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(unansweredCalls([...asked, toolMessage('c1', 'none')]).map((c) => c.id)).toEqual(['c2']);
    expect(unansweredCalls([...asked, toolMessage('c1', 'none'), toolMessage('c2', 'none')])).toEqual([]);
    expect(unansweredCalls([{ role: 'user', content: 'go' }, { role: 'assistant', content: 'plain' }])).toEqual([]);
    expect(unansweredCalls([{ role: 'user', content: 'go' }])).toEqual([]);

    expect(toolArguments(call('c1', ''))).toEqual({ ok: true, args: {} });
    expect(toolArguments(call('c1', '{"cardId":"c_1","answers":"2"}'))).toEqual({ ok: true, args: { cardId: 'c_1', answers: '2' } });
    expect(toolArguments(call('c1', '{"cardId":'))).toEqual({ ok: false, text: 'The arguments of list_questions are not valid JSON; call it again with a JSON object.' });
  });

  it('readableApiError turns both error body shapes into one sentence', () => {
    const openaiShape = OpenAI.APIError.generate(401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } }, undefined, new Headers());
    expect(readableApiError(openaiShape, 'https://api.x.ai/v1').message).toBe(
      'The model API at https://api.x.ai/v1 answered 401: invalid_api_key: Incorrect API key provided.',
    );
    const xaiShape = OpenAI.APIError.generate(400, { code: 'Client specified an invalid argument', error: 'Incorrect API key provided: xa***.' }, undefined, new Headers());
    expect(readableApiError(xaiShape, 'https://api.x.ai/v1').message).toBe('The model API at https://api.x.ai/v1 answered 400: Incorrect API key provided: xa***.');
  });
});

describe('sessions over the HTTP API', () => {
  it('a reply that asks ends the turn: the session idles with the text, no card; a message continues with the whole history', async () => {
    const s = await startSession('Set up a database for my app (history)');
    expect(s).toMatchObject({ provider: 'grok', engine: 'chat', model: 'grok-4' });
    const asked = await idleWith(s.id, ASK);
    expect(asked.transcript!.map((e) => [e.role, e.text])).toEqual([
      ['user', 'Set up a database for my app (history)'],
      ['assistant', ASK],
    ]);
    expect(await cardsOf(s.id)).toEqual([]);

    const res = await relay.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: '1' } });
    expect(res.status).toBe(200);
    const done = await idleWith(s.id, 'Noted: 1. Setting it up now.');
    expect(done.transcript!.map((e) => e.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(await cardsOf(s.id)).toEqual([]);

    const sent = requestsWith('(history)');
    expect(sent).toHaveLength(2);
    for (const r of sent) {
      expect(r.headers.authorization).toBe('Bearer xai-test');
      expect(r.body).toMatchObject({ model: 'grok-4', stream: true });
      // The relay tool's four functions, and no question tool.
      expect(toolNames(r.body)).toEqual(['list_questions', 'answer_question', 'start_session', 'watch_session']);
      expect(r.body).not.toHaveProperty('tool_choice');
      expect(r.body.messages[0]).toEqual({ role: 'system', content: goldenGrokSystemPrompt('autopilot', true) });
    }
    expect(sent[1]!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'Set up a database for my app (history)' },
      { role: 'assistant', content: ASK },
      { role: 'user', content: '1' },
    ]);
  });

  it('sends the model the session names and the manual-mode prompt', async () => {
    const s = await startSession('Pick for me (named model)', relay, { model: 'grok-3-mini', relayMode: 'manual' });
    expect(s.model).toBe('grok-3-mini');
    await idleWith(s.id, ASK);
    const [r] = requestsWith('(named model)');
    expect(r!.body.model).toBe('grok-3-mini');
    expect(r!.body.messages[0].content).toBe(goldenGrokSystemPrompt('manual', true));
  });

  it('an API error fails the session with one readable sentence', async () => {
    const s = await startSession('fail please');
    const failed = await waitUntil(async () => {
      const x = await getSession(s.id);
      return x.status === 'failed' ? x : undefined;
    }, 'the session to fail');
    expect(failed.error).toBe(`The model API at ${fake.url} answered 400: model_not_found: Model grok-nope does not exist.`);
  });

  it('a session without XAI_API_KEY fails with a sentence saying so', async () => {
    const bare = await startTestRelay({ XAI_BASE_URL: fake.url, XAI_API_KEY: '' });
    try {
      const { id } = await startSession('hi', bare);
      const failed = await waitUntil(async () => {
        const x = await getSession(id, bare);
        return x.status === 'failed' ? x : undefined;
      }, 'the session to fail');
      expect(failed.error).toBe('XAI_API_KEY is not set: Grok sessions need it (and XAI_BASE_URL for another endpoint).');
    } finally {
      await bare.stop();
    }
  });

  it('rejects an engine other than chat', async () => {
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'grok', engine: 'code', prompt: 'x' } });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('"code" is not an engine of grok; use chat.');
  });
});

describe('durability', () => {
  it('a restart between turns keeps the history: the next message continues it', async () => {
    const first = await startTestRelay(env());
    const s = await startSession('Plan my storage (restart idle)', first);
    await idleWith(s.id, ASK, first);
    await first.close();
    const second = await startTestRelay(env(), first.dataDir);
    try {
      expect((await getSession(s.id, second)).status).toBe('idle');
      await second.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: 'SQLite' } });
      await idleWith(s.id, 'Noted: SQLite. Setting it up now.', second);
      const sent = requestsWith('(restart idle)');
      expect(sent).toHaveLength(2);
      expect(sent[1]!.body.messages.slice(1)).toEqual([
        { role: 'user', content: 'Plan my storage (restart idle)' },
        { role: 'assistant', content: ASK },
        { role: 'user', content: 'SQLite' },
      ]);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  it('a turn cut off mid-request by a restart is re-run', async () => {
    const first = await startTestRelay(env());
    const g = newGate();
    const s = await startSession('slow: plan my storage (restart mid)', first);
    await waitUntil(async () => requestsWith('(restart mid)').length === 1 || undefined, 'the first request');
    await first.close();
    g.open();
    gate = undefined;
    const second = await startTestRelay(env(), first.dataDir);
    try {
      const done = await idleWith(s.id, ASK, second);
      expect(done.transcript!.map((e) => [e.role, e.text])).toEqual([
        ['user', 'slow: plan my storage (restart mid)'],
        ['assistant', ASK],
      ]);
      const sent = requestsWith('(restart mid)');
      expect(sent).toHaveLength(2);
      expect(sent[1]!.body.messages.slice(1)).toEqual([{ role: 'user', content: 'slow: plan my storage (restart mid)' }]);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
