import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastUserText, startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// The relay tool on /mcp, driven by the real MCP SDK client: an MCP client is always an
// agent. With the operator's token it is an agent of no session ("mcp"); with a session's
// agent token it is that session's agent, and the cards it asks belong to that session.

let fake: AnthropicServer;
let relay: TestRelay;
const clients: Client[] = [];

beforeAll(async () => {
  // Sessions whose model just says something: they go idle and keep valid agent tokens.
  fake = await startAnthropicServer({ model: (request) => ({ text: `ok: ${lastUserText(request)}` }) });
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
});
afterAll(async () => {
  await relay.stop();
  await fake.close();
});

async function session(agentsMayAnswer: boolean): Promise<Session> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'hello', agentsMayAnswer } });
  expect(res.status).toBe(201);
  const started = (await res.json()) as Session;
  await waitUntil(async () => (await relay.sessions.get(started.id)).status === 'idle', 'the session to go idle');
  return started;
}

async function connect(token: string) {
  const client = new Client({ name: 'relay-tool-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', relay.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

type Result = { content: { type: string; text: string }[]; isError?: boolean };
const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<Result>;

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
    const asking = client.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }] } }) as Promise<Result>;
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
