export { ASK_USER_QUESTION, ASK_USER_QUESTION_TOOL } from './tool.js';
export { toCardDraft, toToolResult, toUpdatedInput } from './adapter.js';
export { deepseekRunner } from './runner.js';

import { declareProvider } from '../../src/sessions/providers.js';
import { ANTHROPIC_ENGINES } from '../claude/engines.js';
import { DEEPSEEK_ENDPOINT, deepseekRunner } from './runner.js';

export const deepseekProvider = declareProvider({
  id: 'deepseek',
  name: 'DeepSeek',
  engines: ANTHROPIC_ENGINES,
  variables: [DEEPSEEK_ENDPOINT.baseUrlVar, DEEPSEEK_ENDPOINT.apiKeyVar],
  runner: deepseekRunner,
});
