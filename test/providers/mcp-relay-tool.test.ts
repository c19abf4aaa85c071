import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { FakeClock } from '../support/fake-clock.js';
import { armed, mcpClients, startEchoRelay, type ToolResult } from '../support/mcp-tools.js';
import type { TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// The relay tool on /mcp, driven by the real MCP SDK client: an MCP client is always an
// agent. With the operator's token it is an agent of no session ("mcp"); with a session's
// agent token it is that session's agent, and the cards it asks belong to that session.
// Its approval cards wait the way ask_user's cards do (progress, re-attach, grace, cancel);
// the relay's clock moves only when the test says.

const PROGRESS_MS = 30_000;
const GRACE_MS = 60_000;

let echo: Awaited<ReturnType<typeof startEchoRelay>>;
let relay: TestRelay;
const clock = new FakeClock(Date.now());
const clients = mcpClients('relay-tool-test');

beforeAll(async () => {
  echo = await startEchoRelay({ clock });
  relay = echo.relay;
});
afterEach(() => clients.closeAll());
afterAll(() => echo.stop());

const session = (agentsMayAnswer: boolean) => echo.idleSession(agentsMayAnswer);
const connect = async (token: string) => (await clients.connect(relay.url, token)).client;

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<ToolResult>;

const question = (sessionId: string, kind: Card['kind'] = 'question', tool = 'AskUserQuestion') =>
  relay.relay.create({ sessionId, kind, tool, provider: 'claude', questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] });

describe('the relay tool on /mcp', () => {
  it('with the operator token: an agent of no session, which answers allowed question cards and never approvals', async () => {
    const open = await session(true);
    const closed = await session(false);
    const allowed = await question(open.id);
    const approval = await question(open.id, 'approval', 'ExitPlanMode');
    const hidden = await question(closed.id);
    const client = await connect(relay.token);

    const listed = await call(client, 'list_questions', {});
    const ids = (JSON.parse(listed.content[0].text).questions as { cardId: string; mayAnswer: boolean }[]).map((q) => [q.cardId, q.mayAnswer]);
    expect(ids).toEqual([
      [allowed.id, true],
      [approval.id, false],
    ]);

    const refused = await call(client, 'answer_question', { cardId: approval.id, answers: 'PostgreSQL' });
    expect(refused).toEqual({ content: [{ type: 'text', text: `Card ${approval.id} is an approval; only the human can answer it. Wait for them, or ask them.` }], isError: true });
    const notShown = await call(client, 'answer_question', { cardId: hidden.id, answers: '1' });
    expect(notShown.isError).toBe(true);
    expect(notShown.content[0].text).toBe(
      `No card "${hidden.id}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`,
    );
    expect((await relay.relay.get(approval.id)).status).toBe('pending');
    expect((await relay.relay.get(hidden.id)).status).toBe('pending');

    const answered = await call(client, 'answer_question', { cardId: allowed.id, answers: '2' });
    expect(answered).toEqual({ content: [{ type: 'text', text: `Answered card ${allowed.id}: Which database? → SQLite` }] });
    expect((await relay.relay.get(allowed.id)).answeredBy).toEqual({ kind: 'agent', id: 'mcp', surface: 'mcp' });
  });

  it("with a session's agent token: ask_user cards belong to that session, and it cannot answer them itself", async () => {
    const own = await session(true);
    const client = await connect(relay.sessions.agentToken(own.id));
    const asking = client.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }] } }) as Promise<ToolResult>;
    const card = await waitUntil(async () => (await relay.relay.list({ sessionId: own.id, status: 'pending' }))[0], 'the card');
    expect(card.askedBy).toEqual({ kind: 'agent', id: own.id, surface: 'mcp' });

    const refused = await call(client, 'answer_question', { cardId: card.id, answers: 'Yes' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toMatch(/^Card c_\w+ was asked in your own session; only the human/);

    const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } });
    expect(res.status).toBe(200);
    expect((await asking).content[0].text).toBe('Ship it? → Yes');
  });

  it('start_session raises an approval card; the human approves it and the session starts', async () => {
    const client = await connect(relay.token);
    const before = (await relay.sessions.list()).length;
    const starting = call(client, 'start_session', { provider: 'claude', engine: 'messages', prompt: 'write the tests' });
    const card = await waitUntil(async () => (await relay.relay.list({ status: 'pending' })).find((c) => c.tool === 'start_session'), 'the approval card');
    expect(card).toMatchObject({ kind: 'approval', title: 'Start a session?' });
    expect(card.questions[0].text).toBe(
      [
        'An MCP client (mcp) wants to start a session.',
        '',
        'Provider: claude',
        'Engine: messages',
        "Model: the provider's default",
        'Relay mode: autopilot',
        'Other agents may answer its questions: no',
        '',
        'Its prompt, quoted as the agent wrote it:',
        '> write the tests',
      ].join('\n'),
    );
    const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { approve: { selected: ['Approve'] } } } });
    expect(res.status).toBe(200);
    const result = await starting;
    expect(result.isError).toBeFalsy();
    expect(result.content[0].text).toMatch(/^The human approved\. Started session (s_\w+) \(claude, engine messages\); it is (starting|running)\./);
    expect((await relay.sessions.list()).length).toBe(before + 1);
  });
});

