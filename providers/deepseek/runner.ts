import { anthropicRunner, type AnthropicEndpointVars } from '../claude/runner.js';

// DEEPSEEK_API_KEY travels as x-api-key, as the Anthropic SDK and Claude Code send it.
export const DEEPSEEK_ENDPOINT: AnthropicEndpointVars = {
  name: 'DeepSeek',
  baseUrlVar: 'DEEPSEEK_BASE_URL',
  apiKeyVar: 'DEEPSEEK_API_KEY',
  modelVar: 'DEEPSEEK_MODEL',
  defaultBaseUrl: 'https://api.deepseek.com/anthropic',
  defaultModel: 'deepseek-chat',
};

export const deepseekRunner = anthropicRunner(DEEPSEEK_ENDPOINT);
