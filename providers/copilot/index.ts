export { ASK_USER, ASK_USER_PARAMETERS, AskUserInputSchema, copilotToolSchema, MAX_CHOICES } from './tool.js';
export { classicCardDraft, classicResponse, noAnswerText, toCardDraft, toToolResult } from './adapter.js';
export { permissionDecision, permissionDraft } from './approvals.js';
export { copilotRunner, githubCopilotRunner } from './runner.js';
export { checkCopilotStart, COPILOT_ENGINES } from './engines.js';

import { declareProvider } from '../../src/sessions/providers.js';
import { checkCopilotStart, COPILOT_ENGINES } from './engines.js';
import { COPILOT_ENDPOINT, githubCopilotRunner } from './runner.js';

export const copilotProvider = declareProvider({
  id: 'copilot',
  name: 'GitHub Copilot',
  engines: COPILOT_ENGINES,
  // Without a base URL the runtime uses the logged-in GitHub user.
  variables: [COPILOT_ENDPOINT.baseUrlVar, COPILOT_ENDPOINT.apiKeyVar, COPILOT_ENDPOINT.modelVar],
  runner: githubCopilotRunner,
  checkStart: checkCopilotStart,
});
