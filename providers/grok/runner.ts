import { lazyRunner, missingKeyRunner, type ProviderRunner, type Runner, type RunnerContext } from '../../src/sessions/runner.js';

// Grok through xAI's OpenAI-compatible Chat Completions API with the `openai` client. No
// question tool: Grok asks in its reply text, a plain-text reply ends the turn, and the
// session waits (idle) for the user's next message. The relay tool (list_questions,
// answer_question, start_session, watch_session) is offered as function tools: a reply
// with tool_calls runs each call, appends its `tool` message and asks Grok again. The
// conversation is saved after every step (request, reply, each tool result), so a restart
// between turns loses nothing, a turn cut off mid-request is re-run, and a call cut off
// while its approval card was open re-opens that card (same tool call id).

export const GROK_ENDPOINT = { name: 'Grok', apiKeyVar: 'XAI_API_KEY', baseUrlVar: 'XAI_BASE_URL' };
export const DEFAULT_BASE_URL = 'https://api.x.ai/v1';
export const DEFAULT_MODEL = 'grok-4';
/** Replies with tool calls one turn may have before it is ended (a model calling tools forever). */
export const MAX_TOOL_ROUNDS = 25;

export const grokRunner: ProviderRunner = {
  // The conversation is kept in the store: another node can carry it on.
  movable: ['chat'],
  defaultModel: (env) => env.XAI_MODEL || DEFAULT_MODEL,
  create(ctx: RunnerContext): Runner {
    const apiKey = ctx.env.XAI_API_KEY ?? '';
    if (!apiKey) return missingKeyRunner(GROK_ENDPOINT);
    const endpoint = { baseUrl: ctx.env.XAI_BASE_URL || DEFAULT_BASE_URL, apiKey, model: ctx.session.model || ctx.env.XAI_MODEL || DEFAULT_MODEL };
    // The openai client loads with the first Grok session that runs (engine.ts).
    return lazyRunner(async () => (await import('./engine.js')).chatEngine(ctx, endpoint, MAX_TOOL_ROUNDS));
  },
};

