import { copilotRunner, type CopilotEndpointVars } from '../copilot/runner.js';

// OpenAI through @github/copilot-sdk's BYOK provider {type: "openai"}.
export const OPENAI_ENDPOINT: CopilotEndpointVars = {
  name: 'OpenAI',
  baseUrlVar: 'OPENAI_BASE_URL',
  apiKeyVar: 'OPENAI_API_KEY',
  modelVar: 'OPENAI_MODEL',
  defaultModel: 'gpt-5.1',
  byokRequired: true,
};

export const openaiRunner = copilotRunner(OPENAI_ENDPOINT);
