// The OpenAI Responses API wire (POST /v1/responses) the scripted OpenAI server speaks beside
// chat completions: request shapes, the scripted model, the whole `response` JSON and the
// streamed SSE events, each as the real API writes them (`event: <type>` + `data: {type,
// sequence_number, …}`, no `[DONE]`). Codex (`codex exec`, `codex app-server` under codex-acp)
// talks only this API, so it has to look real to Codex's parser as much as to the `openai`
// client. openai-server.ts routes POST /v1/responses here (option `responses`); helpers for
// scripts (the results sent back, the user's text, the tools offered) close the file.
// No vitest: this also powers `askrelay demo`.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { chunk, END_OF_SCRIPT, isObject, messageOf, playSteps, randomId, type ScriptStepOf } from './fake-http.js';
import { ARGUMENTS_CHUNK, DEFAULT_MODEL, sendError, sendJson, startEventStream, TEXT_CHUNK, type ScriptedError } from './openai-wire.js';

// ---------------------------------------------------------------------------
// Request shapes (loose on purpose: Codex sends ids, namespaces and fields the SDK types lack)

export interface ResponsesContentPart {
  type: string; // `input_text`, `output_text`, `input_image`, …
  text?: string;
  [key: string]: unknown;
}

export interface ResponsesInputItem {
  /** `message` (also when absent, the easy-input form `{role, content}`), `function_call`, `function_call_output`, `reasoning`, … */
  type?: string;
  role?: 'user' | 'assistant' | 'system' | 'developer' | string;
  content?: string | ResponsesContentPart[];
  /** On `function_call` and `function_call_output` items. */
  call_id?: string;
  name?: string;
  arguments?: string;
  /** A `function_call_output`'s result: a string, or content parts. */
  output?: string | ResponsesContentPart[];
  [key: string]: unknown;
}

export interface ResponsesTool {
  /** `function`, `namespace` (Codex groups tools, e.g. `multi_agent_v1`), `web_search`, … */
  type: string;
  name?: string;
  description?: string;
  parameters?: unknown;
  strict?: boolean | null;
  tools?: ResponsesTool[];
  [key: string]: unknown;
}

/** The JSON body of POST /v1/responses, as the client sent it. */
export interface ResponsesRequest {
  model: string;
  input?: string | ResponsesInputItem[];
  instructions?: string | null;
  tools?: ResponsesTool[];
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean; [key: string]: unknown } | null;
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------
// The scripted model

export interface ScriptedFunctionCall {
  name: string;
  /** Any value is sent as `JSON.stringify(arguments)`; a string is sent verbatim (raw JSON text). */
  arguments: unknown;
  /** Defaults to a fresh `call_…` id (the id the result comes back under, as `function_call_output.call_id`). */
  callId?: string;
  /** The tool's namespace, for a tool offered inside a `namespace` tool (Codex's MCP servers: `mcp__<server>`). */
  namespace?: string;
}

export interface ScriptedResponsesReply {
  /** Assistant text: one `message` output item, before any function calls. */
  text?: string;
  /** One `function_call` output item each, in order. */
  functionCalls?: ScriptedFunctionCall[];
  /** Answer with this HTTP error (OpenAI's `{error:{message, type, param, code}}`) instead of a response. */
  error?: ScriptedError;
  /**
   * The response fails after it started: a stream sends `response.created`, `response.in_progress`,
   * then `response.failed` whose `response.error` is `{code, message}` (code defaults to
   * `server_error`); without `stream` it is a 500 with that message.
   */
  failure?: { message: string; code?: string };
}

/** Decides the reply to one Responses request; `index` counts the requests handed to it so far (0-based). */
export type ScriptedResponsesModel = (request: ResponsesRequest, index: number) => ScriptedResponsesReply | Promise<ScriptedResponsesReply>;

/** OpenAI's item ids: a prefix and 48 hex digits (`resp_`, `msg_`, `fc_`). Call ids are `call_` + 24 letters and digits. */
export const openAIItemId = (prefix: 'resp_' | 'msg_' | 'fc_' | 'rs_') => `${prefix}${randomBytes(24).toString('hex')}`;

// ---------------------------------------------------------------------------
// The route

