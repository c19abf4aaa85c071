import { demoReply } from './demo-reply.js';
import { DEMO_QUESTION } from './anthropic-script.js';
import { lastFunctionResponse, type ScriptedGeminiModel } from './gemini-server.js';
import { lastFunctionCallOutput, type ScriptedResponsesModel } from './openai-responses.js';

// The scripted models `askrelay demo` plays for the agents of the Agent Client Protocol: Codex
// (Responses API) asks with its request_user_input (the demo starts it in Plan mode), Gemini
// CLI (Gemini API) with askrelay's ask_human over MCP. Each asks the demo's one question, then
// names only the choice it read in the result (demo-reply.ts). No vitest.

const [question] = DEMO_QUESTION.questions;
const TITLE = /generate a very short title/;

export const demoResponsesModel: ScriptedResponsesModel = (request) => {
  // Codex asks its model for the session's title beside the turn.
  if (TITLE.test(JSON.stringify(request.input ?? ''))) return { text: '{"title": "askrelay demo"}' };
  const output = lastFunctionCallOutput(request);
  if (output) return { text: demoReply(output.output) };
  return {
    functionCalls: [{ name: 'request_user_input', arguments: { questions: [{ id: 'db', header: question.header, question: question.question, options: question.options }] } }],
  };
};

export const demoGeminiModel: ScriptedGeminiModel = (request) => {
  const response = lastFunctionResponse(request);
  if (response) return { text: demoReply(String(response.response.output ?? response.response.error ?? '')) };
  return { functionCalls: [{ name: 'mcp_askrelay_ask_human', args: { questions: [{ question: question.question, header: question.header, options: question.options }] } }] };
};
