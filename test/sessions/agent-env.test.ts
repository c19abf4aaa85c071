import { describe, expect, it } from 'vitest';
import { agentEnv } from '../../src/sessions/agent-env.js';

// What a spawned agent process gets from a RunnerContext's env: the spawning runners' own
// tests (test/providers/claude-code-env.test.ts, copilot-env.test.ts) watch it in a real shell.

describe('agentEnv', () => {
  it("keeps the session's ASKRELAY_TOKEN and ASKRELAY_URL and the rest of the environment, and drops every other ASKRELAY_* setting", () => {
    const env = {
      PATH: '/bin',
      OPENAI_API_KEY: 'sk',
      ASKRELAY_TOKEN: 'asa_session',
      ASKRELAY_URL: 'http://127.0.0.1:7070/',
      ASKRELAY_AUDIT_KEY: 'operator-audit-key',
      ASKRELAY_DATABASE_URL: 'postgres://relay:secret@db/askrelay',
      ASKRELAY_WORKDIR: '/work',
    };
    expect(agentEnv(env)).toEqual({ PATH: '/bin', OPENAI_API_KEY: 'sk', ASKRELAY_TOKEN: 'asa_session', ASKRELAY_URL: 'http://127.0.0.1:7070/' });
  });

  it('leaves out what is unset: a relay that does not know its URL yet hands none', () => {
    expect(agentEnv({ PATH: '/bin', ASKRELAY_TOKEN: 'asa_session', ASKRELAY_URL: undefined })).toEqual({ PATH: '/bin', ASKRELAY_TOKEN: 'asa_session' });
  });
});
