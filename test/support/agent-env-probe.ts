import { expect } from 'vitest';
import type { Session } from '../../src/sessions/model.js';
import type { TestRelay } from './running-relay.js';
import { sessionApi } from './session-api.js';

// What an agent's own shell sees of askrelay (src/sessions/agent-env.ts): the tests of the
// runners that spawn a process (Claude Code, the Copilot runtime) have the scripted model run
// PROBE_COMMAND through the agent's shell tool and hand what the model read back to here.

/** Runs in the agent's shell: its whole environment, one variable a line. */
export const PROBE_COMMAND = 'env | sort';

/**
 * Operator settings the relay runs with that must never reach an agent (besides the relay
 * token itself); ASKRELAY_APPROVE_TOOLS also lets the shell tool run without an approval card.
 */
export const OPERATOR_ENV = { ASKRELAY_METRICS_TOKEN: 'operator-metrics-token-0123456789', ASKRELAY_APPROVE_TOOLS: '1' };

/**
 * The probe's output carries the session's own agent token as ASKRELAY_TOKEN and the relay's
 * address as ASKRELAY_URL, no other ASKRELAY_* variable and none of the operator's secrets
 * under any name; and the token acts as that session's agent: it sees its session, and the
 * human's routes refuse it.
 */
export async function expectAgentEnv(output: string, relay: TestRelay, sessionId: string): Promise<void> {
  const vars = Object.fromEntries(output.split('\n').flatMap((line) => {
    const m = /^(ASKRELAY_\w+)=(.*)$/.exec(line);
    return m ? [[m[1]!, m[2]!]] : [];
  }));
  expect(Object.keys(vars).sort()).toEqual(['ASKRELAY_TOKEN', 'ASKRELAY_URL']);
  expect(vars.ASKRELAY_URL).toBe(relay.url);
  expect(vars.ASKRELAY_TOKEN).toMatch(/^asa_/);
  for (const secret of [relay.token, OPERATOR_ENV.ASKRELAY_METRICS_TOKEN]) expect(output).not.toContain(secret);

  const asAgent = (init: RequestInit = {}) =>
    fetch(new URL(`/api/sessions/${sessionId}`, relay.url), {
      ...init,
      headers: { authorization: `Bearer ${vars.ASKRELAY_TOKEN}`, 'content-type': 'application/json' },
    });
  expect((await asAgent()).status).toBe(200);
  const patch = await asAgent({ method: 'PATCH', body: JSON.stringify({ agentsMayAnswer: true }) });
  expect(patch.status).toBe(403);
  expect(((await patch.json()) as { error: { code: string } }).error.code).toBe('human_only');
}

/**
 * Starts a session (`body` for POST /api/sessions) whose scripted model runs PROBE_COMMAND and
 * then says "ack", waits for that turn to end, and checks the output `read()` finds in what
 * the model was sent (expectAgentEnv).
 */
export async function probeSession(relay: TestRelay, body: Record<string, unknown>, read: () => string | undefined): Promise<void> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { prompt: 'Show me your environment.', ...body } });
  expect(res.status).toBe(201);
  const session = (await res.json()) as Session;
  await sessionApi(() => relay).idleWith(session.id, 'ack');
  const output = read();
  expect(output).toBeDefined();
  await expectAgentEnv(output!, relay, session.id);
}
