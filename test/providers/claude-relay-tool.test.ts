import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { relayToolDefinitions } from '../../src/sessions/relay-tool.js';
import type { RunnerContext } from '../../src/sessions/runner.js';
import { messagesEngine } from '../../providers/claude/engine-messages.js';
import {
  lastToolResult,
  lastUserText,
  startAnthropicServer,
  toolNames,
  type AnthropicServer,
  type ContentBlock,
  type MessagesRequest,
  type ScriptedReply,
} from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';
import { goldenRelayTools } from '../support/golden.js';
import { waitUntil } from '../support/wait-until.js';
import { claudeRelayEnv, dbQuestion } from './claude-fixtures.js';

// The relay tool inside Claude sessions, both engines, the real SDKs against the scripted
// Messages server: the messages engine offers list_questions, answer_question, start_session
// and watch_session as plain tools; the code engine (Claude Code) gets them from askrelay's
// in-process MCP server as mcp__askrelay__<tool>, without an approval card. The model reads
// the relay tool's text, byte for byte, and is_error on a refusal.

const RELAY_TOOLS = ['list_questions', 'answer_question', 'start_session', 'watch_session'];

const scenarioOf = (request: MessagesRequest) => JSON.stringify(request.messages).match(/\[scenario=(\w+)\]/)?.[1];
/** The card id the test put into the prompt (`[card=c_…]`). */
const cardOf = (request: MessagesRequest) => JSON.stringify(request.messages).match(/\[card=(c_\w+)\]/)?.[1] ?? 'c_none';
const toolCallsSoFar = (request: MessagesRequest) =>
  request.messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')).length;
/** The relay tool under the name this engine offers it: Claude Code's MCP name, or the plain one. */
const relayName = (request: MessagesRequest, name: string) => toolNames(request).find((t) => t === name || t === `mcp__askrelay__${name}`) ?? `missing:${name}`;

const STEPS: Record<string, Array<(request: MessagesRequest) => ScriptedReply>> = {
  // A session asking the human; its card is what the probe lists and tries to answer.
  target: [() => ({ text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [dbQuestion()] } } })],
  // Input the relay tool's schema refuses: one sentence, is_error.
  bad: [(r) => ({ toolUse: { name: relayName(r, 'answer_question'), input: { cardId: '', answers: 'x' } } })],
  probe: [
    (r) => ({ text: 'Looking.', toolUse: { name: relayName(r, 'list_questions'), input: {} } }),
    (r) => ({ toolUse: { name: relayName(r, 'answer_question'), input: { cardId: cardOf(r), answers: 'PostgreSQL' } } }),
  ],
  // Starts a session (the human must approve); the test restarts the relay meanwhile.
  spawner: [(r) => ({ toolUse: { name: relayName(r, 'start_session'), input: { provider: 'claude', engine: 'messages', prompt: `Say hello. [scenario=child] [from=${runOf(r)}]` } } })],
};
const runOf = (request: MessagesRequest) => JSON.stringify(request.messages).match(/\[run=([\w-]+)\]/)?.[1] ?? 'none';

function model(request: MessagesRequest): ScriptedReply {
  const scenario = scenarioOf(request) ?? '';
  if (scenario === 'child') return { text: 'hello from the child' };
  const steps = STEPS[scenario];
  if (!steps) return { text: 'no scenario' };
  const done = toolCallsSoFar(request);
  // After a restart Claude Code's resumed session gets the relay tool's result as its prompt.
  const typed = lastUserText(request).trim();
  if (done > 0 && typed) return { text: `continued: ${typed}` };
  const step = steps[done];
  if (step) return step(request);
  const result = lastToolResult(request);
  return { text: `ack ${result?.is_error ? 'error' : 'ok'}` };
}

