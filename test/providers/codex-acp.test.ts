import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codexProvider } from '../../providers/codex/index.js';
import type { Card } from '../../src/cards/model.js';
import { functionCallOutputs, lastFunctionCallOutput, type ResponsesRequest, type ScriptedResponsesModel, type ScriptedResponsesReply } from '../fakes/openai-responses.js';
import { startOpenAIServer, type OpenAIServer } from '../fakes/openai-server.js';
import { providerSessions, type ProviderSessions } from '../support/provider-sessions.js';

// The real Codex (codex-acp 2.6.0 driving `codex app-server` 0.166) run by askrelay's ACP
// runner against the scripted Responses API server: its questions (Plan mode's
// request_user_input) and its approvals (workspace-write mode) become cards, and the
// scripted model reads exactly what Codex writes back for each answer (golden strings).

const HOUR = 3_600_000;
const TITLE = /generate a very short title/;

let h: ProviderSessions;
let server: OpenAIServer;
let script: ScriptedResponsesModel;
const requests: ResponsesRequest[] = [];

beforeAll(async () => {
  // Codex also asks its model for a title after the first turn: answered aside, not a step.
  server = await startOpenAIServer({
    responses: async (request, index) => {
      const text = JSON.stringify(request.input ?? '');
      if (TITLE.test(text)) return { text: '{"title": "Scripted session"}' };
      requests.push(request);
      return script(request, index);
    },
  });
});
afterAll(() => server?.close());

async function start(steps: (string | ScriptedResponsesReply)[], options: { plan?: boolean; env?: Record<string, string>; waitMs?: number } = {}) {
  h = await providerSessions(codexProvider, () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'sk-test', ...options.env }), options.waitMs ?? HOUR);
  let next = 0;
  script = async () => {
    const step = steps[next++];
    return step === undefined ? { text: '(end of script)' } : typeof step === 'string' ? { text: step } : step;
  };
  requests.length = 0;
  return h.manager.start({ provider: 'codex', prompt: 'Pick a database.', ...(options.plan ? { plan: true } : {}) });
}

afterEach(() => h?.close());

const ASK = {
  functionCalls: [
    {
      name: 'request_user_input',
      arguments: { questions: [{ id: 'db', header: 'Database', question: 'Which database?', options: [{ label: 'Postgres (Recommended)', description: 'Shared by every node' }, { label: 'SQLite', description: 'One file' }] }] },
    },
  ],
};


