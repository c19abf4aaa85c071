export { ASK_USER, ASK_USER_PARAMETERS, AskUserInputSchema, MAX_CHOICES } from './tool.js';
export { classicCardDraft, classicResponse, noAnswerText, toCardDraft, toToolResult } from './adapter.js';
export { openaiRunner } from './runner.js';

import { declareProvider } from '../../src/sessions/providers.js';
import { checkCopilotStart, COPILOT_ENGINES } from '../copilot/engines.js';
import { OPENAI_ENDPOINT, openaiRunner } from './runner.js';

export const openaiProvider = declareProvider({
  id: 'openai',
  name: 'OpenAI',
  engines: COPILOT_ENGINES,
  variables: [OPENAI_ENDPOINT.baseUrlVar, OPENAI_ENDPOINT.apiKeyVar],
  runner: openaiRunner,
  checkStart: checkCopilotStart,
});
