import { lazyRunner, missingKeyRunner, type ProviderRunner, type Runner, type RunnerContext } from '../../src/sessions/runner.js';

// Claude and every Anthropic-compatible API (DeepSeek) run the same two engines; only
// the endpoint variables and defaults differ.

export interface AnthropicEndpointVars {
  name: string;
  baseUrlVar: string;
  apiKeyVar: string;
  modelVar: string;
  defaultBaseUrl: string;
  defaultModel: string;
}

export function anthropicRunner(vars: AnthropicEndpointVars): ProviderRunner {
  return {
    // The messages engine keeps the conversation in the store; Claude Code keeps it on this node's disk.
    movable: ['messages'],
    defaultModel: (env) => env[vars.modelVar] || vars.defaultModel,
    create(ctx: RunnerContext): Runner {
      const apiKey = ctx.env[vars.apiKeyVar] ?? '';
      const endpoint = {
        baseUrl: ctx.env[vars.baseUrlVar] || vars.defaultBaseUrl,
        apiKey,
        model: ctx.session.model || vars.defaultModel,
      };
      if (!apiKey) return missingKeyRunner(vars);
      // Each engine's SDK loads with the first session that runs on it.
      return lazyRunner(async () =>
        ctx.session.engine === 'messages' ? (await import('./engine-messages.js')).messagesEngine(ctx, endpoint) : (await import('./engine-code.js')).codeEngine(ctx, endpoint),
      );
    },
  };
}

export const CLAUDE_ENDPOINT: AnthropicEndpointVars = {
  name: 'Claude',
  baseUrlVar: 'ANTHROPIC_BASE_URL',
  apiKeyVar: 'ANTHROPIC_API_KEY',
  modelVar: 'ANTHROPIC_MODEL',
  defaultBaseUrl: 'https://api.anthropic.com',
  defaultModel: 'claude-sonnet-5',
};

export const claudeRunner = anthropicRunner(CLAUDE_ENDPOINT);