describe('codex (the real Codex through ACP)', { timeout: 60_000 }, () => {
  it('Plan mode: request_user_input is a question card; a pick reaches the model as Codex writes it', async () => {
    const session = await start([ASK, 'Postgres it is.'], { plan: true });
    expect(session.plan).toBe(true);
    const card = await h.pendingCard(session.id);
    expect(card).toMatchObject({ provider: 'codex', engine: 'acp', tool: 'request_user_input', origin: 'native', kind: 'question', layout: 'steps' });
    expect(card.questions).toEqual([
      {
        id: 'db',
        header: 'Database',
        text: 'Which database?',
        options: [{ label: 'Postgres (Recommended)', description: 'Shared by every node' }, { label: 'SQLite', description: 'One file' }],
        multiSelect: false,
        freeText: true,
      },
    ]);
    await h.relay.answer(card.id, { db: { selected: ['Postgres (Recommended)'] } });
    const done = await h.idle(session.id);
    expect(lastFunctionCallOutput(requests.at(-1)!)?.output).toBe('{"answers":{"db":{"answers":["Postgres (Recommended)"]}}}');
    expect(done.transcript?.at(-1)).toMatchObject({ role: 'assistant', text: 'Postgres it is.' });
  });

  it('typed words go in the note, as "None of the above"', async () => {
    const session = await start([ASK, 'MySQL then.'], { plan: true });
    const card = await h.pendingCard(session.id);
    await h.relay.answer(card.id, { db: { selected: [], text: 'MySQL, we run it already' } });
    await h.idle(session.id);
    expect(lastFunctionCallOutput(requests.at(-1)!)?.output).toBe('{"answers":{"db":{"answers":["None of the above","user_note: MySQL, we run it already"]}}}');
  });

  it('a skipped question declines, and Codex tells its model so', async () => {
    const session = await start([ASK, 'Going on without it.'], { plan: true });
    await h.relay.skip((await h.pendingCard(session.id)).id);
    await h.idle(session.id);
    // Declined: Codex answers its model with no answers at all.
    expect(functionCallOutputs(requests.at(-1)!).map((o) => o.output)).toEqual(['{"answers":{}}']);
  });

  it('workspace-write: a command that needs approval is an approval card with Codex\'s options; allowed, it runs', async () => {
    const exec = { functionCalls: [{ name: 'exec_command', arguments: { cmd: 'echo approved', sandbox_permissions: 'require_escalated', justification: 'Print a word' } }] };
    const session = await start([exec, 'Done.']);
    const card = await h.pendingCard(session.id);
    expect(card).toMatchObject({ kind: 'approval', tool: 'permission:execute', provider: 'codex' });
    expect(card.questions[0].text).toContain('echo approved');
    expect(card.questions[0].options.map((o) => o.description)).toEqual(['Allow once', 'Allow always', 'Reject']);
    await h.relay.answer(card.id, { permission: { selected: [card.questions[0].options[0].label] } });
    await h.idle(session.id);
    expect(lastFunctionCallOutput(requests.at(-1)!)?.output).toContain('approved');
  });

  it('ASKRELAY_APPROVE_TOOLS=1: allowed once without a card', async () => {
    const exec = { functionCalls: [{ name: 'exec_command', arguments: { cmd: 'echo unasked', sandbox_permissions: 'require_escalated', justification: 'Print a word' } }] };
    const session = await start([exec, 'Done.'], { env: { ASKRELAY_APPROVE_TOOLS: '1' } });
    await h.idle(session.id);
    expect(await h.relay.list({ sessionId: session.id })).toEqual([]);
    expect(lastFunctionCallOutput(requests.at(-1)!)?.output).toContain('unasked');
  });

  it('a rejected command does not run', async () => {
    const exec = { functionCalls: [{ name: 'exec_command', arguments: { cmd: 'echo never', sandbox_permissions: 'require_escalated', justification: 'Print a word' } }] };
    const session = await start([exec, 'Understood.']);
    const card = await h.pendingCard(session.id);
    const reject = card.questions[0].options.find((o) => o.description === 'Reject')!;
    await h.relay.answer(card.id, { permission: { selected: [reject.label] } });
    await h.idle(session.id);
    // "No, and tell Codex what to do differently": the command never runs, and Codex ends its
    // turn to wait for the user's words without asking its model again.
    expect(requests).toHaveLength(1);
    expect((await h.manager.get(session.id)).transcript?.map((e) => e.text).join('\n')).not.toContain('Understood.');
  });

  it('stopping the session in the middle of a wait cancels the card and ends Codex', async () => {
    const session = await start([ASK], { plan: true });
    const card = await h.pendingCard(session.id);
    await h.manager.stop(session.id);
    expect((await h.relay.get(card.id)).status).toBe('cancelled' satisfies Card['status']);
    expect((await h.manager.get(session.id)).status).toBe('stopped');
  });

  it('an expired question cancels the elicitation: Codex\'s model reads no answers', async () => {
    const session = await start([ASK, 'Going on.'], { plan: true, waitMs: 1500 });
    const card = await h.pendingCard(session.id);
    const closed = await h.relay.settle(card.id);
    expect(closed.status).toBe('expired');
    await h.idle(session.id);
    // Cancelled, Codex answers its model as for a skip: no answers at all.
    expect(requests).toHaveLength(2);
    expect(functionCallOutputs(requests[1]).map((o) => o.output)).toEqual(['{"answers":{}}']);
  });

  it('a restart with the question open: the thread is loaded again, the card waited for, its answer sent in a prompt', async () => {
    const session = await start([ASK, 'Noted after the restart.'], { plan: true });
    const card = await h.pendingCard(session.id);
    await h.restart(); // the relay stops (Codex's process with it) and starts again
    expect((await h.relay.get(card.id)).status).toBe('pending');
    await h.relay.answer(card.id, { db: { selected: ['SQLite'] } });
    await h.idle(session.id);
    const prompt = requests.at(-1)!;
    expect(JSON.stringify(prompt.input)).toContain('askrelay restarted while your request was open');
    expect(JSON.stringify(prompt.input)).toContain('The user answered: db=SQLite.');
  });
});

describe('codex outside Plan mode', { timeout: 60_000 }, () => {
  it('asks through askrelay\'s ask_user over MCP (approved in its config, so no approval card); the answer reaches the model', async () => {
    const ask = { functionCalls: [{ name: 'ask_user', namespace: 'mcp__askrelay', arguments: { questions: [{ question: 'Which database?', header: 'DB', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] }] } }] };
    const session = await start([ask, 'Fine.']);
    const card = await h.pendingCard(session.id);
    expect(card).toMatchObject({ provider: 'codex', tool: 'ask_user', kind: 'question', sessionId: session.id });
    const offered = (requests[0].tools as { name?: string; tools?: { name: string }[] }[]).find((t) => t.name === 'mcp__askrelay');
    expect(offered?.tools?.map((t) => t.name)).toContain('ask_user');
    await h.relay.answer(card.id, { [card.questions[0].id]: { selected: ['SQLite'] } });
    await h.idle(session.id);
    expect(await h.relay.list({ sessionId: session.id })).toHaveLength(1); // the question only
    // Codex hands its model the tool's structured result, after the call's wall time.
    expect(lastFunctionCallOutput(requests.at(-1)!)?.output).toMatch(
      /^Wall time: [\d.]+ seconds\nOutput:\n\{"status":"answered","cardId":"c_\w+","answers":\[\{"question":"Which database\?","header":"DB","selected":\["SQLite"\]\}\]\}$/,
    );
  });
});