let fake: AnthropicServer;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-relay-tool-home-'));
  fake = await startAnthropicServer({ model });
});
afterAll(async () => {
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

/** Requests of one session, told apart by a marker in its prompt. */
const requestsWith = (marker: string) =>
  fake.requests.filter((r) => r.path === '/v1/messages' && r.body?.messages && JSON.stringify(r.body.messages).includes(marker)).map((r) => r.body as MessagesRequest);

/** Every tool_result block the model was sent in a session, as it was on the wire. */
function rawToolResults(marker: string): ContentBlock[] {
  const last = requestsWith(marker).at(-1);
  return (last?.messages ?? []).flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result') : []));
}

describe.each(['messages', 'code'] as const)('the %s engine', (engine) => {
  let relay: TestRelay;

  beforeAll(async () => {
    relay = await startTestRelay(claudeRelayEnv(fake.url, home));
  });
  afterAll(async () => {
    await relay?.stop();
  });

  const start = async (prompt: string, extra: Record<string, unknown> = {}, eng: string = engine): Promise<Session> => {
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: eng, model: 'claude-sonnet-5', prompt, ...extra } });
    expect(res.status).toBe(201);
    return (await res.json()) as Session;
  };
  const { session, pendingCard, done } = sessionApi(() => relay, { waitMs: 60_000 });

  it('list_questions reads the JSON of what it may see; answer_question on a card it may not answer, or with bad input, reads a refusal (is_error)', async () => {
    // Two sessions wait on a question (on the messages engine, which is quick): one lets agents answer, one does not.
    const open = await start(`Pick a database. [scenario=target] (${engine} open)`, { agentsMayAnswer: true }, 'messages');
    const closed = await start(`Pick a database. [scenario=target] (${engine} closed)`, {}, 'messages');
    const [openCard, closedCard] = await Promise.all([pendingCard(open.id), pendingCard(closed.id)]);

    const probe = await start(`Help the others. [scenario=probe] [card=${closedCard.id}] (${engine} probe)`);
    const finished = await done(probe.id);
    expect(finished.transcript!.at(-1)!.text).toBe('ack error');

    // Golden: the exact text the model reads for each call.
    const listed = `{
  "questions": [
    {
      "cardId": "${openCard.id}",
      "sessionId": "${open.id}",
      "provider": "claude",
      "kind": "question",
      "mayAnswer": true,
      "expiresAt": "${openCard.expiresAt}",
      "questions": [
        {
          "id": "q1",
          "header": "DB",
          "text": "Which database?",
          "options": [
            "PostgreSQL",
            "MySQL, MariaDB",
            "SQLite"
          ],
          "multiSelect": false
        }
      ]
    }
  ]
}`;
    const refused = `No card "${closedCard.id}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`;
    const sent = rawToolResults(`(${engine} probe)`);
    const ids = requestsWith(`(${engine} probe)`)
      .at(-1)!
      .messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : []));
    if (engine === 'messages') {
      // The relay's own loop: the text as the block's content, is_error only on a refusal.
      expect(sent).toEqual([
        { type: 'tool_result', tool_use_id: ids[0], content: listed },
        { type: 'tool_result', tool_use_id: ids[1], content: refused, is_error: true },
      ]);
    } else {
      // Claude Code: the MCP tool's text content as a text block; an MCP result with isError
      // becomes an is_error tool_result carrying the text as a string (Claude Code adds
      // cache_control to the last block of a request; that is its prompt caching, not content).
      expect(sent.map(({ cache_control: _cache, ...block }) => block)).toEqual([
        { type: 'tool_result', tool_use_id: ids[0], content: [{ type: 'text', text: listed }] },
        { type: 'tool_result', tool_use_id: ids[1], content: refused, is_error: true },
      ]);
    }
    // The transcript shows each call's result, and neither card changed.
    expect(finished.transcript!.filter((e) => e.role === 'tool').map((e) => e.text)).toEqual([`list_questions: ${listed}`, `answer_question: ${refused}`]);
    expect(((await (await relay.api(`/api/cards/${closedCard.id}`)).json()) as Card).status).toBe('pending');
    expect(((await (await relay.api(`/api/cards/${openCard.id}`)).json()) as Card).status).toBe('pending');
    // No card for the relay tool calls themselves (they need no approval).
    expect(((await (await relay.api(`/api/cards?sessionId=${probe.id}`)).json()) as { cards: Card[] }).cards).toEqual([]);
    await Promise.all([open, closed].map((s) => relay.api(`/api/sessions/${s.id}`, { method: 'DELETE' })));

    const bad = await start(`Bad input. [scenario=bad] (${engine} bad)`);
    await done(bad.id);
    // The relay tool's own sentence on both engines (Claude Code's MCP server lets the value
    // through to it), never the MCP SDK's list of zod issues.
    const [badResult] = rawToolResults(`(${engine} bad)`);
    expect(badResult).toMatchObject({ type: 'tool_result', is_error: true });
    expect(badResult!.content).toEqual(expect.stringMatching(/^cardId\b.*\bis empty\.?$/i));

    // What the model was offered: the four relay tools next to AskUserQuestion.
    const request = requestsWith(`(${engine} probe)`)[0]!;
    const names = toolNames(request);
    expect(names).toContain('AskUserQuestion');
    const tools = request.tools!;
    for (const definition of goldenRelayTools()) {
      const name = engine === 'messages' ? definition.name : `mcp__askrelay__${definition.name}`;
      const offered = tools.find((t) => t.name === name);
      expect(offered, name).toBeDefined();
      if (engine === 'messages') {
        // Exactly the recorded definition in the Messages API's form.
        expect(offered).toEqual({ name: definition.name, description: definition.description, input_schema: definition.inputSchema });
      } else {
        // Claude Code lists the MCP tool with the recorded description and the same
        // properties and required fields (its converter adds a draft-07 $schema).
        expect(offered!.description).toBe(definition.description);
        const schema = offered!.input_schema as { type: string; properties: Record<string, unknown>; required?: string[] };
        expect(schema.type).toBe('object');
        expect(schema.properties).toEqual(definition.inputSchema.properties);
        expect(schema.required ?? []).toEqual(definition.inputSchema.required ?? []);
      }
    }
    expect(names.filter((n) => RELAY_TOOLS.some((t) => n.endsWith(t)))).toHaveLength(4);
  }, 90_000);
});

