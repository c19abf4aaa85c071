import OpenAI from 'openai';
import { runRelayTool } from '../../src/sessions/relay-tool.js';
import type { Runner, RunnerContext } from '../../src/sessions/runner.js';
import { assistantMessage, toolArguments, toolMessage, transcriptEntries, type GrokToolCall } from './adapter.js';
import { grokSystemPrompt } from './tool.js';

// Grok's turns through the `openai` client (runner.ts loads this file when a Grok session
// first runs): see runner.ts for how a conversation goes.

type Message = OpenAI.ChatCompletionMessageParam;

interface State {
  /** user, assistant and tool messages; the system prompt is rebuilt for every request. */
  messages: Message[];
}

export function chatEngine(ctx: RunnerContext, endpoint: { baseUrl: string; apiKey: string; model: string }, maxToolRounds: number): Runner {
  // Each request gets the client's default timeout (10 min) and two retries; the wait for
  // the user happens between turns, outside any request.
  const client = new OpenAI({ baseURL: endpoint.baseUrl, apiKey: endpoint.apiKey, maxRetries: 2 });
  const state: State = ctx.loadState<State>() ?? { messages: [] };
  const save = () => ctx.saveState(state);
  const relayTools = ctx.relayTools;
  const system = grokSystemPrompt(ctx.session.relayMode, Boolean(relayTools));
  const tools: OpenAI.ChatCompletionTool[] | undefined = relayTools?.definitions.map((d) => ({
    type: 'function',
    function: { name: d.name, description: d.description, parameters: d.inputSchema },
  }));

  /**
   * One turn, from wherever the stored conversation stands: the user or a tool result spoke
   * last → ask Grok; Grok's last reply has calls without results → run them; Grok's last
   * reply is plain text → the turn is over.
   */
  async function turn(): Promise<void> {
    let rounds = 0;
    for (;;) {
      if (ctx.signal.aborted) return;
      const pending = unansweredCalls(state.messages);
      if (pending.length) {
        for (const call of pending) {
          const parsed = toolArguments(call);
          const options = { toolCallId: call.id, logName: false, ...(parsed.ok ? {} : { invalid: parsed.text }) };
          const result = await runRelayTool(ctx, call.function.name, parsed.ok ? parsed.args : undefined, options);
          if (!result) return; // stopping under an open approval card: record nothing
          state.messages.push(toolMessage(call.id, result.text));
          save();
        }
        continue;
      }
      const last = state.messages.at(-1)?.role;
      if (last !== 'user' && last !== 'tool') return;
      if (rounds >= maxToolRounds) {
        ctx.log('system', `Grok called tools in ${maxToolRounds} replies in a row; the turn was ended. Send a message to continue.`);
        return;
      }
      const reply = await request();
      if (ctx.signal.aborted) return;
      if (reply.toolCalls.length) rounds++;
      state.messages.push(assistantMessage(reply) as Message);
      save();
      for (const entry of transcriptEntries(reply)) ctx.log(entry.role, entry.text);
    }
  }

  async function request() {
    const stream = client.chat.completions.stream(
      { model: endpoint.model, messages: [{ role: 'system', content: system }, ...state.messages], ...(tools?.length ? { tools } : {}) },
      { signal: ctx.signal },
    );
    stream.on('chunk', () => ctx.heartbeat());
    try {
      const completion = await stream.finalChatCompletion();
      const choice = completion.choices[0];
      const toolCalls = (choice?.message.tool_calls ?? [])
        .filter((c): c is OpenAI.ChatCompletionMessageFunctionToolCall => c.type === 'function')
        .map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments ?? '' } }));
      return { content: choice?.message.content, refusal: choice?.message.refusal, finishReason: choice?.finish_reason, toolCalls };
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

/** The calls of Grok's last reply that have no tool message yet, in order. */
export function unansweredCalls(messages: readonly Message[]): GrokToolCall[] {
  let at = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      at = i;
      break;
    }
  }
  if (at < 0) return [];
  const calls = (messages[at] as { tool_calls?: GrokToolCall[] }).tool_calls ?? [];
  const answered = new Set(messages.slice(at + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  return calls.filter((c) => !answered.has(c.id));
}

/**
 * "401 Incorrect API key…" from the client becomes one sentence a person can act on: an
 * HTTP error, an `error` event inside the stream, a stream that broke off, or no connection.
 */
export function readableApiError(err: unknown, baseUrl: string): Error {
  if (err instanceof OpenAI.APIConnectionError) {
    return new Error(`The model API at ${baseUrl} could not be reached: ${rootCause(err)}`);
  }
  if (err instanceof OpenAI.APIError) {
    // OpenAI-shaped bodies carry {error: {message, type, code}}; xAI's own carry
    // {code, error: "<message>"}, which the client hands over as the string alone.
    const body = err.error as { type?: string; code?: string | null; message?: string } | string | undefined;
    const detail =
      typeof body === 'string'
        ? body
        : body?.message
          ? `${body.code ?? body.type ?? 'error'}: ${body.message}`
          : err.message.replace(/^\d{3} /, '');
    // No status: the stream had begun (200) when a `data: {"error": …}` event ended it.
    if (err.status === undefined) return new Error(`The model API at ${baseUrl} sent an error in the middle of its answer: ${detail}`);
    return new Error(`The model API at ${baseUrl} answered ${err.status}: ${detail}`);
  }
  // The stream wraps what broke it (the connection closed mid-answer: "terminated").
  if (err instanceof OpenAI.OpenAIError) {
    const cause = rootCause(err);
    return new Error(`The model API at ${baseUrl} broke off its answer: ${err.message}${cause !== err.message ? ` (${cause})` : ''}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** The innermost message of an error's causes: "connect ECONNREFUSED 127.0.0.1:9" rather than "fetch failed". */
function rootCause(err: Error): string {
  let message = err.message;
  for (let cause = err.cause; cause instanceof Error; cause = cause.cause) if (cause.message) message = cause.message;
  return message;
}
