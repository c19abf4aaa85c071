import Anthropic from '@anthropic-ai/sdk';
import type { Card } from '../../src/cards/model.js';
import { relayGuidance } from '../../src/sessions/guidance.js';
import { isRelayTool, runRelayTool } from '../../src/sessions/relay-tool.js';
import type { Runner, RunnerContext } from '../../src/sessions/runner.js';
import { toCardDraft, toolInputError, toToolResult } from './adapter.js';
import { anthropicRelayTools, relayToolResultBlock } from './relay-tools.js';
import { INVALID_JSON, readReply, type Reply } from './reply-stream.js';
import { ASK_USER_QUESTION, ASK_USER_QUESTION_TOOL } from './tool.js';

// The `messages` engine: the relay runs the tool loop itself with @anthropic-ai/sdk,
// offers Claude Code's own AskUserQuestion schema, and writes the tool_result text
// exactly as Claude Code would. With the relay tool (ctx.relayTools) it also offers
// list_questions, answer_question, start_session and watch_session. The conversation is saved
// after every step, and each tool call's result as soon as it is known, so a restart picks up
// from the first tool call that has no result yet.

type Param = Anthropic.MessageParam;
type Block = Anthropic.ContentBlock;
type ToolResult = Anthropic.ToolResultBlockParam;

interface State {
  messages: Param[];
  /**
   * Results of the last reply's tool calls that are done, kept until all of them are: a
   * restart runs only the calls without one (a relay tool call, start_session say, is not
   * made twice). `endTurn`: one of them ends the turn (manual mode, nobody answered).
   */
  partial?: { results: ToolResult[]; endTurn: boolean };
}

export interface MessagesEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
}

const MAX_STEPS = 50;
const MAX_TOKENS = 8192;

export function messagesEngine(ctx: RunnerContext, endpoint: MessagesEndpoint): Runner {
  // A turn may wait on a card for hours, but only between requests: each model request
  // itself gets the SDK's default timeout (10 min) and retries.
  // The key travels as x-api-key, as Anthropic documents and DeepSeek's compatible API
  // expects; this SDK version would otherwise send it as a bearer token.
  const client = new Anthropic({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    defaultHeaders: { 'x-api-key': endpoint.apiKey, authorization: null },
    maxRetries: 2,
  });
  const state: State = ctx.loadState<State>() ?? { messages: [] };
  const save = () => ctx.saveState(state);
  const system = relayGuidance(ASK_USER_QUESTION, ctx.session.relayMode);
  const relayTools = ctx.relayTools;
  const tools: Anthropic.Tool[] = [ASK_USER_QUESTION_TOOL as Anthropic.Tool, ...(relayTools ? anthropicRelayTools(relayTools.definitions) : [])];

  async function answerTools(content: Block[]): Promise<{ results: ToolResult[]; endTurn: boolean }> {
    const calls = content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    if (calls.length === 0) return { results: [], endTurn: false };
    const partial = (state.partial ??= { results: [], endTurn: false });
    for (const block of calls) {
      if (partial.results.some((r) => r.tool_use_id === block.id)) continue;
      const result = await answerTool(block);
      partial.results.push(result.block);
      partial.endTurn ||= result.endTurn;
      save();
    }
    return partial;
  }

  async function answerTool(block: Anthropic.ToolUseBlock): Promise<{ block: ToolResult; endTurn: boolean }> {
    const error = (text: string) => ({ block: { type: 'tool_result' as const, tool_use_id: block.id, content: text, is_error: true }, endTurn: false });
    const invalid = (block.input as { [INVALID_JSON]?: string })[INVALID_JSON];
    if (relayTools && isRelayTool(block.name)) return { block: await answerRelayTool(block, invalid), endTurn: false };
    if (block.name !== ASK_USER_QUESTION) return error(`<tool_use_error>Error: No such tool available: ${block.name}</tool_use_error>`);
    const parsed = invalid !== undefined ? { ok: false as const, error: `the tool input is not valid JSON: ${invalid.slice(0, 200)}` } : toCardDraft(block.input);
    if (!parsed.ok) {
      ctx.log('tool', toolInputError(parsed.error));
      return error(toolInputError(parsed.error));
    }
    const card: Card = await ctx.ask({ ...parsed.draft, toolCallId: block.id });
    // Stopped or shutting down: the card stays as it is and nothing is recorded, so a
    // restart finds the call still pending.
    if (ctx.signal.aborted) throw new Error('The session was stopped.');
    const content = toToolResult(parsed.input, card);
    ctx.log('tool', content, card.id);
    const endTurn = card.status === 'cancelled' || (card.status === 'expired' && ctx.session.relayMode === 'manual');
    return { block: { type: 'tool_result', tool_use_id: block.id, content }, endTurn };
  }

  /** list_questions, answer_question, start_session, watch_session: the relay answers; start and watch may wait on the human. */
  async function answerRelayTool(block: Anthropic.ToolUseBlock, invalidJson: string | undefined): Promise<ToolResult> {
    const invalid = invalidJson !== undefined ? { invalid: `The ${block.name} input is not valid JSON: ${invalidJson.slice(0, 200)}` } : {};
    const result = await runRelayTool(ctx, block.name, block.input, { toolCallId: block.id, ...invalid });
    // Stopped or shutting down while an approval card was open: nothing is recorded, so a
    // restart makes the call again (its card re-attaches through the tool call id).
    if (!result) throw new Error('The session was stopped.');
    return relayToolResultBlock(block.id, result);
  }

  async function loop(): Promise<void> {
    for (let step = 0; step < MAX_STEPS && !ctx.signal.aborted; step++) {
      const last = state.messages.at(-1);
      if (last?.role === 'assistant') {
        // Tool calls of the last reply still need results: right after the model asked,
        // or after a restart that happened while a card was open.
        const { results, endTurn } = await answerTools(last.content as Block[]);
        if (results.length === 0 || ctx.signal.aborted) return;
        state.messages.push({ role: 'user', content: results });
        delete state.partial;
        save();
        if (endTurn) return; // manual mode: nobody answered, so wait for the next message
        continue;
      }
      const reply = await request();
      state.messages.push({ role: 'assistant', content: reply.content });
      save();
      for (const block of reply.content) if (block.type === 'text' && block.text.trim()) ctx.log('assistant', block.text);
      if (reply.stop_reason !== 'tool_use') return;
    }
  }

  async function request(): Promise<Reply> {
    try {
      const events = await client.messages.create(
        { model: endpoint.model, max_tokens: MAX_TOKENS, system, tools, messages: state.messages, stream: true },
        { signal: ctx.signal },
      );
      return await readReply(events, () => ctx.heartbeat());
    } catch (err) {
      throw readableApiError(err, endpoint.baseUrl);
    }
  }

  return {
    async start(prompt, resumed) {
      if (!resumed || state.messages.length === 0) {
        state.messages.push({ role: 'user', content: prompt });
        save();
      }
      await loop();
    },
    async send(text) {
      const last = state.messages.at(-1);
      // After a turn that ended on tool results, the next user text joins that message:
      // the API wants user and assistant turns to alternate.
      if (last?.role === 'user' && Array.isArray(last.content)) {
        last.content = [...last.content, { type: 'text', text }];
      } else {
        state.messages.push({ role: 'user', content: text });
      }
      save();
      await loop();
    },
    async stop() {},
  };
}

