// A wire-faithful, scripted Anthropic Messages API server (node:http only).
//
// It speaks what the real API speaks — streaming SSE and whole-message JSON on
// POST /v1/messages (with or without Claude Code's `?beta=true`), count_tokens,
// HEAD, and Anthropic-shaped error bodies — while a scripted model decides each
// reply. Both `@anthropic-ai/sdk` and Claude Code (via
// `@anthropic-ai/claude-agent-sdk`) accept it. It powers the tests and
// `askrelay demo`, so it must not import vitest.
//
// Run it by hand: node --import tsx test/fakes/anthropic-server.ts [port]
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { demoModel } from './anthropic-script.js';
import { chunk, isObject, listen, messageOf, randomId, readRequest, serveWhenRunDirectly, type LoggedRequest } from './fake-http.js';

// The helpers scripted models are made of (askingModel, lastToolResult, …, demoModel).
export * from './anthropic-script.js';

// ---------------------------------------------------------------------------
// Request shapes (loose on purpose: Claude Code sends fields the SDK types lack)

export interface ContentBlock {
  type: string;
  [key: string]: unknown;
}

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

export interface ToolDefinition {
  name?: string;
  type?: string | null;
  description?: string;
  input_schema?: unknown;
  [key: string]: unknown;
}

/** The JSON body of POST /v1/messages, as the client sent it. */
export interface MessagesRequest {
  model: string;
  messages: MessageParam[];
  max_tokens?: number;
  system?: string | ContentBlock[];
  tools?: ToolDefinition[];
  stream?: boolean;
  output_config?: { format?: { type?: string; [key: string]: unknown }; [key: string]: unknown };
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------
// The scripted model

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens';

export interface ScriptedToolUse {
  name: string;
  input: unknown;
  /** Defaults to a fresh `toolu_…` id. */
  id?: string;
  /**
   * Stream exactly this text as the `input_json_delta` fragments instead of
   * `JSON.stringify(input)` — e.g. invalid JSON, to exercise a client's handling
   * of a broken tool input. Non-streaming replies send `JSON.parse(rawJson)` when
   * it parses and `input` otherwise (a whole message can only carry an object).
   */
  rawJson?: string;
}

export interface ScriptedReply {
  /** A text block; it comes first when the reply also has a tool use. */
  text?: string;
  toolUse?: ScriptedToolUse;
  /** Defaults to `tool_use` when `toolUse` is set, else `end_turn`. */
  stopReason?: StopReason;
  /**
   * Answer with an HTTP error instead of a message, shaped like Anthropic's:
   * `{type:"error", error:{type, message}, request_id}` (e.g. 529 `overloaded_error`).
   */
  error?: ScriptedError;
  /** `ping` events sent right after `message_start`; the API sends one (the default). */
  pings?: number;
  /**
   * Stream the first `afterEvents` events (pings included), then an `event: error` with
   * `{type:"error", error:{type, message}}` and end the stream, as the API does when it
   * fails in the middle of a reply (e.g. `overloaded_error`).
   */
  streamError?: { afterEvents: number; type: string; message: string };
  /** Stream the first `cutAfterEvents` events (pings included), then destroy the connection. */
  cutAfterEvents?: number;
}

export interface ScriptedError {
  status: number;
  type: string;
  message: string;
  /** Whole seconds, sent as `retry-after` (the API sends it with 429s). */
  retryAfter?: number;
  /** More response headers, e.g. `anthropic-ratelimit-requests-remaining`. */
  headers?: Record<string, string>;
}

/** Anthropic's documented errors, as scripted replies (the messages are the API's own). */
export const API_ERRORS = {
  rateLimit: (retryAfter?: number): ScriptedReply => ({
    error: { status: 429, type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.', ...(retryAfter !== undefined ? { retryAfter } : {}) },
  }),
  internal: (): ScriptedReply => ({ error: { status: 500, type: 'api_error', message: 'Internal server error' } }),
  overloaded: (): ScriptedReply => ({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }),
};

/** The `anthropic-version` values the fake accepts: the API's published ones and the one @anthropic-ai/sdk 1.x sends. */
export const ANTHROPIC_VERSIONS: readonly string[] = ['2023-01-01', '2023-06-01', '2026-10-21'];

/**
 * Decides the reply to one model request. `index` counts the model requests
 * this server handed to the model so far (0-based); title requests and
 * count_tokens never reach the model.
 */
export type ScriptedModel = (request: MessagesRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

// ---------------------------------------------------------------------------
// Server

export type { LoggedRequest } from './fake-http.js';

export interface AnthropicServer {
  /** Base URL for ANTHROPIC_BASE_URL / `baseURL` (no trailing `/v1`). */
  url: string;
  /** Every request received, in arrival order (logged before it is answered). */
  requests: LoggedRequest[];
  close(): Promise<void>;
}

export interface AnthropicServerOptions {
  model: ScriptedModel;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** Called for every request as soon as it is logged (the CLI prints them). */
  onRequest?: (request: LoggedRequest) => void;
  /**
   * The only key accepted; unset, any non-empty key is. The key comes as `x-api-key` (what
   * the API documents, and what Claude Code sends) or, with `bearer` (the default: what
   * @anthropic-ai/sdk 1.x sends), as `Authorization: Bearer <key>`.
   */
  apiKey?: string;
  bearer?: boolean;
}

/** Characters per `text_delta` and per `input_json_delta` fragment. */
export const TEXT_CHUNK = 12;
export const JSON_CHUNK = 20;

/** The text answered to Claude Code's session-title request. */
export const TITLE_REPLY = JSON.stringify({ title: 'Scripted session' });

export async function startAnthropicServer(options: AnthropicServerOptions): Promise<AnthropicServer> {
  const requests: LoggedRequest[] = [];
  let modelCalls = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'api_error', `fake server failed: ${messageOf(error)}`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { entry, url, raw, body, bodyIsJson } = await readRequest(req);
    requests.push(entry);
    options.onRequest?.(entry);

    if (req.method === 'HEAD') {
      res.writeHead(200, { 'request-id': randomId('req_', 22) });
      res.end();
      return;
    }
    const refused = checkHeaders(req, options);
    if (refused) {
      sendError(res, refused.status, refused.type, refused.message);
      return;
    }
    const isPost = req.method === 'POST';
    if (isPost && (url.pathname === '/v1/messages' || url.pathname === '/v1/messages/count_tokens')) {
      if (!bodyIsJson || !isObject(body)) {
        sendError(res, 400, 'invalid_request_error', 'The request body is not valid JSON.');
        return;
      }
      if (!Array.isArray(body.messages)) {
        sendError(res, 400, 'invalid_request_error', 'messages: Field required');
        return;
      }
      const request = body as MessagesRequest;
      const inputTokens = Math.max(1, Math.ceil(raw.length / 4));
      if (url.pathname === '/v1/messages/count_tokens') {
        sendJson(res, 200, { input_tokens: inputTokens });
        return;
      }
      let reply: ScriptedReply;
      if (request.output_config?.format?.type === 'json_schema') {
        reply = { text: TITLE_REPLY };
      } else {
        try {
          reply = await options.model(request, modelCalls++);
        } catch (error) {
          sendError(res, 500, 'api_error', `scripted model failed: ${messageOf(error)}`);
          return;
        }
      }
      if (res.destroyed) return; // the client left (or close() ran) while the model was thinking
      if (reply.error) {
        const headers: Record<string, string> = { ...(reply.error.retryAfter !== undefined ? { 'retry-after': String(reply.error.retryAfter) } : {}), ...reply.error.headers };
        sendError(res, reply.error.status, reply.error.type, reply.error.message, headers);
        return;
      }
      const message = buildMessage(request, reply, inputTokens);
      if (request.stream) streamMessage(res, message, reply);
      else sendJson(res, 200, message.whole);
      return;
    }
    sendError(res, 404, 'not_found_error', `Not found: ${req.method} ${url.pathname}`);
  }

  const { base, close } = await listen(server, options.port, options.host);
  return { url: `${base}`, requests, close };
}

// ---------------------------------------------------------------------------
// Messages on the wire

interface BuiltMessage {
  /** The complete message, as a non-streaming response carries it. */
  whole: Record<string, unknown>;
  /** Content blocks with the fragments to stream for each. */
  blocks: Array<{ start: Record<string, unknown>; deltas: Array<Record<string, unknown>> }>;
  stopReason: StopReason;
  outputTokens: number;
  inputTokens: number;
  id: string;
  model: string;
}

function buildMessage(request: MessagesRequest, reply: ScriptedReply, inputTokens: number): BuiltMessage {
  const content: Array<Record<string, unknown>> = [];
  const blocks: BuiltMessage['blocks'] = [];
  let produced = 0;
  if (reply.text !== undefined) {
    content.push({ type: 'text', text: reply.text });
    blocks.push({
      start: { type: 'text', text: '' },
      deltas: chunk(reply.text, TEXT_CHUNK).map((text) => ({ type: 'text_delta', text })),
    });
    produced += reply.text.length;
  }
  if (reply.toolUse) {
    const { name, input, rawJson } = reply.toolUse;
    const toolId = reply.toolUse.id ?? randomId('toolu_01', 22);
    const json = rawJson ?? JSON.stringify(input ?? {});
    content.push({ type: 'tool_use', id: toolId, name, input: wholeInput(input, rawJson) });
    blocks.push({
      start: { type: 'tool_use', id: toolId, name, input: {} },
      deltas: chunk(json, JSON_CHUNK).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    });
    produced += json.length;
  }
  const stopReason = reply.stopReason ?? (reply.toolUse ? 'tool_use' : 'end_turn');
  const outputTokens = Math.max(1, Math.ceil(produced / 4));
  const messageId = randomId('msg_01', 22);
  const model = typeof request.model === 'string' && request.model ? request.model : 'claude-scripted';
  return {
    whole: {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: usage(inputTokens, outputTokens),
    },
    blocks,
    stopReason,
    outputTokens,
    inputTokens,
    id: messageId,
    model,
  };
}

type Event = Record<string, unknown> & { type: string };

function streamMessage(res: ServerResponse, message: BuiltMessage, reply: ScriptedReply): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': randomId('req_', 22),
  });
  const frame = (data: Event) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  let events = messageEvents(message, reply.pings ?? 1);
  if (reply.streamError) {
    const { afterEvents, type, message: text } = reply.streamError;
    events = [...events.slice(0, afterEvents), { type: 'error', error: { type, message: text } }];
  }
  if (reply.cutAfterEvents === undefined) {
    for (const event of events) res.write(frame(event));
    res.end();
    return;
  }
  // Destroyed once what was written reached the socket: the client reads every event sent,
  // then the connection drops without the end of the chunked body.
  res.write(events.slice(0, reply.cutAfterEvents).map(frame).join(''), () => res.destroy());
}

