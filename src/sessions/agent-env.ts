// The environment a runner hands the agent process it spawns (Claude Code, the Copilot
// runtime), whose shell runs `askrelay ask` / `askrelay mcp` as the session: the relay's own
// environment (PATH, HOME, the provider's endpoint…) without any of the operator's ASKRELAY_*
// settings (the relay token, the audit key, the database URL…), plus the two the session
// manager sets for this session: ASKRELAY_TOKEN (its agent token, which has an agent's
// rights only: src/relay/access.ts) and ASKRELAY_URL (where the relay listens).

/** The variables a RunnerContext's env carries for the agent itself (docs/architecture.md). */
export const AGENT_VARIABLES = ['ASKRELAY_TOKEN', 'ASKRELAY_URL'] as const;

/**
 * `env`: a RunnerContext's env, whose ASKRELAY_TOKEN and ASKRELAY_URL are the session's own
 * (the manager sets them over the operator's). Every other ASKRELAY_* variable is dropped,
 * and so is anything unset.
 */
export function agentEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (key.startsWith('ASKRELAY_') && !(AGENT_VARIABLES as readonly string[]).includes(key)) continue;
    out[key] = value;
  }
  return out;
}