/**
 * What went wrong with a model request, as one sentence a person can act on: an HTTP error
 * the SDK gave up on after its retries ("400 {json}"), an endpoint it could not reach, or a
 * reply the API broke off (an `error` event in the stream, or a connection that closed).
 */
function readableApiError(err: unknown, baseUrl: string): Error {
  const at = `The model API at ${baseUrl}`;
  if (err instanceof Anthropic.APIUserAbortError) return err; // the session was stopped
  if (err instanceof Anthropic.APIConnectionError) return new Error(`${at} could not be reached: ${innermostMessage(err)}`);
  if (err instanceof Anthropic.APIError) {
    const body = err.error as { error?: { type?: string; message?: string } } | undefined;
    const detail = body?.error?.message ? `${body.error.type ?? 'error'}: ${body.error.message}` : err.message;
    // No status: the reply had begun (200) and an `error` event ended it.
    if (err.status === undefined) return new Error(`${at} broke off its reply with an error: ${detail}`);
    return new Error(`${at} answered ${err.status}: ${detail}`);
  }
  // fetch reports a body that ended before the stream did as `TypeError: terminated`.
  if (causes(err).some((e) => e instanceof TypeError && e.message === 'terminated')) return new Error(`${at} broke off its reply: ${innermostMessage(err)}`);
  return err instanceof Error ? err : new Error(String(err));
}

/** The error and its causes, outermost first. */
function causes(err: unknown): Error[] {
  const out: Error[] = [];
  for (let e = err; e instanceof Error && out.length < 10; e = e.cause) out.push(e);
  return out;
}

/** The deepest cause's message (e.g. `connect ECONNREFUSED 127.0.0.1:9` under `Connection error.`). */
function innermostMessage(err: unknown): string {
  const chain = causes(err).filter((e) => e.message);
  return chain.at(-1)?.message ?? String(err);
}
