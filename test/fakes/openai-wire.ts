// The OpenAI Chat Completions wire format the scripted server speaks: request and reply
// shapes, whole and streamed completions, OpenAI's error bodies, and the ways a real
// endpoint fails mid-answer (an `error` event inside the stream, a connection cut). The
// server (openai-server.ts) only routes; what goes on the wire is decided here. No vitest.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { chunk, randomId } from './fake-http.js';

// ---------------------------------------------------------------------------
// Request shapes (loose on purpose: clients send fields the SDK types lack)

export interface ChatContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface ChatToolCall {
  id: string;
  type: 'function' | string;
  function: { name: string; arguments: string };
  [key: string]: unknown;
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | string;
  content?: string | ChatContentPart[] | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

export interface ChatTool {
  type: 'function' | string;
  function?: { name: string; description?: string; parameters?: unknown; strict?: boolean | null; [key: string]: unknown };
  [key: string]: unknown;
}

/** The JSON body of POST /v1/chat/completions, as the client sent it. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; [key: string]: unknown } | null;
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------
// The scripted model

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter';

export interface ScriptedToolCall {
  name: string;
  /**
   * The call's arguments: any value is sent as `JSON.stringify(arguments)`; a
   * string is sent verbatim (raw JSON text, e.g. invalid JSON to exercise a
   * client's handling of broken arguments). On the wire `function.arguments`
   * is always a string, so raw text survives streaming and non-streaming alike.
   */
  arguments: unknown;
  /** Defaults to a fresh `call_…` id. */
  id?: string;
}

export interface ScriptedError {
  /** The HTTP status, e.g. 429, 500, 503. */
  status: number;
  message: string;
  /**
   * Defaults by status, as OpenAI's error-code guide lists them: 429 `requests`, 503
   * `service_unavailable_error`, other ≥ 500 `server_error`, else `invalid_request_error`.
   */
  type?: string;
  /** Defaults to `rate_limit_exceeded` for 429, `server_is_overloaded` for 503, else null. */
  code?: string | null;
  param?: string | null;
  /** Seconds, sent as the `retry-after` header (the `openai` client honours it when retrying). */
  retryAfter?: number;
  /** Milliseconds, sent as `retry-after-ms` (OpenAI's finer header; the `openai` client prefers it). */
  retryAfterMs?: number;
  /** Extra response headers, e.g. `x-ratelimit-remaining-requests`. */
  headers?: Record<string, string>;
}

export interface ScriptedChatReply {
  /** Assistant text; streamed before any tool calls. */
  text?: string;
  /** Tool calls, streamed in order (`index` 0, 1, …). */
  toolCalls?: ScriptedToolCall[];
  /** Defaults to `tool_calls` when `toolCalls` is non-empty, else `stop`. */
  finishReason?: FinishReason;
  /** Answer with this HTTP error (OpenAI's `{error:{message, type, param, code}}`) instead of a completion. */
  error?: ScriptedError;
  /**
   * A request that fails mid-answer: after `afterChunks` chunks of the completion the
   * stream carries `data: {"error": {message, type, param, code}}` and closes, without
   * `[DONE]`, as OpenAI's API does. A request without `stream` gets it as a 500 body.
   */
  streamError?: ScriptedStreamError;
  /**
   * The connection breaks mid-answer: the response starts (200, `text/event-stream`),
   * this many chunks arrive, then the socket is destroyed (no finish chunk, no `[DONE]`).
   * A request without `stream` has its socket destroyed before any response.
   */
  cutAfterChunks?: number;
}

export interface ScriptedStreamError {
  /** `data:` chunks of the completion sent before the error (default 0). */
  afterChunks?: number;
  message: string;
  /** Defaults to `server_error`. */
  type?: string;
  code?: string | null;
  param?: string | null;
}

/**
 * Decides the reply to one chat completion request. `index` counts the
 * requests this server handed to the model so far (0-based).
 */
export type ScriptedChatModel = (request: ChatRequest, index: number) => ScriptedChatReply | Promise<ScriptedChatReply>;

/** Characters per `delta.content` chunk and per `function.arguments` fragment. */
export const TEXT_CHUNK = 12;
export const ARGUMENTS_CHUNK = 20;

/** The model id listed when none is configured or requested. */
export const DEFAULT_MODEL = 'gpt-scripted';

// ---------------------------------------------------------------------------
// Completions on the wire

/** Writes the scripted reply to a chat completion request: streamed, whole, or failing as scripted. */
export function writeCompletion(res: ServerResponse, request: ChatRequest, reply: ScriptedChatReply, promptTokens: number): void {
  const completion = buildCompletion(request, reply, promptTokens);
  if (request.stream) {
    streamCompletion(res, completion, request.stream_options?.include_usage === true, reply);
    return;
  }
  if (reply.cutAfterChunks !== undefined) res.destroy();
  else if (reply.streamError) sendError(res, { status: 500, type: 'server_error', ...reply.streamError });
  else sendJson(res, 200, completion.whole);
}

interface BuiltCompletion {
  /** The complete `chat.completion`, as a non-streaming response carries it. */
  whole: Record<string, unknown>;
  text?: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: FinishReason;
  usage: Record<string, unknown>;
  /** Fields every chunk shares: id, object, created, model, service_tier, system_fingerprint. */
  head: Record<string, unknown>;
}

