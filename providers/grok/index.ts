export { GROK_QUESTION_TOOL, grokSystemPrompt } from './tool.js';
export { asksUser, assistantMessage, transcriptEntries, type GrokReply } from './adapter.js';
export { grokProvider, readableApiError } from './runner.js';
