export { ASK_USER_QUESTION, ASK_USER_QUESTION_TOOL, EXIT_PLAN_MODE } from './tool.js';
export { toCardDraft, toToolResult, toUpdatedInput } from './adapter.js';
export { planApprovalDraft, planDecision } from './approvals.js';
export { anthropicRunner, claudeRunner } from './runner.js';
