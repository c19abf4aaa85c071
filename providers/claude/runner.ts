import type { Runner, RunnerContext, RunnerFactory } from '../../src/sessions/runner.js';
import { codeEngine } from './engine-code.js';
import { messagesEngine } from './engine-messages.js';

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

export function anthropicRunner(vars: AnthropicEndpointVars): RunnerFactory {
  return {
    engines: ['code', 'messages'],
    defaultModel: (env) => env[vars.modelVar] || vars.defaultModel,
    create(ctx: RunnerContext): Runner {
      const apiKey = ctx.env[vars.apiKeyVar] ?? '';
      const endpoint = {
        baseUrl: ctx.env[vars.baseUrlVar] || vars.defaultBaseUrl,
        apiKey,
        model: ctx.session.model || vars.defaultModel,
      };
      const engine = ctx.session.engine === 'messages' ? messagesEngine(ctx, endpoint) : codeEngine(ctx, endpoint);
      if (apiKey) return engine;
      const missing = async () => {
        throw new Error(`${vars.apiKeyVar} is not set: ${vars.name} sessions need it (and ${vars.baseUrlVar} for another endpoint).`);
      };
      return { start: missing, send: missing, stop: engine.stop };
    },
  };
}

export const claudeRunner = anthropicRunner({
  name: 'Claude',
  baseUrlVar: 'ANTHROPIC_BASE_URL',
  apiKeyVar: 'ANTHROPIC_API_KEY',
  modelVar: 'ANTHROPIC_MODEL',
  defaultBaseUrl: 'https://api.anthropic.com',
  defaultModel: 'claude-sonnet-5',
});