/** Answers POST /v1/responses once the server has checked the key and that the body is a JSON object. */
export async function answerResponses(
  res: ServerResponse,
  body: Record<string, unknown>,
  raw: string,
  callModel: (request: ResponsesRequest) => ScriptedResponsesReply | Promise<ScriptedResponsesReply>,
): Promise<void> {
  if (body.model === undefined) {
    sendError(res, { status: 400, message: "Missing required parameter: 'model'.", param: 'model', code: 'missing_required_parameter' });
    return;
  }
  if (body.input !== undefined && typeof body.input !== 'string' && !Array.isArray(body.input)) {
    sendError(res, { status: 400, message: `Invalid type for 'input': expected one of a string or an array, but got ${typeof body.input} instead.`, param: 'input', code: 'invalid_type' });
    return;
  }
  const request = body as ResponsesRequest;
  let reply: ScriptedResponsesReply;
  try {
    reply = await callModel(request);
  } catch (error) {
    sendError(res, { status: 500, message: `scripted model failed: ${messageOf(error)}` });
    return;
  }
  if (res.destroyed) return; // the client left (or close() ran) while the model was thinking
  if (reply.error) sendError(res, reply.error);
  else writeResponse(res, request, reply, Math.max(1, Math.ceil(raw.length / 4)));
}

// ---------------------------------------------------------------------------
// Responses on the wire

type Item = Record<string, unknown> & { id: string; type: 'message' | 'function_call' };

/** Writes the scripted reply: the SSE event sequence with `stream`, else the whole `response` object. */
export function writeResponse(res: ServerResponse, request: ResponsesRequest, reply: ScriptedResponsesReply, inputTokens: number): void {
  const items: Item[] = [];
  if (reply.text !== undefined || !reply.functionCalls?.length) {
    const part = { type: 'output_text', annotations: [], logprobs: [], text: reply.text ?? '' };
    items.push({ id: openAIItemId('msg_'), type: 'message', status: 'completed', content: [part], role: 'assistant' });
  }
  for (const call of reply.functionCalls ?? []) {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
    items.push({ id: openAIItemId('fc_'), type: 'function_call', status: 'completed', arguments: args, call_id: call.callId ?? randomId('call_', 24), name: call.name, ...(call.namespace ? { namespace: call.namespace } : {}) });
  }
  const produced = items.reduce((sum, item) => sum + (item.type === 'message' ? (reply.text ?? '').length : `${item.name}${item.arguments}`.length), 0);
  const outputTokens = Math.max(1, Math.ceil(produced / 4));
  const usage = { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + outputTokens };
  const shell = responseShell(request);
  const failed = reply.failure && { ...shell, status: 'failed', error: { code: reply.failure.code ?? 'server_error', message: reply.failure.message } };
  const completed = { ...shell, status: 'completed', completed_at: Math.floor(Date.now() / 1000), output: items, usage };

  if (!request.stream) {
    if (reply.failure) sendError(res, { status: 500, message: reply.failure.message, code: reply.failure.code ?? 'server_error' });
    else sendJson(res, 200, completed);
    return;
  }
  startEventStream(res);
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
  // The real API pads delta events with random `obfuscation` text unless the client opts out.
  const obfuscate = request.stream_options?.include_obfuscation !== false;
  const pad = (): Record<string, unknown> => (obfuscate ? { obfuscation: randomId('', 1 + randomBytes(1)[0]! % 15) } : {});

  send('response.created', { response: shell });
  send('response.in_progress', { response: shell });
  if (failed) {
    send('response.failed', { response: failed });
    res.end();
    return;
  }
  items.forEach((item, output_index) => {
    if (item.type === 'message') {
      const text = (item.content as Array<{ text: string }>)[0]!.text;
      const at = { item_id: item.id, output_index, content_index: 0 };
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      send('response.content_part.added', { ...at, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
      if (text) for (const delta of chunk(text, TEXT_CHUNK)) send('response.output_text.delta', { ...at, delta, logprobs: [], ...pad() });
      send('response.output_text.done', { ...at, text, logprobs: [] });
      send('response.content_part.done', { ...at, part: (item.content as unknown[])[0] });
    } else {
      const args = item.arguments as string;
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      if (args) for (const delta of chunk(args, ARGUMENTS_CHUNK)) send('response.function_call_arguments.delta', { item_id: item.id, output_index, delta, ...pad() });
      send('response.function_call_arguments.done', { item_id: item.id, output_index, name: item.name, arguments: args });
    }
    send('response.output_item.done', { output_index, item });
  });
  send('response.completed', { response: completed });
  res.end();
}

/**
 * The `response` object before any output: the real API echoes the request's settings
 * (instructions, tools, tool_choice, reasoning, store, …) with its defaults filled in.
 */
function responseShell(request: ResponsesRequest): Record<string, unknown> {
  const given = (key: string, fallback: unknown) => (request[key] === undefined ? fallback : request[key]);
  const reasoning = isObject(request.reasoning) ? request.reasoning : {};
  const model = typeof request.model === 'string' && request.model ? request.model : DEFAULT_MODEL;
  return {
    id: openAIItemId('resp_'), object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'in_progress',
    background: false, completed_at: null, error: null, incomplete_details: null,
    instructions: given('instructions', null), max_output_tokens: given('max_output_tokens', null), max_tool_calls: given('max_tool_calls', null),
    model, output: [], parallel_tool_calls: given('parallel_tool_calls', true), previous_response_id: given('previous_response_id', null),
    prompt_cache_key: given('prompt_cache_key', null), reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    safety_identifier: given('safety_identifier', null), service_tier: 'default', store: given('store', true), temperature: given('temperature', 1),
    text: given('text', { format: { type: 'text' }, verbosity: 'medium' }), tool_choice: given('tool_choice', 'auto'), tools: given('tools', []),
    top_logprobs: given('top_logprobs', 0), top_p: given('top_p', 1), truncation: given('truncation', 'disabled'), usage: null, user: null,
    metadata: given('metadata', {}),
  };
}

// ---------------------------------------------------------------------------
// Helpers for scripted models

export interface FunctionCallOutput {
  call_id: string;
  /** Normalized to a string (text parts joined with blank lines). */
  output: string;
}

/** What the helpers read from a request: `ResponsesRequest` and the `openai` client's `ResponseCreateParams` both fit. */
export interface ResponsesRequestLike {
  input?: string | ReadonlyArray<unknown> | null;
  tools?: ReadonlyArray<unknown> | null;
}

const inputItems = (request: ResponsesRequestLike): Record<string, unknown>[] =>
  Array.isArray(request.input) ? request.input.filter(isObject) : [];

/**
 * The `function_call_output` items the latest model step got back: the trailing run of
 * function calls and their outputs (and reasoning) at the end of `input`, outputs only, in order.
 */
export function functionCallOutputs(request: ResponsesRequestLike): FunctionCallOutput[] {
  const items = inputItems(request);
  let start = items.length;
  while (start > 0 && ['function_call', 'function_call_output', 'reasoning'].includes(String(items[start - 1]!.type))) start--;
  return items.slice(start).filter((item) => item.type === 'function_call_output').map(toOutput);
}

/** The last of `functionCallOutputs`, or undefined when the request does not end with results. */
export function lastFunctionCallOutput(request: ResponsesRequestLike): FunctionCallOutput | undefined {
  return functionCallOutputs(request).at(-1);
}

/** What came back for the call with this id, in any logged request (`server.requests`). */
export function functionCallOutputFor(requests: ReadonlyArray<{ body?: unknown }>, callId: string): string | undefined {
  for (const request of requests) {
    if (!isObject(request.body)) continue;
    const item = inputItems(request.body).find((i) => i.type === 'function_call_output' && i.call_id === callId);
    if (item) return toOutput(item).output;
  }
  return undefined;
}

/** The text of the last user message (`input` itself when it is a string); `''` when there is none. */
export function lastUserText(request: ResponsesRequestLike): string {
  if (typeof request.input === 'string') return request.input;
  const items = inputItems(request);
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.role === 'user' && (item.type === undefined || item.type === 'message')) return partsText(item.content);
  }
  return '';
}

