export { GROK_QUESTION_TOOL, grokSystemPrompt } from './tool.js';
export { asksUser, assistantMessage, toolArguments, toolMessage, transcriptEntries, type GrokReply, type GrokToolCall } from './adapter.js';
export { grokRunner, MAX_TOOL_ROUNDS } from './runner.js';

import { declareProvider } from '../../src/sessions/providers.js';
import { GROK_ENDPOINT, grokRunner } from './runner.js';

export const grokProvider = declareProvider({
  id: 'grok',
  name: 'Grok',
  engines: [{ id: 'chat', name: 'Chat Completions; no question tool, Grok asks in its reply', default: true }],
  variables: [GROK_ENDPOINT.baseUrlVar, GROK_ENDPOINT.apiKeyVar],
  runner: grokRunner,
});
