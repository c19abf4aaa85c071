export { ASK_USER_QUESTION, ASK_USER_QUESTION_TOOL } from './tool.js';
export { toCardDraft, toToolResult, toUpdatedInput } from './adapter.js';
export { deepseekRunner } from './runner.js';
