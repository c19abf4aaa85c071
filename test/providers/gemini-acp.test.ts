import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { geminiProvider } from '../../providers/gemini/index.js';
import { functionNames, lastFunctionResponse, startGeminiServer, type GeminiServer, type ScriptedGeminiReply } from '../fakes/gemini-server.js';
import { providerSessions, type ProviderSessions } from '../support/provider-sessions.js';
import { waitUntil } from '../support/wait-until.js';

// The real Gemini CLI (0.61, --acp) run by askrelay's ACP runner against the scripted Gemini
// API: its questions through askrelay's ask_human (served to it over MCP, named
// mcp_askrelay_ask_human) and its permission requests become cards; the scripted model reads
// exactly what Gemini CLI hands back (golden strings).

const HOUR = 3_600_000;
type Request = Parameters<Parameters<typeof startGeminiServer>[0]['model']>[0];

let h: ProviderSessions;
let server: GeminiServer;
let steps: (string | ScriptedGeminiReply)[] = [];
const requests: Request[] = [];

/** The script's next step: each test starts its own from the first. */
let next = 0;

beforeAll(async () => {
  server = await startGeminiServer({
    model: (request) => {
      requests.push(request);
      const step = steps[next++];
      return step === undefined ? { text: '(end of script)' } : typeof step === 'string' ? { text: step } : step;
    },
  });
});
afterAll(() => server?.close());

async function start(script: (string | ScriptedGeminiReply)[], waitMs = HOUR) {
  next = 0;
  steps = script;
  requests.length = 0;
  h = await providerSessions(geminiProvider, () => ({ GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'AIza-test', GEMINI_MODEL: 'gemini-2.5-flash' }), waitMs);
  return h.manager.start({ provider: 'gemini', prompt: 'Pick a database.' });
}

afterEach(() => h?.close());

const ASK: ScriptedGeminiReply = {
  functionCalls: [
    {
      name: 'mcp_askrelay_ask_human',
      args: { questions: [{ question: 'Which database?', header: 'Database', options: [{ label: 'PostgreSQL (Recommended)', description: 'Shared' }, { label: 'SQLite' }] }] },
    },
  ],
};

describe('gemini (the real Gemini CLI through ACP)', { timeout: 90_000 }, () => {
  it('asks through askrelay\'s ask_human over MCP: a card of the session, answered into the function response', async () => {
    const session = await start([ASK, 'PostgreSQL it is.']);
    const card = await h.pendingCard(session.id);
    expect(card).toMatchObject({ provider: 'gemini', engine: 'acp', tool: 'ask_user', kind: 'question', sessionId: session.id });
    expect(functionNames(requests[0])).toContain('mcp_askrelay_ask_human');
    expect((await h.manager.get(session.id)).status).toBe('waiting');
    await h.relay.answer(card.id, { [card.questions[0].id]: { selected: ['PostgreSQL (Recommended)'] } });
    const done = await h.idle(session.id);
    // Cursor's ask_user result text, as Gemini CLI wraps an MCP tool's output for its model.
    const response = lastFunctionResponse(requests.at(-1)!);
    expect(response?.name).toBe('mcp_askrelay_ask_human');
    expect(response?.response).toEqual({ output: '<untrusted_context>\nWhich database? → PostgreSQL (Recommended)\n</untrusted_context>' });
    expect(done.transcript?.at(-1)).toMatchObject({ role: 'assistant', text: 'PostgreSQL it is.' });
  });

  it('a shell command that needs permission is an approval card with Gemini\'s options; allowed, it runs', async () => {
    const shell: ScriptedGeminiReply = { functionCalls: [{ name: 'run_shell_command', args: { command: 'echo approved | tee approved.txt', description: 'Write a word' } }] };
    const session = await start([shell, 'Done.']);
    const card = await h.pendingCard(session.id);
    expect(card).toMatchObject({ kind: 'approval', tool: 'permission:execute', provider: 'gemini' });
    expect(card.questions[0].options).toEqual([
      { label: 'Allow for this session', description: 'Allow always' },
      { label: 'Allow', description: 'Allow once' },
      { label: 'Reject', description: 'Reject' },
    ]);
    await h.relay.answer(card.id, { permission: { selected: ['Allow'] } });
    await h.idle(session.id);
    expect(String(lastFunctionResponse(requests.at(-1)!)?.response.output)).toContain('approved');
  });

  it('a rejected command is cancelled, and the model is told so', async () => {
    const shell: ScriptedGeminiReply = { functionCalls: [{ name: 'run_shell_command', args: { command: 'echo never | tee never.txt', description: 'Write a word' } }] };
    const session = await start([shell, 'Understood.']);
    const card = await h.pendingCard(session.id);
    await h.relay.answer(card.id, { permission: { selected: ['Reject'] } });
    await h.idle(session.id);
    expect(lastFunctionResponse(requests.at(-1)!)?.response).toEqual({ error: 'Tool "run_shell_command" was canceled by the user.' });
  });

  const MULTI: ScriptedGeminiReply = {
    functionCalls: [
      {
        name: 'mcp_askrelay_ask_human',
        args: { questions: [{ question: 'Which checks?', header: 'Checks', multiSelect: true, options: [{ label: 'Lint' }, { label: 'Tests' }, { label: 'Types' }] }, { question: 'Anything else?', header: 'Notes' }] },
      },
    ],
  };

  it('several picks and free text, in Cursor\'s result form', async () => {
    const session = await start([MULTI, 'Running them.']);
    const card = await h.pendingCard(session.id);
    const [checks, notes] = card.questions;
    expect(checks.multiSelect).toBe(true);
    await h.relay.answer(card.id, { [checks.id]: { selected: ['Lint', 'Types'] }, [notes.id]: { selected: [], text: 'Skip the slow ones' } });
    await h.idle(session.id);
    expect(lastFunctionResponse(requests.at(-1)!)?.response).toEqual({
      output: '<untrusted_context>\nWhich checks? → Lint, Types\nAnything else? → (free text) Skip the slow ones\n</untrusted_context>',
    });
  });

  it('an expired question: the model reads that nobody answered', async () => {
    const session = await start([ASK, 'Going on.'], 1500);
    const card = await h.pendingCard(session.id);
    expect((await h.relay.settle(card.id)).status).toBe('expired');
    await h.idle(session.id);
    expect(lastFunctionResponse(requests.at(-1)!)?.response).toEqual({
      output: '<untrusted_context>\nWhich database? → (no answer)\nNobody answered within the wait. Proceed with your best judgement and say what you assumed.\n</untrusted_context>',
    });
  });

  it('stopping the session in the middle of a wait cancels the card', async () => {
    const session = await start([ASK]);
    const card = await h.pendingCard(session.id);
    await h.manager.stop(session.id);
    expect((await h.relay.get(card.id)).status).toBe('cancelled');
    expect((await h.manager.get(session.id)).status).toBe('stopped');
  });

  it('a restart with the question open: Gemini CLI 0.61 cannot load its chat again, so the session fails saying so', async () => {
    const session = await start([ASK, 'Noted after the restart.']);
    const card = await h.pendingCard(session.id);
    await h.restart();
    const failed = await waitUntil(async () => {
      const s = await h.manager.get(session.id);
      return s.status === 'failed' ? s : undefined;
    }, 'the session to fail', 45_000);
    // A failed session's pending cards are cancelled, as for any session that fails.
    expect((await h.relay.get(card.id)).status).toBe('cancelled');
    expect(failed.error).toMatch(/^Gemini CLI could not pick its session up again after a restart \(.*No previous sessions found for this project.*\); start a new session\.$/);
  });
});

