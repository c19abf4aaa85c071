import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { geminiProvider } from '../../providers/gemini/index.js';
import { Relay } from '../../src/relay/relay.js';
import { SessionManager } from '../../src/sessions/manager.js';
import { describeProviders, runnerFactories } from '../../src/sessions/providers.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { functionNames, lastFunctionResponse, startGeminiServer, type GeminiServer, type ScriptedGeminiReply } from '../fakes/gemini-server.js';
import { waitUntil } from '../support/wait-until.js';

// The real Gemini CLI (0.61, --acp) run by askrelay's ACP runner against the scripted Gemini
// API: its questions through askrelay's ask_human (served to it over MCP, named
// mcp_askrelay_ask_human) and its permission requests become cards; the scripted model reads
// exactly what Gemini CLI hands back (golden strings).

const HOUR = 3_600_000;
type Request = Parameters<Parameters<typeof startGeminiServer>[0]['model']>[0];

let dir: string;
let store: SqliteStore;
let relay: Relay;
let manager: SessionManager;
let server: GeminiServer;
let steps: (string | ScriptedGeminiReply)[] = [];
const requests: Request[] = [];

beforeAll(async () => {
  let next = 0;
  server = await startGeminiServer({
    model: (request) => {
      requests.push(request);
      const step = steps[next++];
      return step === undefined ? { text: '(end of script)' } : typeof step === 'string' ? { text: step } : step;
    },
  });
  // Each test sets its own steps from the start.
  Object.defineProperty(globalThis, '__geminiReset', { value: () => (next = 0), configurable: true });
});
afterAll(() => server?.close());

async function start(script: (string | ScriptedGeminiReply)[]) {
  (globalThis as unknown as { __geminiReset: () => void }).__geminiReset();
  steps = script;
  requests.length = 0;
  dir = mkdtempSync(join(tmpdir(), 'askrelay-gemini-test-'));
  store = new SqliteStore(join(dir, 'askrelay.sqlite'));
  relay = new Relay({ store: asyncCards(store), waits: { default: HOUR } });
  await relay.start();
  const env = { PATH: process.env.PATH, GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'AIza-test', GEMINI_MODEL: 'gemini-2.5-flash', ASKRELAY_WORKDIR: dir };
  const providers = runnerFactories([geminiProvider], describeProviders([geminiProvider], env, HOUR));
  manager = new SessionManager({ relay, store: asyncSessions(store.sessions), providers, env, stuckAfterMs: 10 * 60_000 });
  return manager.start({ provider: 'gemini', prompt: 'Pick a database.' });
}

afterEach(async () => {
  await manager?.close();
  relay?.stop();
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const pendingCard = (sessionId: string) => waitUntil(async () => (await relay.list({ sessionId, status: 'pending' }))[0], 'a pending card', 45_000);
const idle = (id: string) =>
  waitUntil(async () => {
    const s = await manager.get(id);
    if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
    return s.status === 'idle' ? s : undefined;
  }, `${id} idle`, 45_000);

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
    const card = await pendingCard(session.id);
    expect(card).toMatchObject({ provider: 'gemini', engine: 'acp', tool: 'ask_user', kind: 'question', sessionId: session.id });
    expect(functionNames(requests[0])).toContain('mcp_askrelay_ask_human');
    expect((await manager.get(session.id)).status).toBe('waiting');
    await relay.answer(card.id, { [card.questions[0].id]: { selected: ['PostgreSQL (Recommended)'] } });
    const done = await idle(session.id);
    // Cursor's ask_user result text, as Gemini CLI wraps an MCP tool's output for its model.
    const response = lastFunctionResponse(requests.at(-1)!);
    expect(response?.name).toBe('mcp_askrelay_ask_human');
    expect(response?.response).toEqual({ output: '<untrusted_context>\nWhich database? → PostgreSQL (Recommended)\n</untrusted_context>' });
    expect(done.transcript?.at(-1)).toMatchObject({ role: 'assistant', text: 'PostgreSQL it is.' });
  });

  it('a shell command that needs permission is an approval card with Gemini\'s options; allowed, it runs', async () => {
    const shell: ScriptedGeminiReply = { functionCalls: [{ name: 'run_shell_command', args: { command: 'echo approved | tee approved.txt', description: 'Write a word' } }] };
    const session = await start([shell, 'Done.']);
    const card = await pendingCard(session.id);
    expect(card).toMatchObject({ kind: 'approval', tool: 'permission:execute', provider: 'gemini' });
    expect(card.questions[0].options).toEqual([
      { label: 'Allow for this session', description: 'Allow always' },
      { label: 'Allow', description: 'Allow once' },
      { label: 'Reject', description: 'Reject' },
    ]);
    await relay.answer(card.id, { permission: { selected: ['Allow'] } });
    await idle(session.id);
    expect(String(lastFunctionResponse(requests.at(-1)!)?.response.output)).toContain('approved');
  });

  it('a rejected command is cancelled, and the model is told so', async () => {
    const shell: ScriptedGeminiReply = { functionCalls: [{ name: 'run_shell_command', args: { command: 'echo never | tee never.txt', description: 'Write a word' } }] };
    const session = await start([shell, 'Understood.']);
    const card = await pendingCard(session.id);
    await relay.answer(card.id, { permission: { selected: ['Reject'] } });
    await idle(session.id);
    expect(lastFunctionResponse(requests.at(-1)!)?.response).toEqual({ error: 'Tool "run_shell_command" was canceled by the user.' });
  });
});
