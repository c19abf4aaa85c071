import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../src/cards/model.js';
import { cardIdFor } from '../src/relay/relay.js';
import type { Session } from '../src/sessions/model.js';
import {
  lastToolResult,
  startAnthropicServer,
  toolNames,
  type AnthropicServer,
  type MessagesRequest,
  type ScriptedReply,
} from './fakes/anthropic-server.js';
import { claudeRelayEnv } from './providers/claude-fixtures.js';
import { startTestRelay, type TestRelay } from './support/running-relay.js';
import { sessionApi } from './support/session-api.js';
import { waitUntil } from './support/wait-until.js';

// Cross-session collaboration end to end: real agent sessions (the relay's own Messages loop
// and Claude Code) on the scripted model server, one relay. Session A asks the human with
// AskUserQuestion; session B answers A's card through the relay tool's answer_question when
// A's human let agents answer, and is refused when not. A's model then reads the answer in
// Claude's own format, and the card says an agent (B, through the relay tool) answered it.
// B's start_session raises an approval card that only the human can answer.

const Q = 'Which database?';
const QUESTION = {
  questions: [
    {
      question: Q,
      header: 'DB',
      multiSelect: false,
      options: [
        { label: 'PostgreSQL', description: 'p' },
        { label: 'SQLite', description: 's' },
      ],
    },
  ],
};
const ANSWERED = `Your questions have been answered: "${Q}"="SQLite". You can now continue with these answers in mind.`;
const NOT_VISIBLE = (id: string) =>
  `No card "${id}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`;

// ---------------------------------------------------------------------------
// The scripted model. Each session's prompt names its scenario (`[scenario=…]`) and what the
// test tells it (`[target=<session id>]`, `[card=<card id>]`).

const marker = (request: MessagesRequest, name: string) => JSON.stringify(request.messages).match(new RegExp(`\\[${name}=([\\w-]+)\\]`))?.[1];
const toolCallsSoFar = (request: MessagesRequest) =>
  request.messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')).length;
/** The relay tool as this engine names it: `list_questions` (messages) or `mcp__askrelay__list_questions` (Claude Code). */
const relayName = (request: MessagesRequest, name: string) => toolNames(request).find((t) => t === name || t === `mcp__askrelay__${name}`) ?? `missing:${name}`;

/** B reads list_questions' JSON and picks the card of the target session it may answer. */
function cardFromList(request: MessagesRequest): string {
  const target = marker(request, 'target');
  try {
    const { questions } = JSON.parse(lastToolResult(request)?.content ?? '') as { questions: Array<{ cardId: string; sessionId: string; mayAnswer: boolean }> };
    return questions.find((q) => q.sessionId === target && q.mayAnswer)?.cardId ?? 'c_not_listed';
  } catch {
    return 'c_not_listed';
  }
}

const STEPS: Record<string, Array<(request: MessagesRequest) => ScriptedReply>> = {
  // A: asks the human.
  asker: [() => ({ text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: QUESTION } })],
  // B: finds A's card with list_questions, then answers it.
  helper: [
    (r) => ({ text: 'Let me see who needs help.', toolUse: { name: relayName(r, 'list_questions'), input: {} } }),
    (r) => ({ toolUse: { name: relayName(r, 'answer_question'), input: { cardId: cardFromList(r), answers: { q1: { selected: ['SQLite'] } } } } }),
  ],
  // B, told the card's id: answers it without looking (a plain-text reply).
  blind: [(r) => ({ toolUse: { name: relayName(r, 'answer_question'), input: { cardId: marker(r, 'card'), answers: 'SQLite' } } })],
  // B: starts another session.
  spawner: [
    (r) => ({
      text: 'I will start a helper.',
      toolUse: { name: relayName(r, 'start_session'), input: { provider: 'claude', engine: 'messages', prompt: `Say hello. [scenario=child] [from=${marker(r, 'run')}]` } },
    }),
  ],
  child: [],
};

