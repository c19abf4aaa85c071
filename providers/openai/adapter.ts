// Same tool, same answer formats as Copilot: the Copilot runtime hands results to the model.
export { classicCardDraft, classicResponse, noAnswerText, toCardDraft, toToolResult } from '../copilot/adapter.js';
