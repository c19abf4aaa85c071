import { approveAll, CopilotClient } from '@github/copilot-sdk';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolMessage, lastUserText, startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Restarting the relay while a Copilot card is pending keeps the card, and the answer given
// after the restart reaches the resumed Copilot session (the real runtime, offline; it
// keeps its sessions under $HOME/.copilot/session-state, so both relays share HOME).

function model(request: ChatRequest): ScriptedChatReply {
  if (lastUserText(request).includes('while askrelay restarted')) return { text: `heard: ${lastUserText(request)}` };
  const tool = lastToolMessage(request);
  if (tool) return { text: `ack ${tool.content}` };
  if (lastUserText(request).includes('[shell]')) return { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > resumed.txt && cat resumed.txt', description: 'write' } }] };
  if (lastUserText(request).includes('[ask]')) return { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which database?', choices: ['PostgreSQL', 'SQLite'] } }] };
  return { text: `heard: ${lastUserText(request)}` };
}

let fake: OpenAIServer;
let home: string;
let env: Record<string, string>;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-resume-home-'));
  fake = await startOpenAIServer({ model });
  env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test', HOME: home, ASKRELAY_WORKDIR: home };
});
afterAll(async () => {
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

const pendingCard = (id: string, on: TestRelay) =>
  waitUntil(async () => ((await (await on.api(`/api/cards?sessionId=${id}&status=pending`)).json()) as { cards: Card[] }).cards[0], `a card of ${id}`, 30_000);
const idle = (id: string, on: TestRelay) =>
  waitUntil(async () => {
    const s = (await (await on.api(`/api/sessions/${id}`)).json()) as Session;
    if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
    return s.status === 'idle' && s;
  }, `${id} idle`, 30_000);

async function startSession(on: TestRelay, engine: 'sdk' | 'extension'): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'openai', engine, model: 'gpt-scripted', prompt: `Set it up (${engine}). [ask]` } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}

