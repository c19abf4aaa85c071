export { ASK_USER, ASK_USER_DESCRIPTION, ASK_USER_TOOL, AskUserInputSchema, AskUserOutputSchema, MAX_HEADER, MAX_OPTIONS, MAX_QUESTIONS, MIN_OPTIONS } from './tool.js';
export { noAnswerSentence, PROVIDER, toCardDraft, toToolError, toToolResult } from './adapter.js';
export type { AnswerLine, StructuredResult, ToolError, ToolResult } from './adapter.js';
export { cursorDialect } from './runner.js';