function buildCompletion(request: ChatRequest, reply: ScriptedChatReply, promptTokens: number): BuiltCompletion {
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? randomId('call_', 24),
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  const produced = (reply.text?.length ?? 0) + toolCalls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0);
  const completionTokens = Math.max(1, Math.ceil(produced / 4));
  const finishReason = reply.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop');
  const model = typeof request.model === 'string' && request.model ? request.model : DEFAULT_MODEL;
  const head = {
    id: randomId('chatcmpl-', 29),
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    service_tier: 'default',
    system_fingerprint: `fp_${randomBytes(5).toString('hex')}`,
  };
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: reply.text ?? (toolCalls.length ? null : ''),
    refusal: null,
    annotations: [],
  };
  if (toolCalls.length) {
    message.tool_calls = toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  return {
    whole: {
      ...head,
      object: 'chat.completion',
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      usage,
    },
    text: reply.text,
    toolCalls,
    finishReason,
    usage,
    head,
  };
}

/**
 * Streams like the real API: a first chunk with `role` (and `content:""` when
 * there is text, or `content:null` plus the first tool call's start when there
 * is none), text as `delta.content` chunks, each tool call as a start
 * `{index, id, type:"function", function:{name, arguments:""}}` followed by
 * `function.arguments` fragments, a last choice chunk with an empty delta and
 * `finish_reason`, then — with `stream_options.include_usage` — a chunk with
 * `choices: []` and `usage` (every earlier chunk then carries `usage: null`),
 * and finally `data: [DONE]`. A scripted `streamError` replaces the rest of the
 * stream from its chunk on with one `data: {"error": {…}}`; `cutAfterChunks`
 * destroys the socket there instead.
 */
/** The headers OpenAI's API opens an event stream with (Chat Completions and Responses alike). */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': randomId('req_', 32),
    'openai-version': '2020-10-01',
    'openai-processing-ms': '1',
  });
}

function streamCompletion(res: ServerResponse, completion: BuiltCompletion, includeUsage: boolean, reply: ScriptedChatReply): void {
  startEventStream(res);
  const chunks: Record<string, unknown>[] = [];
  const send = (delta: Record<string, unknown>, finishReason: FinishReason | null = null) =>
    chunks.push({
      ...completion.head,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const starts = completion.toolCalls.map((call, index) => ({
    index,
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: '' },
  }));

  if (completion.text !== undefined || !completion.toolCalls.length) {
    send({ role: 'assistant', content: '', refusal: null });
    if (completion.text) for (const content of chunk(completion.text, TEXT_CHUNK)) send({ content });
  }
  completion.toolCalls.forEach((call, index) => {
    if (index === 0 && completion.text === undefined) send({ role: 'assistant', content: null, tool_calls: [starts[0]], refusal: null });
    else send({ tool_calls: [starts[index]] });
    if (call.arguments) {
      for (const fragment of chunk(call.arguments, ARGUMENTS_CHUNK)) send({ tool_calls: [{ index, function: { arguments: fragment } }] });
    }
  });
  send({}, completion.finishReason);
  if (includeUsage) chunks.push({ ...completion.head, choices: [], usage: completion.usage });

  const write = (data: unknown, done?: () => void) => res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`, done);
  const { streamError: failure, cutAfterChunks: cut } = reply;
  const failAt = failure ? Math.max(0, failure.afterChunks ?? 0) : Infinity;
  const cutAt = cut === undefined ? Infinity : Math.max(0, cut);
  for (const [i, data] of chunks.entries()) {
    if (i === failAt || i === cutAt) break;
    write(data);
  }
  if (cutAt <= failAt && cutAt !== Infinity) {
    // Destroyed once what came before is flushed: the client reads exactly `cut` chunks, then a
    // broken connection (an empty write also sends the headers when no chunk came before).
    res.write('', () => res.destroy());
    return;
  }
  if (failure) {
    write({ error: errorBody({ status: 500, type: 'server_error', ...failure }) });
    res.end();
    return;
  }
  write('[DONE]');
  res.end();
}

export function modelObject(model: string) {
  return { id: model, object: 'model', created: 1_700_000_000, owned_by: 'askrelay' };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': randomId('req_', 32), 'openai-version': '2020-10-01', ...headers });
  res.end(JSON.stringify(body));
}

export function sendError(res: ServerResponse, error: ScriptedError): void {
  const headers: Record<string, string> = { ...(error.headers ?? {}) };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  if (error.retryAfterMs !== undefined) headers['retry-after-ms'] = String(error.retryAfterMs);
  sendJson(res, error.status, { error: errorBody(error) }, headers);
}

/** OpenAI's error object `{message, type, param, code}`, with the defaults its API uses by status. */
export function errorBody(error: ScriptedError): { message: string; type: string; param: string | null; code: string | null } {
  const { status } = error;
  const type = error.type ?? (status === 429 ? 'requests' : status === 503 ? 'service_unavailable_error' : status >= 500 ? 'server_error' : 'invalid_request_error');
  const code = error.code !== undefined ? error.code : status === 429 ? 'rate_limit_exceeded' : status === 503 ? 'server_is_overloaded' : null;
  return { message: error.message, type, param: error.param ?? null, code };
}
