import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastToolResult, startAnthropicServer, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { OPERATOR_ENV, PROBE_COMMAND, probeSession } from '../support/agent-env-probe.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { claudeRelayEnv } from './claude-fixtures.js';

// The environment of the shell Claude Code (the `code` engine) runs its Bash tool in, as the
// agent sees it: the real Claude Code binary against the scripted Messages server runs
// PROBE_COMMAND, and the test reads the tool_result Claude Code sends the model next.

const model = (request: MessagesRequest): ScriptedReply =>
  lastToolResult(request) ? { text: 'ack' } : { toolUse: { name: 'Bash', input: { command: PROBE_COMMAND, description: 'Show the environment' } } };

let fake: AnthropicServer;
let relay: TestRelay;
let home: string;

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
  home = mkdtempSync(join(tmpdir(), 'askrelay-claude-env-'));
  relay = await startTestRelay({ ...claudeRelayEnv(fake.url, home), ...OPERATOR_ENV });
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

describe("Claude Code's shell", () => {
  it("has the session's agent token and the relay's URL, and nothing of the operator's", async () => {
    const read = () => {
      const result = fake.requests.map((r) => (r.body?.messages ? lastToolResult(r.body as MessagesRequest) : undefined)).find((t) => t !== undefined);
      expect(result?.is_error).toBe(false);
      return result?.content;
    };
    await probeSession(relay, { provider: 'claude', engine: 'code' }, read);
  });
});
