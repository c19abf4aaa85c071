import type { ProviderInfo } from '../sessions/providers.js';

// What `askrelay demo` plays, made from the registry's plain data (src/start.ts: registry):
// which provider and engine sessions its two scripted models can stand in for, and the
// environment that points those providers at them. Pure; tested in test/cli/demo-plan.test.ts.

export type Wire = 'messages' | 'chat' | 'gemini';

/**
 * The engines the demo's scripted models can play, by engine id: which model's wire each
 * speaks, and whether it starts an agent runtime (--no-code skips those). Which providers
 * offer them, and by which variables they are configured, is the registry's to say.
 */
const PLAYED_ENGINES: Record<string, { wire: Wire; runtime: boolean; plan?: true }> = {
  messages: { wire: 'messages', runtime: false },
  code: { wire: 'messages', runtime: true },
  sdk: { wire: 'chat', runtime: true },
  // The agents of the Agent Client Protocol, by provider: each speaks its own wire. Codex asks
  // only in Plan mode.
  'codex/acp': { wire: 'chat', runtime: true, plan: true },
  'gemini/acp': { wire: 'gemini', runtime: true },
};
export const WIRE_NAME: Record<Wire, string> = { messages: 'Anthropic Messages', chat: 'Chat Completions and Responses', gemini: 'Gemini API' };

/**
 * Why what an agent received reads as it does (the point of the demo: one answer, each
 * provider's own words), by the engine that wrote it.
 */
export const RESULT_WHY: Record<string, string> = {
  messages: "askrelay's own Messages loop wrote it, byte for byte as Claude Code writes AskUserQuestion's result",
  code: "Claude Code wrote it itself, from the answer askrelay handed back to its AskUserQuestion tool",
  sdk: "askrelay's ask_user answered the Copilot runtime in Copilot's own words (User selected / User responded)",
  'codex/acp': 'askrelay answered Codex\'s form (ACP elicitation); Codex writes it for its model as {"answers":{"db":{"answers":["SQLite"]}}}',
  'gemini/acp': "askrelay's ask_human (over MCP) answered Gemini CLI, which hands its model this text",
};
/** The scripted Chat Completions model's name: the Copilot runtime asks for it by name. */
const CHAT_MODEL = 'gpt-scripted';
/** Claude Code's own switches (Bedrock, Vertex, CLAUDE_CONFIG_DIR…) could send it elsewhere. */
const ALSO_LEFT_OUT = ['ASKRELAY_', 'CLAUDE_'];

export interface DemoSession {
  provider: string;
  engine: string;
  /** Start it in the provider's plan mode (Codex asks only there). */
  plan?: true;
}

/** What the demo plays: a provider's wire (the one its played engines speak), then the sessions, those without a runtime first. */
export function demoPlan(providers: readonly ProviderInfo[], withRuntimes: boolean): { wires: Map<string, Wire>; sessions: DemoSession[] } {
  const wires = new Map<string, Wire>();
  const played = providers.flatMap((p) =>
    p.engines.flatMap((e) => {
      const engine = PLAYED_ENGINES[`${p.id}/${e.id}`] ?? PLAYED_ENGINES[e.id];
      if (!engine) return [];
      wires.set(p.id, engine.wire);
      return [{ provider: p.id, engine: e.id, runtime: engine.runtime, ...(engine.plan ? { plan: engine.plan } : {}) }];
    }),
  );
  const sessions = [...played.filter((s) => !s.runtime), ...(withRuntimes ? played.filter((s) => s.runtime) : [])];
  return { wires, sessions: sessions.map(({ runtime: _runtime, ...session }) => session) };
}

/** ANTHROPIC_BASE_URL → ANTHROPIC_: the family of variables a provider is configured by. */
const prefixOf = (variable: string) => variable.slice(0, variable.indexOf('_') + 1);

/**
 * The environment the demo relay hands its providers: the user's own (PATH for Claude
 * Code) without anything that would send the agents elsewhere (every provider's variables,
 * by family, Claude Code's switches, the relay's own settings), plus, for each provider the
 * demo plays, its endpoint variables pointing at the scripted model of its wire, a scratch
 * HOME and a scratch working folder.
 */
export function demoEnv(
  base: NodeJS.ProcessEnv,
  providers: readonly ProviderInfo[],
  endpoints: { wires: Map<string, Wire>; urls: Record<Wire, string> },
  home: string,
  workdir: string,
): NodeJS.ProcessEnv {
  const leftOut = [...new Set([...ALSO_LEFT_OUT, ...providers.flatMap((p) => p.variables.map(prefixOf))])];
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !leftOut.some((prefix) => key.startsWith(prefix))) env[key] = value;
  }
  for (const p of providers) {
    const wire = endpoints.wires.get(p.id);
    if (!wire) continue;
    for (const variable of p.variables) {
      if (variable.endsWith('_BASE_URL')) env[variable] = endpoints.urls[wire];
      else if (variable.endsWith('_API_KEY')) env[variable] = 'demo';
    }
    if (wire === 'chat') env[`${prefixOf(p.variables[0] ?? '')}MODEL`] = CHAT_MODEL;
  }
  return { ...env, HOME: home, ASKRELAY_WORKDIR: workdir, CLAUDE_CODE_TOTAL_TOKENS_REMINDER: 'off' };
}
