import { lazyRunner, missingKeyRunner, type ProviderRunner } from '../../src/sessions/runner.js';

// Copilot and OpenAI through @github/copilot-sdk. Engine `sdk`: askrelay's ask_user
// replaces the built-in one. Engine `extension`: Copilot's own ask_user passes through
// (onUserInputRequest). Both engines also offer the relay tool (handlers.ts). Turns use
// send() and session events, never sendAndWait (60 s); a restart is restart.ts.

export interface CopilotEndpointVars {
  name: string;
  /** Without a base URL the runtime uses the logged-in GitHub user. */
  baseUrlVar: string;
  apiKeyVar: string;
  modelVar: string;
  defaultModel: string;
  /** BYOK is required (OpenAI) or optional (Copilot). */
  byokRequired: boolean;
}

export function copilotRunner(vars: CopilotEndpointVars): ProviderRunner {
  return {
    defaultModel: (env) => env[vars.modelVar] || vars.defaultModel,
    create(ctx) {
      const baseUrl = ctx.env[vars.baseUrlVar];
      if (vars.byokRequired && !ctx.env[vars.apiKeyVar]) {
        return missingKeyRunner(vars);
      }
      const provider = baseUrl || vars.byokRequired
        ? { type: 'openai' as const, baseUrl: baseUrl || 'https://api.openai.com/v1', apiKey: ctx.env[vars.apiKeyVar] ?? '' }
        : undefined;
      // The SDK (and its runtime) loads with the first Copilot or OpenAI session that runs.
      return lazyRunner(async () => (await import('./engine.js')).copilotEngine(ctx, provider));
    },
  };
}

// The logged-in GitHub user by default; a BYOK provider when COPILOT_PROVIDER_BASE_URL is set.
export const COPILOT_ENDPOINT: CopilotEndpointVars = {
  name: 'Copilot',
  baseUrlVar: 'COPILOT_PROVIDER_BASE_URL',
  apiKeyVar: 'COPILOT_PROVIDER_API_KEY',
  modelVar: 'COPILOT_MODEL',
  defaultModel: 'gpt-5.1',
  byokRequired: false,
};

export const githubCopilotRunner = copilotRunner(COPILOT_ENDPOINT);
