import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { acpRunner, type AcpAgentSpec } from '../../src/acp/acp-runner.js';
import { Relay } from '../../src/relay/relay.js';
import { SessionManager } from '../../src/sessions/manager.js';
import type { RunnerFactory } from '../../src/sessions/runner.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { waitUntil } from '../support/wait-until.js';

// The ACP runner's own rules, with the scripted agent of test/fakes/acp-agent.ts (a real
// process speaking ACP over stdio): a request it does not know is refused with JSON-RPC's
// "method not found" and said once in the transcript, and the agent's text that arrives
// after the prompt's response is kept.

const AGENT = fileURLToPath(new URL('../fakes/acp-agent.ts', import.meta.url));
let dir: string;
let store: SqliteStore;
let relay: Relay;
let manager: SessionManager;

const spec: AcpAgentSpec = {
  name: 'Scripted agent',
  form: { tool: 'elicitation', name: 'Scripted agent' },
  launch: async () => ({ command: process.execPath, args: ['--import', 'tsx', AGENT], env: process.env, cwd: process.cwd() }),
  mcpServers: () => [],
};
const scripted: RunnerFactory = { engines: ['acp'], defaultModel: () => 'scripted', create: (ctx) => acpRunner(spec, ctx) };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-acp-runner-'));
  store = new SqliteStore(join(dir, 'askrelay.sqlite'));
  relay = new Relay({ store: asyncCards(store), waits: { default: 3_600_000 } });
  await relay.start();
  manager = new SessionManager({ relay, store: asyncSessions(store.sessions), providers: { scripted }, stuckAfterMs: 600_000 });
});
afterEach(async () => {
  await manager.close();
  relay.stop();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('refuses an unknown request with "method not found", once in the transcript, and keeps text that comes after the turn', { timeout: 30_000 }, async () => {
  const session = await manager.start({ provider: 'scripted', prompt: 'Go.' });
  const texts = () => manager.get(session.id).then((s) => (s.transcript ?? []).map((e) => `${e.role}: ${e.text}`));
  await waitUntil(async () => (await texts()).includes('assistant: After the end.'), 'the late text in the transcript', 20_000);
  const lines = await texts();
  // JSON-RPC -32601 both times; the transcript says it once.
  expect(lines).toContain('assistant: Before. The client said -32601, -32601.');
  expect(lines.filter((l) => l.includes('_vendor/ping'))).toEqual(['system: Scripted agent asked for "_vendor/ping", which askrelay does not offer; it was told so.']);
  expect((await manager.get(session.id)).status).toBe('idle');
});
