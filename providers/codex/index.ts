export { ASK_USER, CODEX_ASKS, CODEX_FORM, NONE_OF_THE_ABOVE, REQUEST_USER_INPUT } from './tool.js';
export { codexQuestions, questionContent, questionDraft } from './adapter.js';
export { codexConfig, codexRunner, CODEX_ENDPOINT } from './runner.js';

import { declareProvider } from '../../src/sessions/providers.js';
import { CODEX_ENDPOINT, codexRunner } from './runner.js';

export const codexProvider = declareProvider({
  id: 'codex',
  name: 'Codex',
  engines: [{ id: 'acp', name: 'Codex through the Agent Client Protocol (codex-acp)', default: true }],
  variables: [CODEX_ENDPOINT.baseUrlVar, CODEX_ENDPOINT.apiKeyVar, CODEX_ENDPOINT.modelVar],
  runner: codexRunner,
});