function model(request: MessagesRequest): ScriptedReply {
  const scenario = marker(request, 'scenario') ?? '';
  if (scenario === 'child') return { text: 'hello from the child' };
  const steps = STEPS[scenario];
  if (!steps) return { text: 'no scenario' };
  const step = steps[toolCallsSoFar(request)];
  if (step) return step(request);
  const result = lastToolResult(request);
  return { text: `read${result?.is_error ? ' (error)' : ''}: ${result?.content ?? ''}` };
}

let fake: AnthropicServer;
let relay: TestRelay;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-cross-session-'));
  fake = await startAnthropicServer({ model });
  relay = await startTestRelay(claudeRelayEnv(fake.url, home));
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------

type Engine = 'messages' | 'code';

async function start(engine: Engine, prompt: string, extra: Record<string, unknown> = {}): Promise<Session> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine, model: 'claude-sonnet-5', prompt, ...extra } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const { session, done, status } = sessionApi(() => relay, { waitMs: 60_000 });
const card = async (id: string) => (await (await relay.api(`/api/cards/${id}`)).json()) as Card;
const pendingCard = (sessionId: string) =>
  waitUntil(async () => {
    const s = await session(sessionId);
    if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
    return ((await (await relay.api(`/api/cards?sessionId=${sessionId}&status=pending`)).json()) as { cards: Card[] }).cards[0];
  }, `a card of ${sessionId}`, 60_000);
const lastReply = (s: Session) => s.transcript!.at(-1)!.text;
/** What the model of a run read last (the latest request whose conversation carries the marker). */
const lastRequestWith = (text: string) =>
  fake.requests.filter((r) => r.path === '/v1/messages' && r.body?.messages && JSON.stringify(r.body.messages).includes(text)).at(-1)?.body as MessagesRequest | undefined;
const asAgent = (id: string) => ({ authorization: `Bearer ${relay.sessions.agentToken(id)}` });

