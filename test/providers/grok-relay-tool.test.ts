import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolMessage, lastUserText, startOpenAIServer, toolResultsThisTurn, toolResultFor, type ChatMessage, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { GROK_KEY, grokRelayEnv } from './openai-fixtures.js';
import { goldenRelayTools } from '../support/golden.js';
import { goldenGrokSystemPrompt } from './golden/grok-system-prompt.js';

// The relay tool inside Grok sessions: the real `openai` client against the scripted Chat
// Completions server. Grok gets the four relay tools as function tools; a reply with
// tool_calls runs each call, appends `role: "tool"` messages and asks Grok again, until a
// plain-text reply ends the turn. What Grok reads is taken from the server's request log.

const OPTIONS = ['PostgreSQL', 'SQLite'];

/**
 * B, `[relay card=<id> turn=1]`: one reply with three calls (list_questions,
 * answer_question picking SQLite, answer_question with broken JSON), then "done 1".
 * `turn=2`: list_questions, then answer_question with the plain-text reply "2", then
 * "done 2". `[start]`: start_session, then says what it read. `[forever]`: list_questions,
 * again and again. Anything else: "ok".
 */
function model(request: ChatRequest): ScriptedChatReply {
  const user = lastUserText(request);
  const results = toolResultsThisTurn(request);
  if (user.includes('[start]')) {
    const read = lastToolMessage(request);
    return read ? { text: `read: ${read.content}` } : { toolCalls: [{ id: 'call_start', name: 'start_session', arguments: { provider: 'grok', prompt: 'Say hello.' } }] };
  }
  if (user.includes('[forever]')) return { toolCalls: [{ name: 'list_questions', arguments: {} }] };
  const relay = /\[relay card=(\S+) turn=(\d)\]/.exec(user);
  if (!relay) return { text: 'ok' };
  const [, cardId, turn] = relay;
  if (turn === '1') {
    if (results > 0) return { text: 'done 1' };
    return {
      toolCalls: [
        { id: 'call_list_1', name: 'list_questions', arguments: {} },
        { id: 'call_answer_1', name: 'answer_question', arguments: { cardId, answers: { db: { selected: ['SQLite'] } } } },
        { id: 'call_bad_1', name: 'answer_question', arguments: '{"cardId": ' },
      ],
    };
  }
  if (results === 0) return { toolCalls: [{ id: 'call_list_2', name: 'list_questions', arguments: {} }] };
  if (results === 1) return { text: 'Answering now.', toolCalls: [{ id: 'call_answer_2', name: 'answer_question', arguments: { cardId, answers: '2' } }] };
  return { text: 'done 2' };
}

let fake: OpenAIServer;
let relay: TestRelay;
const env = () => grokRelayEnv(fake.url);

