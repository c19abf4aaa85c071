import OpenAI from 'openai';
import { missingKeyRunner, type Runner, type RunnerContext, type RunnerFactory } from '../../src/sessions/runner.js';
import { assistantMessage, transcriptEntries } from './adapter.js';
import { grokSystemPrompt } from './tool.js';

// Grok through xAI's OpenAI-compatible Chat Completions API with the `openai` client. No
// tools are offered: Grok asks in its reply text, every reply ends the turn, and the
// session waits (idle) for the user's next message. The conversation is saved after every
// step, so a restart between turns loses nothing and a turn cut off mid-request is re-run.

type Message = OpenAI.ChatCompletionMessageParam;

interface State {
  /** user and assistant messages; the system prompt is rebuilt for every request. */
  messages: Message[];
}

const VARS = { name: 'Grok', apiKeyVar: 'XAI_API_KEY', baseUrlVar: 'XAI_BASE_URL' };
export const DEFAULT_BASE_URL = 'https://api.x.ai/v1';
export const DEFAULT_MODEL = 'grok-4';

export const grokProvider: RunnerFactory = {
  engines: ['chat'],
  defaultModel: (env) => env.XAI_MODEL || DEFAULT_MODEL,
  create(ctx: RunnerContext): Runner {
    const apiKey = ctx.env.XAI_API_KEY ?? '';
    if (!apiKey) return missingKeyRunner(VARS);
    return chatEngine(ctx, {
      baseUrl: ctx.env.XAI_BASE_URL || DEFAULT_BASE_URL,
      apiKey,
      model: ctx.session.model || ctx.env.XAI_MODEL || DEFAULT_MODEL,
    });
  },
};

function chatEngine(ctx: RunnerContext, endpoint: { baseUrl: string; apiKey: string; model: string }): Runner {
  // Each request gets the client's default timeout (10 min) and two retries; the wait for
  // the user happens between turns, outside any request.
  const client = new OpenAI({ baseURL: endpoint.baseUrl, apiKey: endpoint.apiKey, maxRetries: 2 });
  const state: State = ctx.loadState<State>() ?? { messages: [] };
  const save = () => ctx.saveState(state);
  const system = grokSystemPrompt(ctx.session.relayMode);

  /** One turn: a request when the user spoke last; an assistant reply already stored means the turn is over. */
  async function turn(): Promise<void> {
    if (ctx.signal.aborted || state.messages.at(-1)?.role !== 'user') return;
    const reply = await request();
    if (ctx.signal.aborted) return;
    state.messages.push(assistantMessage(reply));
    save();
    for (const entry of transcriptEntries(reply)) ctx.log(entry.role, entry.text);
  }

  async function request() {
    const stream = client.chat.completions.stream(
      { model: endpoint.model, messages: [{ role: 'system', content: system }, ...state.messages] },
      { signal: ctx.signal },
    );
    stream.on('chunk', () => ctx.heartbeat());
    try {
      const completion = await stream.finalChatCompletion();
      const choice = completion.choices[0];
      return { content: choice?.message.content, refusal: choice?.message.refusal, finishReason: choice?.finish_reason };
    } catch (err) {
      if (ctx.signal.aborted) throw new Error('The session was stopped.');
      throw readableApiError(err, endpoint.baseUrl);
    }
  }

  return {
    async start(prompt, resumed) {
      if (!resumed || state.messages.length === 0) {
        state.messages.push({ role: 'user', content: prompt });
        save();
      }
      await turn();
    },
    async send(text) {
      state.messages.push({ role: 'user', content: text });
      save();
      await turn();
    },
    async stop() {},
  };
}

/** "401 Incorrect API key…" from the client becomes one sentence a person can act on. */
export function readableApiError(err: unknown, baseUrl: string): Error {
  if (err instanceof OpenAI.APIConnectionError) {
    return new Error(`The model API at ${baseUrl} could not be reached: ${err.cause instanceof Error ? err.cause.message : err.message}`);
  }
  if (!(err instanceof OpenAI.APIError)) return err instanceof Error ? err : new Error(String(err));
  // OpenAI-shaped bodies carry {error: {message, type, code}}; xAI's own carry
  // {code, error: "<message>"}, which the client hands over as the string alone.
  const body = err.error as { type?: string; code?: string | null; message?: string } | string | undefined;
  const detail =
    typeof body === 'string'
      ? body
      : body?.message
        ? `${body.code ?? body.type ?? 'error'}: ${body.message}`
        : err.message.replace(/^\d{3} /, '');
  return new Error(`The model API at ${baseUrl} answered ${err.status ?? 'without a status'}: ${detail}`);
}