describe.concurrent.each(['messages', 'code'] as const)('the %s engine', (engine) => {
  it("B answers A's question only once A's human lets agents answer; A reads the answer in Claude's format", async () => {
    const run = `${engine}-answer`;
    const a = await start(engine, `Pick a database. [scenario=asker] [run=${run}-a]`);
    const asked = await pendingCard(a.id);
    expect(asked).toMatchObject({ kind: 'question', tool: 'AskUserQuestion', sessionId: a.id });

    // The permission is off: B may not answer (it cannot even see the card), and nothing changes.
    const blind = await start(engine, `Answer it. [scenario=blind] [card=${asked.id}] [run=${run}-blind]`);
    const refused = await done(blind.id);
    expect(lastToolResult(lastRequestWith(`[run=${run}-blind]`)!)).toEqual({ tool_use_id: expect.any(String), content: NOT_VISIBLE(asked.id), is_error: true });
    expect(lastReply(refused)).toBe(`read (error): ${NOT_VISIBLE(asked.id)}`);
    expect(await card(asked.id)).toMatchObject({ status: 'pending' });
    expect((await session(a.id)).status).toBe('waiting');

    // The human lets agents answer A's cards (PATCH, human only).
    expect((await relay.api(`/api/sessions/${a.id}`, { method: 'PATCH', json: { agentsMayAnswer: true }, headers: asAgent(blind.id) })).status).toBe(403);
    const patched = await relay.api(`/api/sessions/${a.id}`, { method: 'PATCH', json: { agentsMayAnswer: true } });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Session).agentsMayAnswer).toBe(true);

    // B lists the questions, finds A's card and answers it.
    const b = await start(engine, `Help the others. [scenario=helper] [target=${a.id}] [run=${run}-b]`);
    const helped = await done(b.id);
    const bRead = `Answered card ${asked.id}: ${Q} → SQLite`;
    expect(lastToolResult(lastRequestWith(`[run=${run}-b]`)!)).toEqual({ tool_use_id: expect.any(String), content: bRead });
    expect(lastReply(helped)).toBe(`read: ${bRead}`);

    // A's model reads the answer exactly as Claude Code writes it, and the card says who answered.
    const answeredA = await done(a.id);
    expect(lastToolResult(lastRequestWith(`[run=${run}-a]`)!)).toMatchObject({ content: ANSWERED });
    expect(lastReply(answeredA)).toBe(`read: ${ANSWERED}`);
    expect(await card(asked.id)).toMatchObject({
      status: 'answered',
      answer: { q1: { selected: ['SQLite'] } },
      answeredBy: { kind: 'agent', id: b.id, surface: 'relay-tool' },
    });
  }, 120_000);

  it("B's start_session raises an approval card only the human can answer; approving it starts the session", async () => {
    const run = `${engine}-spawn`;
    // Both sessions let agents answer their questions, so A can see B's card: still no agent may answer an approval.
    const a = await start('messages', `Pick a database. [scenario=asker] [run=${run}-a]`, { agentsMayAnswer: true });
    const b = await start(engine, `Get help. [scenario=spawner] [run=${run}]`, { agentsMayAnswer: true });
    const approval = await pendingCard(b.id);
    expect(approval).toMatchObject({ kind: 'approval', tool: 'start_session', origin: 'relay', sessionId: b.id, questions: [{ id: 'approve' }] });
    expect(approval.questions[0]!.text).toContain('[scenario=child]');
    expect(await status(b.id, 'waiting')).toBe('waiting');

    const approve = { answers: { approve: { selected: ['Approve'] } } };
    for (const agent of [b.id, a.id]) {
      const res = await relay.api(`/api/cards/${approval.id}/answer`, { method: 'POST', json: approve, headers: asAgent(agent) });
      expect(res.status, agent === b.id ? "B's token" : "A's token").toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('human_only');
    }
    // Nor through the relay tool: C's answer_question reads the refusal.
    const c = await start(engine, `Approve it. [scenario=blind] [card=${approval.id}] [run=${run}-c]`);
    await done(c.id);
    expect(lastToolResult(lastRequestWith(`[run=${run}-c]`)!)).toEqual({
      tool_use_id: expect.any(String),
      content: `Card ${approval.id} is an approval; only the human can answer it. Wait for them, or ask them.`,
      is_error: true,
    });
    expect(await card(approval.id)).toMatchObject({ status: 'pending' });

    // The human approves: B reads that the session started, and it runs.
    expect((await relay.api(`/api/cards/${approval.id}/answer`, { method: 'POST', json: approve })).status).toBe(200);
    expect(await card(approval.id)).toMatchObject({ answeredBy: { kind: 'human', id: 'operator' } });
    const spawned = await done(b.id);
    const result = lastToolResult(lastRequestWith(`[run=${run}]`)!)!;
    const started = result.content.match(/^The human approved\. Started session (s_[0-9a-f]+) \(claude, engine messages\); it is running\. Use watch_session with sessionId "\1" to follow it\.$/);
    expect(started, result.content).not.toBeNull();
    expect(result.is_error).toBeUndefined();
    expect(lastReply(spawned)).toBe(`read: ${result.content}`);
    // The card belongs to B's tool call: its id comes from B's tool_use id (the code engine gets it from Claude Code's MCP call).
    expect(approval.id).toBe(cardIdFor(b.id, result.tool_use_id));
    const childId = started![1]!;
    const child = await done(childId);
    expect(child).toMatchObject({ provider: 'claude', engine: 'messages' });
    expect(child.transcript![0]).toMatchObject({ role: 'user', text: `Say hello. [scenario=child] [from=${run}]` });
    expect(lastReply(child)).toBe('hello from the child');
    // Exactly one session was started.
    const all = ((await (await relay.api('/api/sessions')).json()) as { sessions: Session[] }).sessions;
    const children = await Promise.all(all.map((s) => session(s.id)));
    expect(children.filter((s) => s.transcript![0]?.text.includes(`[from=${run}]`)).map((s) => s.id)).toEqual([childId]);
    // The agent that asked may now watch the session it started.
    expect((await relay.api(`/api/sessions/${childId}`, { headers: asAgent(b.id) })).status).toBe(200);
    await relay.api(`/api/sessions/${a.id}`, { method: 'DELETE' });
  }, 120_000);
});