/** message_start, the pings, each content block's start, deltas and stop, message_delta, message_stop. */
function messageEvents(message: BuiltMessage, pings: number): Event[] {
  const events: Event[] = [];
  const send = (data: Event) => events.push(data);
  send({
    type: 'message_start',
    message: {
      id: message.id,
      type: 'message',
      role: 'assistant',
      model: message.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(message.inputTokens, 1),
    },
  });
  for (let i = 0; i < pings; i++) send({ type: 'ping' });
  message.blocks.forEach((block, index) => {
    send({ type: 'content_block_start', index, content_block: block.start });
    for (const delta of block.deltas) send({ type: 'content_block_delta', index, delta });
    send({ type: 'content_block_stop', index });
  });
  send({
    type: 'message_delta',
    delta: { stop_reason: message.stopReason, stop_sequence: null },
    usage: { output_tokens: message.outputTokens },
  });
  send({ type: 'message_stop' });
  return events;
}

function usage(inputTokens: number, outputTokens: number) {
  return { input_tokens: inputTokens, output_tokens: outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

function wholeInput(input: unknown, rawJson: string | undefined): unknown {
  if (rawJson !== undefined) {
    try {
      return JSON.parse(rawJson);
    } catch {
      // a whole message can only carry an object: fall back to `input`
    }
  }
  return input ?? {};
}

/**
 * The API's answers to a request without a key (401), with a key other than `apiKey`
 * (401), or without a known `anthropic-version` (400); undefined when the headers pass.
 */
function checkHeaders(req: IncomingMessage, options: AnthropicServerOptions): { status: number; type: string; message: string } | undefined {
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const bearer = options.bearer !== false ? /^Bearer (.+)$/.exec(header('authorization') ?? '')?.[1] : undefined;
  const key = header('x-api-key') || bearer;
  if (!key) return { status: 401, type: 'authentication_error', message: 'x-api-key header is required' };
  if (options.apiKey !== undefined && key !== options.apiKey) return { status: 401, type: 'authentication_error', message: 'invalid x-api-key' };
  const version = header('anthropic-version');
  if (!version) return { status: 400, type: 'invalid_request_error', message: 'anthropic-version: header is required' };
  if (!ANTHROPIC_VERSIONS.includes(version)) return { status: 400, type: 'invalid_request_error', message: `anthropic-version: "${version}" is not a valid version` };
  return undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, requestId = randomId('req_', 22)): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  const requestId = randomId('req_', 22);
  sendJson(res, status, { type: 'error', error: { type, message }, request_id: requestId }, headers, requestId);
}


// ---------------------------------------------------------------------------
// CLI: node --import tsx test/fakes/anthropic-server.ts [port]

await serveWhenRunDirectly(import.meta.url, { file: 'anthropic-server.ts', title: 'Scripted Anthropic Messages API', variable: 'ANTHROPIC_BASE_URL' }, (port, onRequest) => startAnthropicServer({ model: demoModel, port, onRequest }));