describe('durability', () => {
  it('sdk engine: a restart while a card is pending keeps the card; the answer reaches the pending call in the resumed Copilot session', async () => {
    const first = await startTestRelay(env);
    const s = await startSession(first, 'sdk');
    const card = await pendingCard(s.id, first);
    const requestsBefore = fake.requests.length;
    await first.close();
    const second = await startTestRelay(env, first.dataDir);
    try {
      const again = await pendingCard(s.id, second);
      expect(again.id).toBe(card.id);
      expect(again.expiresAt).toBe(card.expiresAt);
      expect(fake.requests.length).toBe(requestsBefore);
      await second.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
      const done = await idle(s.id, second);
      // The pending call itself got the answer: the model's next request carries it as the tool result.
      const after = fake.requests.slice(requestsBefore).filter((r) => r.body?.messages);
      expect(after).toHaveLength(1);
      expect(lastToolMessage(after[0].body)?.content).toBe('User selected: SQLite');
      // The same Copilot session: its history holds the original prompt.
      expect(JSON.stringify(after[0].body.messages)).toContain('Set it up (sdk). [ask]');
      expect(JSON.stringify(after[0].body.messages)).not.toContain('askrelay restarted');
      expect(done.transcript!.at(-1)!.text).toBe('ack User selected: SQLite');
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  it('extension engine: the card survives the restart; its answer reaches the resumed session as a new user message', async () => {
    const first = await startTestRelay(env);
    const s = await startSession(first, 'extension');
    const card = await pendingCard(s.id, first);
    const requestsBefore = fake.requests.length;
    await first.close();
    const second = await startTestRelay(env, first.dataDir);
    try {
      const again = await pendingCard(s.id, second);
      expect(again.id).toBe(card.id);
      await second.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
      const done = await idle(s.id, second);
      const after = fake.requests.slice(requestsBefore).filter((r) => r.body?.messages);
      expect(after).toHaveLength(1);
      // The runtime cannot take a late answer to its own ask_user: it closed the call itself,
      // as interrupted or (a race as the relay stops) as an error.
      expect(after[0].body.messages.find((m: { role: string }) => m.role === 'tool')?.content).toMatch(
        /^(The execution of this tool, or a previous tool was interrupted\.|User responded: The user was unable to respond due to an error)$/,
      );
      expect(lastUserText(after[0].body)).toBe('The user answered your question while askrelay restarted: SQLite');
      expect(JSON.stringify(after[0].body.messages)).toContain('Set it up (extension). [ask]');
      expect(done.transcript!.at(-1)!.text).toBe('heard: The user answered your question while askrelay restarted: SQLite');
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  it('sdk engine: a pending approval card survives the restart; Allow then runs the command in the resumed session', async () => {
    const first = await startTestRelay(env);
    const res = await first.api('/api/sessions', { method: 'POST', json: { provider: 'openai', engine: 'sdk', model: 'gpt-scripted', prompt: 'Write it. [shell]' } });
    const s = (await res.json()) as Session;
    const card = await pendingCard(s.id, first);
    expect(card.kind).toBe('approval');
    const requestsBefore = fake.requests.length;
    await first.close();
    const second = await startTestRelay(env, first.dataDir);
    try {
      const again = await pendingCard(s.id, second);
      expect(again.id).toBe(card.id);
      await second.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { allow: { selected: ['Allow'] } } } });
      const done = await idle(s.id, second);
      const after = fake.requests.slice(requestsBefore).filter((r) => r.body?.messages);
      expect(after).toHaveLength(1);
      expect(lastToolMessage(after[0].body)?.content).toMatch(/^hi\n<shellId: \d+ completed with exit code 0>$/);
      expect(done.transcript!.at(-1)!.text).toMatch(/^ack hi/);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });

  it('sdk engine: continued in another Copilot client while askrelay was down, the runtime refuses the answer; it goes in as the next message', async () => {
    const first = await startTestRelay(env);
    const res = await first.api('/api/sessions', { method: 'POST', json: { provider: 'openai', engine: 'sdk', model: 'gpt-scripted', prompt: 'Set it up (elsewhere). [ask]' } });
    const s = (await res.json()) as Session;
    const card = await pendingCard(s.id, first);
    await first.close();
    // Someone resumes the Copilot session in their own client and goes on: the runtime
    // interrupts the open ask_user call without recording it as done.
    await continueElsewhere('Set it up (elsewhere). [ask]', 'Carry on without it.');
    const requestsBefore = fake.requests.length;
    const second = await startTestRelay(env, first.dataDir);
    try {
      const again = await pendingCard(s.id, second);
      expect(again.id).toBe(card.id);
      await second.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
      const done = await idle(s.id, second);
      const note = 'Your ask_user call was still open when askrelay restarted. Its result: User selected: SQLite';
      const after = fake.requests.slice(requestsBefore).filter((r) => r.body?.messages);
      expect(after).toHaveLength(1);
      expect(lastUserText(after[0]!.body)).toBe(note);
      expect(JSON.stringify(after[0]!.body.messages)).toContain('Carry on without it.');
      expect(done.transcript!.slice(-3).map((e) => [e.role, e.text])).toEqual([
        ['tool', 'User selected: SQLite'],
        ['system', expect.stringMatching(/^The answer could not be handed to the resumed Copilot session \(call_\w+\); askrelay sends it as the next message instead\.$/)],
        ['assistant', `heard: ${note}`],
      ]);
      expect(await (await second.api(`/api/cards/${card.id}`)).json()).toMatchObject({ status: 'answered', answer: { q1: { selected: ['SQLite'] } } });
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});

/** Resumes the Copilot session whose first prompt was `prompt` in a client of its own (no pending work) and sends `text`. */
async function continueElsewhere(prompt: string, text: string): Promise<void> {
  const root = join(home, '.copilot', 'session-state');
  const id = readdirSync(root).find((folder) => readFileSync(join(root, folder, 'events.jsonl'), 'utf8').includes(prompt))!;
  const client = new CopilotClient({ useLoggedInUser: false, env: { PATH: process.env.PATH, HOME: home }, workingDirectory: home, logLevel: 'error' });
  try {
    const session = await client.resumeSession(id, {
      model: 'gpt-scripted',
      provider: { type: 'openai', baseUrl: fake.url, apiKey: 'sk-test' },
      workingDirectory: home,
      streaming: true,
      onPermissionRequest: approveAll,
    });
    const idled = new Promise<void>((resolve) => session.on((event) => event.type === 'session.idle' && resolve()));
    await session.send({ prompt: text });
    await idled;
    await session.disconnect();
  } finally {
    await client.stop();
  }
}