describe("the relay tool's approval cards wait like ask_user's", () => {
  const start = (prompt: string) => ({ provider: 'claude', engine: 'messages', prompt });
  /** A start_session call that asks for progress, counting the notifications it gets. */
  function starting(client: Client, prompt: string, options: { signal?: AbortSignal } = {}) {
    const progress = { beats: 0 };
    const result = client.callTool({ name: 'start_session', arguments: start(prompt) }, undefined, {
      timeout: 60_000,
      onprogress: () => void (progress.beats += 1),
      ...options,
    }) as Promise<ToolResult>;
    return { result, progress };
  }
  const approvals = async (prompt: string) =>
    (await relay.relay.list({ status: 'pending' })).filter((c) => c.tool === 'start_session' && c.questions[0].text.endsWith(`> ${prompt}`));
  const approvalOf = (prompt: string) => waitUntil(async () => (await approvals(prompt))[0], `the approval card of "${prompt}"`);
  const statusOf = (id: string, want: Card['status']) =>
    waitUntil(async () => ((await relay.relay.get(id)).status === want ? true : undefined), `card ${id} to be ${want}`);

  it('start_session gets progress while it waits, and re-sent after its client went away re-attaches to the same card', async () => {
    const first = await clients.connect(relay.url, relay.token);
    const lost = starting(first.client, 'write the docs');
    const card = await approvalOf('write the docs');
    await armed(clock, PROGRESS_MS, 1, 'the call to wait with a progress beat');
    clock.advance(PROGRESS_MS);
    await waitUntil(() => lost.progress.beats === 1, 'a progress notification');
    // Another client's call that goes away and is not re-sent: its card is cancelled when the
    // grace runs out, which shows when that has happened.
    const other = await clients.connect(relay.url, relay.token);
    const otherLost = starting(other.client, 'nobody comes back');
    const sentinel = await approvalOf('nobody comes back');
    await first.transport.close();
    await expect(lost.result).rejects.toThrow();
    await armed(clock, GRACE_MS, 1, 'the grace of the first call');
    await other.transport.close();
    await expect(otherLost.result).rejects.toThrow();
    await armed(clock, GRACE_MS, 2, 'the grace of the other call');

    const second = await clients.connect(relay.url, relay.token);
    const again = starting(second.client, 'write the docs');
    await armed(clock, PROGRESS_MS, 1, 'the re-sent call to wait on its card');
    clock.advance(GRACE_MS);
    await statusOf(sentinel.id, 'cancelled');
    // Past the grace the re-sent call keeps the one card alive, and it gets progress too.
    expect((await approvals('write the docs')).map((c) => c.id)).toEqual([card.id]);
    expect(again.progress.beats).toBeGreaterThan(0);
    const before = (await relay.sessions.list()).length;
    const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { approve: { selected: ['Approve'] } } } });
    expect(res.status).toBe(200);
    const result = await again.result;
    expect(result.content[0].text).toMatch(/^The human approved\. Started session s_\w+ \(claude, engine messages\)/);
    expect((await relay.sessions.list()).length).toBe(before + 1);
  });

  it('notifications/cancelled cancels its approval card at once', async () => {
    const { client } = await clients.connect(relay.url, relay.token);
    const abort = new AbortController();
    const call = starting(client, 'never mind', { signal: abort.signal });
    const card = await approvalOf('never mind');
    abort.abort();
    await expect(call.result).rejects.toThrow();
    await statusOf(card.id, 'cancelled');
    expect(clock.armed(GRACE_MS)).toBe(0);
  });
});
