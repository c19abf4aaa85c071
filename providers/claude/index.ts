export { ASK_USER_QUESTION, ASK_USER_QUESTION_TOOL, EXIT_PLAN_MODE } from './tool.js';
export { planApprovalDraft, planDecision, toCardDraft, toToolResult, toUpdatedInput } from './adapter.js';
export { anthropicRunner, claudeRunner } from './runner.js';