beforeAll(async () => {
  fake = await startOpenAIServer({ model, apiKey: GROK_KEY });
  relay = await startTestRelay(env());
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

async function start(prompt: string, on = relay): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'grok', prompt } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const { session, idleWith, cardsOf, pendingCard } = sessionApi(() => relay);
const requestsWith = (marker: string) =>
  fake.requests.filter((r) => r.path === '/v1/chat/completions' && JSON.stringify(r.body?.messages ?? '').includes(marker));

/** What Grok read for the call with this id: the `tool` message the relay sent back. */
const modelRead = (toolCallId: string) => toolResultFor(fake.requests, toolCallId);

describe('grok: the relay tool', () => {
  it('Grok sees the four tools, lists questions, is refused another session\'s card until its human allows agents, then answers it', async () => {
    // A: a Grok session whose agent asked a card with its own token (POST /api/cards).
    const a = await start('Wait for my card.');
    await idleWith(a.id, 'ok');
    const created = await fetch(new URL('/api/cards', relay.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${relay.sessions.agentToken(a.id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ questions: [{ id: 'db', header: 'DB', text: 'Which database?', options: OPTIONS.map((label) => ({ label })) }] }),
    });
    expect(created.status).toBe(201);
    const card = (await created.json()) as Card;
    expect(card).toMatchObject({ sessionId: a.id, status: 'pending' });

    // B, turn 1: three calls in one reply; all three results go back before Grok is asked again.
    const b = await start(`Help session A. [relay card=${card.id} turn=1]`);
    await idleWith(b.id, 'done 1');
    const refused = `No card "${card.id}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`;
    const badJson = 'The arguments of answer_question are not valid JSON; call it again with a JSON object.';
    expect(modelRead('call_list_1')).toBe('No pending questions that you can see.');
    expect(modelRead('call_answer_1')).toBe(refused);
    expect(modelRead('call_bad_1')).toBe(badJson);
    expect(((await (await relay.api(`/api/cards/${card.id}`)).json()) as Card).status).toBe('pending');

    // Every request offers the four relay tools as Chat Completions function tools.
    const turn1 = requestsWith(`[relay card=${card.id} turn=1]`);
    expect(turn1).toHaveLength(2);
    for (const r of turn1) {
      expect(r.body.tools).toEqual(
        goldenRelayTools().map((d) => ({ type: 'function', function: { name: d.name, description: d.description, parameters: d.inputSchema } })),
      );
      expect(r.body.messages[0]).toEqual({ role: 'system', content: goldenGrokSystemPrompt('autopilot', true) });
    }

    // The human lets agents answer A's cards; turn 2 lists the card and answers "2" (SQLite).
    expect((await relay.api(`/api/sessions/${a.id}`, { method: 'PATCH', json: { agentsMayAnswer: true } })).status).toBe(200);
    expect((await relay.api(`/api/sessions/${b.id}/messages`, { method: 'POST', json: { text: `Try again. [relay card=${card.id} turn=2]` } })).status).toBe(200);
    const done = await idleWith(b.id, 'done 2');
    const listed = JSON.stringify(
      {
        questions: [
          {
            cardId: card.id,
            sessionId: a.id,
            provider: 'api',
            kind: 'question',
            mayAnswer: true,
            expiresAt: card.expiresAt,
            questions: [{ id: 'db', header: 'DB', text: 'Which database?', options: OPTIONS, multiSelect: false }],
          },
        ],
      },
      null,
      2,
    );
    const answered = `Answered card ${card.id}: Which database? → SQLite`;
    expect(modelRead('call_list_2')).toBe(listed);
    expect(modelRead('call_answer_2')).toBe(answered);
    expect((await (await relay.api(`/api/cards/${card.id}`)).json()) as Card).toMatchObject({
      status: 'answered',
      answer: { db: { selected: ['SQLite'] } },
      answeredBy: { kind: 'agent', id: b.id, surface: 'relay-tool' },
    });

    // The whole conversation, as the last request carried it.
    const turn2 = requestsWith(`[relay card=${card.id} turn=2]`);
    expect(turn2).toHaveLength(3);
    const callsOf = (...calls: [string, string, string][]) =>
      calls.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: args } }));
    expect(turn2.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'user', content: `Help session A. [relay card=${card.id} turn=1]` },
      {
        role: 'assistant',
        content: null,
        tool_calls: callsOf(
          ['call_list_1', 'list_questions', '{}'],
          ['call_answer_1', 'answer_question', JSON.stringify({ cardId: card.id, answers: { db: { selected: ['SQLite'] } } })],
          ['call_bad_1', 'answer_question', '{"cardId": '],
        ),
      },
      { role: 'tool', tool_call_id: 'call_list_1', content: 'No pending questions that you can see.' },
      { role: 'tool', tool_call_id: 'call_answer_1', content: refused },
      { role: 'tool', tool_call_id: 'call_bad_1', content: badJson },
      { role: 'assistant', content: 'done 1' },
      { role: 'user', content: `Try again. [relay card=${card.id} turn=2]` },
      { role: 'assistant', content: null, tool_calls: callsOf(['call_list_2', 'list_questions', '{}']) },
      { role: 'tool', tool_call_id: 'call_list_2', content: listed },
      { role: 'assistant', content: 'Answering now.', tool_calls: callsOf(['call_answer_2', 'answer_question', JSON.stringify({ cardId: card.id, answers: '2' })]) },
      { role: 'tool', tool_call_id: 'call_answer_2', content: answered },
    ]);

    // The transcript: Grok's texts and what each call read; no cards of B's own.
    expect(done.transcript!.map((e) => [e.role, e.text])).toEqual([
      ['user', `Help session A. [relay card=${card.id} turn=1]`],
      ['tool', 'No pending questions that you can see.'],
      ['tool', refused],
      ['tool', badJson],
      ['assistant', 'done 1'],
      ['user', `Try again. [relay card=${card.id} turn=2]`],
      ['tool', listed],
      ['assistant', 'Answering now.'],
      ['tool', answered],
      ['assistant', 'done 2'],
    ]);
    expect(await cardsOf(b.id)).toEqual([]);
  });

  it('start_session waits on its approval card; a restart re-opens the same card and the call, and Grok reads the outcome', async () => {
    const first = await startTestRelay(env());
    const b = await start('Start a helper. [start]', first);
    const approval = await pendingCard(b.id, first);
    expect(approval).toMatchObject({ kind: 'approval', tool: 'start_session', sessionId: b.id });
    expect((await session(b.id, first)).status).toBe('waiting');
    await first.close();
    const second = await startTestRelay(env(), first.dataDir);
    try {
      const again = await pendingCard(b.id, second);
      expect(again.id).toBe(approval.id);
      expect((await second.api(`/api/cards/${approval.id}/answer`, { method: 'POST', json: { answers: { approve: { selected: [], text: 'not now' } } } })).status).toBe(200);
      const denied = 'The session was not started: the human denied it and wrote: not now';
      await idleWith(b.id, `read: ${denied}`, second);
      expect(modelRead('call_start')).toBe(denied);
      // One request before the restart, one after: the call was not sent to Grok again.
      const sent = requestsWith('Start a helper. [start]');
      expect(sent).toHaveLength(2);
      expect(sent[1]!.body.messages.slice(1)).toEqual([
        { role: 'user', content: 'Start a helper. [start]' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_start', type: 'function', function: { name: 'start_session', arguments: JSON.stringify({ provider: 'grok', prompt: 'Say hello.' }) } }],
        },
        { role: 'tool', tool_call_id: 'call_start', content: denied },
      ]);
      expect(((await (await second.api('/api/sessions')).json()) as { sessions: Session[] }).sessions).toHaveLength(1);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  it('a model that keeps calling tools is stopped after MAX_TOOL_ROUNDS replies; the next message continues the conversation', async () => {
    const s = await start('Loop. [forever]');
    const rounds = 25; // MAX_TOOL_ROUNDS in providers/grok/runner.ts, written out
    const note = `Grok called tools in ${rounds} replies in a row; the turn was ended. Send a message to continue.`;
    const done = await idleWith(s.id, note);
    expect(requestsWith('Loop. [forever]')).toHaveLength(rounds);
    expect(done.transcript!.filter((e) => e.role === 'tool')).toHaveLength(rounds);
    await relay.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: 'Stop now.' } });
    await idleWith(s.id, 'ok');
    const last = requestsWith('Loop. [forever]').at(-1)!.body.messages as ChatMessage[];
    expect(last.slice(-2).map((m) => [m.role, m.role === 'user' ? m.content : undefined])).toEqual([['tool', undefined], ['user', 'Stop now.']]);
  });
});
