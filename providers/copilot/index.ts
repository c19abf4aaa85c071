export { ASK_USER, ASK_USER_PARAMETERS, AskUserInputSchema, copilotToolSchema, MAX_CHOICES } from './tool.js';
export { classicCardDraft, classicResponse, noAnswerText, toCardDraft, toToolResult } from './adapter.js';
export { permissionDecision, permissionDraft } from './approvals.js';
export { copilotProvider, copilotRunner } from './runner.js';
