export { ASK_USER_QUESTION, ASK_USER_QUESTION_TOOL, EXIT_PLAN_MODE } from './tool.js';
export { toCardDraft, toToolResult, toUpdatedInput } from './adapter.js';
export { planApprovalDraft, planDecision } from './approvals.js';
export { anthropicRunner, claudeRunner } from './runner.js';

import { declareProvider } from '../../src/sessions/providers.js';
import { ANTHROPIC_ENGINES } from './engines.js';
import { CLAUDE_ENDPOINT, claudeRunner } from './runner.js';

export { ANTHROPIC_ENGINES } from './engines.js';

export const claudeProvider = declareProvider({
  id: 'claude',
  name: 'Claude',
  engines: ANTHROPIC_ENGINES,
  variables: [CLAUDE_ENDPOINT.baseUrlVar, CLAUDE_ENDPOINT.apiKeyVar],
  runner: claudeRunner,
});
