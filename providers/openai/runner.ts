import { copilotRunner } from '../copilot/runner.js';

// OpenAI through @github/copilot-sdk's BYOK provider {type: "openai"}.
export const openaiProvider = copilotRunner({
  name: 'OpenAI',
  baseUrlVar: 'OPENAI_BASE_URL',
  apiKeyVar: 'OPENAI_API_KEY',
  modelVar: 'OPENAI_MODEL',
  defaultModel: 'gpt-5.1',
  byokRequired: true,
});
