export { ASK_HUMAN, GEMINI_ASK_TOOL, MCP_SERVER_NAME } from './tool.js';
export { geminiSettings } from './adapter.js';
export { geminiRunner, GEMINI_ENDPOINT } from './runner.js';

import { declareProvider } from '../../src/sessions/providers.js';
import { GEMINI_ENDPOINT, geminiRunner } from './runner.js';

export const geminiProvider = declareProvider({
  id: 'gemini',
  name: 'Gemini CLI',
  engines: [{ id: 'acp', name: 'Gemini CLI through the Agent Client Protocol (--acp)', default: true }],
  variables: [GEMINI_ENDPOINT.baseUrlVar, GEMINI_ENDPOINT.apiKeyVar, GEMINI_ENDPOINT.modelVar],
  runner: geminiRunner,
});
