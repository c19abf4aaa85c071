export { ASK_USER, ASK_USER_PARAMETERS, AskUserInputSchema, MAX_CHOICES } from './tool.js';
export { classicCardDraft, classicResponse, noAnswerText, toCardDraft, toToolResult } from './adapter.js';
export { openaiProvider } from './runner.js';
