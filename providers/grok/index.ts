export { GROK_QUESTION_TOOL, grokSystemPrompt } from './tool.js';
export { asksUser, assistantMessage, toolArguments, toolMessage, transcriptEntries, type GrokReply, type GrokToolCall } from './adapter.js';
export { grokProvider, MAX_TOOL_ROUNDS, readableApiError, unansweredCalls } from './runner.js';