describe.each(['messages', 'code'] as const)('the %s engine across a relay restart', (engine) => {
  const env = () => claudeRelayEnv(fake.url, home);

  it('start_session waiting on its approval card: after a restart the same card is waited for, and the approval starts one session', async () => {
    const run = `${engine}-restart`;
    const first = await startTestRelay(env());
    const res = await first.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine, prompt: `Get help. [scenario=spawner] [run=${run}]` } });
    const b = (await res.json()) as Session;
    const pending = (on: TestRelay) =>
      waitUntil(async () => ((await (await on.api(`/api/cards?sessionId=${b.id}&status=pending`)).json()) as { cards: Card[] }).cards[0], 'the approval card', 60_000);
    const approval = await pending(first);
    expect(approval).toMatchObject({ kind: 'approval', tool: 'start_session' });
    await first.close();

    const second = await startTestRelay(env(), first.dataDir);
    try {
      const again = await pending(second);
      expect(again.id).toBe(approval.id);
      expect(again.expiresAt).toBe(approval.expiresAt);
      await waitUntil(async () => ((await (await second.api(`/api/sessions/${b.id}`)).json()) as Session).status === 'waiting', 'B waiting again');
      const requestsBefore = requestsWith(`[run=${run}]`).length;
      expect((await second.api(`/api/cards/${approval.id}/answer`, { method: 'POST', json: { answers: { approve: { selected: ['Approve'] } } } })).status).toBe(200);

      const finished = await waitUntil(async () => {
        const s = (await (await second.api(`/api/sessions/${b.id}`)).json()) as Session;
        if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
        return s.status === 'idle' && s.transcript!.at(-1)?.role === 'assistant' ? s : undefined;
      }, 'B done', 60_000);
      const after = requestsWith(`[run=${run}]`).slice(requestsBefore);
      expect(after).toHaveLength(1); // the model was asked once more, with the result
      const text = (engine === 'messages' ? lastToolResult(after[0]!)?.content : lastUserText(after[0]!)) ?? '';
      const started = /The human approved\. Started session (s_[0-9a-f]+) \(claude, engine messages\); it is running\. Use watch_session with sessionId "\1" to follow it\.$/.exec(text);
      expect(started, text).not.toBeNull();
      if (engine === 'messages') {
        // The loop made the pending call again and sends its tool_result as if nothing happened.
        expect(finished.transcript!.at(-1)!.text).toBe('ack ok');
      } else {
        // Claude Code cannot answer a call its dead process left open: the result is the resumed session's prompt.
        // relayToolRestartPrompt in src/sessions/relay-tool.ts (heading style), written out.
        expect(text).toBe(`(askrelay restarted while your start_session call was open. Its result:)\n${started![0]!}`);
        expect(finished.transcript!.at(-1)!.text).toBe(`continued: ${text}`);
      }
      // Exactly one session was started, and it runs.
      const all = ((await (await second.api('/api/sessions')).json()) as { sessions: Session[] }).sessions;
      const full = await Promise.all(all.map(async (s) => (await (await second.api(`/api/sessions/${s.id}`)).json()) as Session));
      expect(full.filter((s) => s.transcript![0]?.text.includes(`[from=${run}]`)).map((s) => s.id)).toEqual([started![1]]);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('the messages engine keeps each tool call\'s result as soon as it has it', () => {
  it('after a restart only the calls without a result run again; the model gets all results in order', async () => {
    // A reply with two tool calls; the relay stopped after the first had its result and
    // while the second (start_session) waited on the human.
    const saved: unknown[] = [];
    const calls: Array<[string, unknown, string | undefined]> = [];
    const logged: string[] = [];
    const state = {
      messages: [
        { role: 'user', content: 'Do two things. [scenario=partial]' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_first', name: 'list_questions', input: {} },
            { type: 'tool_use', id: 'toolu_second', name: 'start_session', input: { provider: 'claude', prompt: 'hello' } },
          ],
        },
      ],
      partial: { results: [{ type: 'tool_result', tool_use_id: 'toolu_first', content: 'listed before the restart' }], endTurn: false },
    };
    const ctx: RunnerContext = {
      session: { id: 's_partial', provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', status: 'running', relayMode: 'autopilot', agentsMayAnswer: false, createdAt: '', updatedAt: '' },
      signal: new AbortController().signal,
      ask: () => Promise.reject(new Error('no card expected')),
      log: (_role, text) => logged.push(text),
      heartbeat: () => {},
      loadState: <T>() => structuredClone(state) as T,
      saveState: (next) => saved.push(structuredClone(next)),
      env: {},
      relayTools: {
        definitions: relayToolDefinitions(['claude']),
        call: async (name, args, toolCallId) => {
          calls.push([name, args, toolCallId]);
          return { text: 'The human approved.', isError: false };
        },
      },
    };
    await messagesEngine(ctx, { baseUrl: fake.url, apiKey: 'dummy', model: 'claude-sonnet-5' }).start('Do two things.', true);

    expect(calls).toEqual([['start_session', { provider: 'claude', prompt: 'hello' }, 'toolu_second']]);
    const sent = requestsWith('[scenario=partial]').at(-1)!;
    expect(sent.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_first', content: 'listed before the restart' },
        { type: 'tool_result', tool_use_id: 'toolu_second', content: 'The human approved.' },
      ],
    });
    // Each result was stored as soon as it was known, and the partial results went once the message was complete.
    expect(saved[0]).toMatchObject({ partial: { results: [{ tool_use_id: 'toolu_first' }, { tool_use_id: 'toolu_second' }] } });
    const last = saved.at(-1) as { messages: unknown[]; partial?: unknown };
    expect(last.partial).toBeUndefined();
    expect(last.messages).toHaveLength(4);
    expect(logged).toEqual(['start_session: The human approved.', 'no scenario']);
  });
});
