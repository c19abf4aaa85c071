import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolMessage, lastUserText, startOpenAIServer, toolResultsThisTurn, toolResultFor, toolNames, toolSchema, type ChatMessage, type ChatTool, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { copilotRelayEnv } from './openai-fixtures.js';
import { goldenRelayTools } from '../support/golden.js';

// The relay tool inside Copilot / OpenAI sessions, through the real @github/copilot-sdk
// runtime offline (a BYOK provider pointed at the scripted Chat Completions server), on both
// engines. Session A asks with ask_user and waits on its card; session B's model calls
// list_questions and answer_question on A's card. What B's model reads is taken from the
// server's request log (the `role: "tool"` message with the call's id).

const COLORS = ['Red', 'Green', 'Blue'];

/**
 * A: `[ask]` calls ask_user, then says what it read. B: `[relay card=<id> turn=<t>]` calls
 * list_questions, then answer_question on that card (picking Green), then says "done".
 * `[start <t>]` calls start_session, then says "started <t>".
 */
function model(request: ChatRequest): ScriptedChatReply {
  const user = lastUserText(request);
  if (user.includes('when askrelay restarted')) return { text: 'heard the result' };
  const start = /\[start (\w+)\]/.exec(user)?.[1];
  if (start) {
    if (lastToolMessage(request)) return { text: `started ${start}` };
    return { toolCalls: [{ id: `call_start_${start}`, name: 'start_session', arguments: { provider: 'openai', prompt: `Say hello (${start}).` } }] };
  }
  if (user.includes('[ask]')) {
    const read = lastToolMessage(request);
    return read ? { text: `ack ${read.content}` } : { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which color?', choices: COLORS } }] };
  }
  const relay = /\[relay card=(\S+) turn=(\w+)\]/.exec(user);
  if (!relay) return { text: `no case: ${user}` };
  const [, cardId, turn] = relay;
  const results = toolResultsThisTurn(request);
  if (results === 0) return { toolCalls: [{ id: `call_list_${turn}`, name: 'list_questions', arguments: {} }] };
  if (results === 1) {
    return { toolCalls: [{ id: `call_answer_${turn}`, name: 'answer_question', arguments: { cardId, answers: { q1: { selected: ['Green'] } } } }] };
  }
  return { text: `done ${turn}` };
}

let fake: OpenAIServer;
let relay: TestRelay;
let home: string;
let env: Record<string, string>;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-relay-tool-home-'));
  fake = await startOpenAIServer({ model });
  env = copilotRelayEnv(fake.url, home);
  relay = await startTestRelay(env);
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

async function start(json: Record<string, unknown>, on = relay): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { model: 'gpt-scripted', ...json } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const { session, cardsOf: cardsOfOn, pendingCard, idleWith } = sessionApi(() => relay);

/** What the model read for the call with this id: the `tool` message the runtime sent back. */
const modelRead = (toolCallId: string) => toolResultFor(fake.requests, toolCallId);
const requestsOf = (marker: string) => fake.requests.filter((r) => r.body?.messages && JSON.stringify(r.body.messages).includes(marker));

/**
 * The schemas the model sees (golden): the relay tool's JSON schemas without the
 * validation-only keywords (minLength, propertyNames) the runtime would turn into text.
 */
const SEEN_SCHEMAS: Record<string, unknown> = {
  list_questions: { type: 'object', properties: {} },
  answer_question: {
    type: 'object',
    properties: {
      cardId: { type: 'string' },
      answers: {
        anyOf: [
          {
            type: 'object',
            additionalProperties: {
              type: 'object',
              properties: { selected: { type: 'array', items: { type: 'string' } }, text: { type: 'string' } },
              required: ['selected'],
            },
          },
          { type: 'string' },
        ],
      },
    },
    required: ['cardId', 'answers'],
  },
  start_session: {
    type: 'object',
    properties: {
      provider: { type: 'string', enum: ['claude', 'deepseek', 'copilot', 'openai', 'grok', 'codex', 'gemini'] },
      engine: { type: 'string' },
      model: { type: 'string' },
      prompt: { type: 'string' },
      relayMode: { type: 'string', enum: ['autopilot', 'manual'] },
      agentsMayAnswer: { type: 'boolean' },
    },
    required: ['provider', 'prompt'],
  },
  watch_session: { type: 'object', properties: { sessionId: { type: 'string' } }, required: ['sessionId'] },
};

/** list_questions' text for one visible, answerable card (the relay tool's JSON, 2-space indented). */
const listed = (card: Card, owner: Session) =>
  JSON.stringify(
    {
      questions: [
        {
          cardId: card.id,
          sessionId: owner.id,
          provider: 'openai',
          kind: 'question',
          mayAnswer: true,
          expiresAt: card.expiresAt,
          questions: [{ id: 'q1', text: 'Which color?', options: COLORS, multiSelect: false }],
        },
      ],
    },
    null,
    2,
  );

describe.each([
  ['openai', 'sdk'],
  ['copilot', 'extension'],
] as const)('%s, engine %s: the relay tool', (provider, engine) => {
  it('the model sees the four tools, lists questions, is refused another session\'s card until its human allows agents, then answers it', async () => {
    // A: an OpenAI session waiting on its ask_user card; agents may not answer it yet.
    const a = await start({ provider: 'openai', engine: 'sdk', prompt: `Pick a color for me (${engine}). [ask]` });
    const card = await pendingCard(a.id);
    expect(card).toMatchObject({ sessionId: a.id, kind: 'question', status: 'pending' });

    // B, first turn: list_questions shows nothing (A's cards are hidden from agents), and
    // answer_question on A's card is refused with one sentence.
    const b = await start({ provider, engine, prompt: `Help session A. [relay card=${card.id} turn=${engine}1]` });
    await idleWith(b.id, `done ${engine}1`);
    expect(modelRead(`call_list_${engine}1`)).toBe('No pending questions that you can see.');
    expect(modelRead(`call_answer_${engine}1`)).toBe(
      `No card "${card.id}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`,
    );
    expect((await relay.api(`/api/cards/${card.id}`).then((r) => r.json())) as Card).toMatchObject({ status: 'pending' });
    // A turn waiting on a card shows `waiting`, whatever the runtime sends meanwhile.
    expect((await session(a.id)).status).toBe('waiting');

    // The model sees the relay tool as four function tools with the recorded descriptions.
    const [first] = requestsOf(`[relay card=${card.id} turn=${engine}1]`);
    const names = toolNames(first!.body);
    // After the runtime's own tools (ask_user among them: ours on sdk, Copilot's on extension).
    expect(names.slice(-4)).toEqual(['list_questions', 'answer_question', 'start_session', 'watch_session']);
    expect(names).toContain('ask_user');
    for (const d of goldenRelayTools()) {
      expect(toolSchema(first!.body, d.name)).toEqual(SEEN_SCHEMAS[d.name]);
      const tool = (first!.body.tools as ChatTool[]).find((t) => t.function?.name === d.name)!;
      expect(tool.function!.description).toBe(d.description);
    }

    // The human lets agents answer A's cards; B's next turn lists the card and answers it.
    const patched = await relay.api(`/api/sessions/${a.id}`, { method: 'PATCH', json: { agentsMayAnswer: true } });
    expect(patched.status).toBe(200);
    const sent = await relay.api(`/api/sessions/${b.id}/messages`, { method: 'POST', json: { text: `Try again. [relay card=${card.id} turn=${engine}2]` } });
    expect(sent.status).toBe(200);
    await idleWith(b.id, `done ${engine}2`);
    expect(modelRead(`call_list_${engine}2`)).toBe(listed(card, a));
    expect(modelRead(`call_answer_${engine}2`)).toBe(`Answered card ${card.id}: Which color? → Green`);

    const answered = (await (await relay.api(`/api/cards/${card.id}`)).json()) as Card;
    expect(answered).toMatchObject({
      status: 'answered',
      answer: { q1: { selected: ['Green'] } },
      answeredBy: { kind: 'agent', id: b.id, surface: 'relay-tool' },
    });
    // A's waiting ask_user call got the answer in its own format.
    await idleWith(a.id, 'ack User selected: Green');

    // No permission request, no approval card: B never had a card of its own.
    expect(await cardsOfOn(b.id, relay)).toEqual([]);
    const transcript = (await session(b.id)).transcript!.filter((e) => e.role === 'tool').map((e) => e.text);
    expect(transcript).toEqual([
      'No pending questions that you can see.',
      `No card "${card.id}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`,
      listed(card, a),
      `Answered card ${card.id}: Which color? → Green`,
    ]);
  });
});

describe.each(['sdk', 'extension'] as const)('engine %s: start_session across a relay restart', (engine) => {
  it('raises an approval card (no permission prompt); after a restart the same card is open, and approving it starts the session and tells the model', async () => {
    const first = await startTestRelay(env);
    const b = await start({ provider: 'openai', engine, prompt: `Start a helper. [start ${engine}]` }, first);
    const approval = await pendingCard(b.id, first);
    expect(approval).toMatchObject({
      kind: 'approval',
      tool: 'start_session',
      origin: 'relay',
      sessionId: b.id,
      questions: [{ id: 'approve', options: [{ label: 'Approve' }, { label: 'Deny' }] }],
    });
    expect(approval.questions[0]!.text).toContain(`Say hello (${engine}).`);
    expect((await session(b.id, first)).status).toBe('waiting');
    await first.close();
    const second = await startTestRelay(env, first.dataDir);
    try {
      const again = await pendingCard(b.id, second);
      expect(again.id).toBe(approval.id);
      expect(again.expiresAt).toBe(approval.expiresAt);
      const res = await second.api(`/api/cards/${approval.id}/answer`, { method: 'POST', json: { answers: { approve: { selected: ['Approve'] } } } });
      expect(res.status).toBe(200);

      const done = await idleWith(b.id, engine === 'sdk' ? 'started sdk' : 'heard the result', second);
      // Exactly one session was started (the re-opened call did not start a second one).
      const all = ((await (await second.api('/api/sessions')).json()) as { sessions: Session[] }).sessions;
      expect(all).toHaveLength(2);
      const helper = await session(all.find((s) => s.id !== b.id)!.id, second);
      expect(helper).toMatchObject({ provider: 'openai', engine: 'sdk', agentsMayAnswer: false });
      expect(helper.transcript![0]).toMatchObject({ role: 'user', text: `Say hello (${engine}).` });
      expect(await cardsOfOn(b.id, second)).toEqual([expect.objectContaining({ id: approval.id, status: 'answered' })]);
      const result = `The human approved. Started session ${helper!.id} (openai, engine sdk); it is running. Use watch_session with sessionId "${helper!.id}" to follow it.`;
      if (engine === 'sdk') {
        // The call itself got the result, in the same Copilot session.
        expect(modelRead('call_start_sdk')).toBe(result);
      } else {
        // The runtime dropped the call; the result comes as the next user message.
        const told = fake.requests.filter((r) => r.body?.messages && lastUserText(r.body).includes('when askrelay restarted') && JSON.stringify(r.body.messages).includes('[start extension]'));
        expect(told.length).toBeGreaterThanOrEqual(1);
        expect(lastUserText(told[0]!.body)).toBe(`Your start_session call was still open when askrelay restarted. Its result: ${result}`);
      }
      expect(done.transcript!.filter((e) => e.role === 'tool').map((e) => e.text)).toContain(result);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
