import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastToolMessage, startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { OPERATOR_ENV, PROBE_COMMAND, probeSession } from '../support/agent-env-probe.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// The environment of the shell the Copilot runtime (@github/copilot-sdk, offline with a BYOK
// provider pointed at the scripted Chat Completions server) runs its bash tool in, as the
// agent sees it: the model runs PROBE_COMMAND and the test reads the tool message it sends next.

const model = (request: ChatRequest): ScriptedChatReply =>
  lastToolMessage(request) ? { text: 'ack' } : { toolCalls: [{ name: 'bash', arguments: { command: PROBE_COMMAND, description: 'show the environment' } }] };

let fake: OpenAIServer;
let relay: TestRelay;
let home: string;

beforeAll(async () => {
  fake = await startOpenAIServer({ model });
  home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-env-'));
  relay = await startTestRelay({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test', HOME: home, ASKRELAY_WORKDIR: home, ...OPERATOR_ENV });
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

describe("the Copilot runtime's shell", () => {
  it("has the session's agent token and the relay's URL, and nothing of the operator's", async () => {
    const read = () => fake.requests.map((r) => (r.body?.messages ? lastToolMessage(r.body) : undefined)).find((t) => t !== undefined)?.content;
    await probeSession(relay, { provider: 'openai', engine: 'sdk', model: 'gpt-scripted' }, read);
  });
});