/** The names of the tools offered, in order (a tool without a name, e.g. `web_search`, shows its type). */
export function toolNames(request: ResponsesRequestLike): string[] {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  return tools.map((tool) => String(tool.name ?? tool.type ?? ''));
}

/** The JSON schema (`parameters`) of the function tool called `name`, or undefined. */
export function toolSchema(request: ResponsesRequestLike, name: string): unknown {
  const tools = Array.isArray(request.tools) ? request.tools.filter(isObject) : [];
  return tools.find((tool) => tool.type === 'function' && tool.name === name)?.parameters;
}

function toOutput(item: Record<string, unknown>): FunctionCallOutput {
  return { call_id: String(item.call_id ?? ''), output: partsText(item.output) };
}

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { text: string } => isObject(part) && typeof part.text === 'string' && part.text !== '')
    .map((part) => part.text)
    .join('\n\n');
}

// ---------------------------------------------------------------------------
// scriptedResponses: a list of steps, played in order

export type ResponsesScriptStep = ScriptStepOf<ResponsesRequest, ScriptedResponsesReply>;

export { END_OF_SCRIPT };

/** A model that plays `steps` in order, one per request (fake-http.ts: playSteps); then `"(end of script)"`. One per server. */
export function scriptedResponses(steps: ResponsesScriptStep[]): ScriptedResponsesModel {
  return playSteps(steps, { text: END_OF_SCRIPT });
}
