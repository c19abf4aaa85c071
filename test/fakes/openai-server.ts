// A wire-faithful, scripted OpenAI Chat Completions server (node:http only).
//
// It speaks what the real API speaks — streaming SSE (`data: {chunk}` … `data:
// [DONE]`) and whole `chat.completion` JSON on POST /v1/chat/completions, the
// model list, and OpenAI-shaped error bodies — while a scripted model decides
// each reply. The `openai` client and the GitHub Copilot runtime (through
// `@github/copilot-sdk`'s BYOK provider `{type:"openai", baseUrl}`) accept it.
// It powers the tests and `askrelay demo`, so it must not import vitest.
//
// Paths: the base URL ends in `/v1` (what the `openai` client wants as
// `baseURL` and the Copilot SDK as `baseUrl`); every route also answers
// without the `/v1` prefix, so a base URL given without it works too.
//
// Run it by hand: node --import tsx test/fakes/openai-server.ts [port]
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { chunk, isObject, listen, messageOf, randomId, readRequest, type LoggedRequest } from './fake-http.js';

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
  /** Defaults by status: 429 `requests`, ≥ 500 `server_error`, else `invalid_request_error`. */
  type?: string;
  /** Defaults to `rate_limit_exceeded` for 429, else null. */
  code?: string | null;
  param?: string | null;
  /** Seconds, sent as the `retry-after` header (the `openai` client honours it when retrying). */
  retryAfter?: number;
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
}

/**
 * Decides the reply to one chat completion request. `index` counts the
 * requests this server handed to the model so far (0-based).
 */
export type ScriptedChatModel = (request: ChatRequest, index: number) => ScriptedChatReply | Promise<ScriptedChatReply>;

// ---------------------------------------------------------------------------
// Server

export type { LoggedRequest } from './fake-http.js';

export interface OpenAIServer {
  /**
   * Base URL ending in `/v1`, e.g. `http://127.0.0.1:PORT/v1`: the `openai`
   * client's `baseURL`, OPENAI_BASE_URL, and the Copilot SDK provider's `baseUrl`.
   */
  url: string;
  /** Every request received, in arrival order (logged before it is answered). */
  requests: LoggedRequest[];
  close(): Promise<void>;
}

export interface OpenAIServerOptions {
  model: ScriptedChatModel;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /**
   * Model ids GET /v1/models lists (default `[DEFAULT_MODEL]`); every model
   * named in a chat request so far is listed as well.
   */
  models?: string[];
  /**
   * When set, requests must carry `Authorization: Bearer <apiKey>`; others get
   * OpenAI's 401 `invalid_api_key`. By default any key (or none) is accepted.
   */
  apiKey?: string;
  /** Called for every request as soon as it is logged (the CLI prints them). */
  onRequest?: (request: LoggedRequest) => void;
}

/** Characters per `delta.content` chunk and per `function.arguments` fragment. */
export const TEXT_CHUNK = 12;
export const ARGUMENTS_CHUNK = 20;

/** The model id listed when none is configured or requested. */
export const DEFAULT_MODEL = 'gpt-scripted';

export async function startOpenAIServer(options: OpenAIServerOptions): Promise<OpenAIServer> {
  const requests: LoggedRequest[] = [];
  const models = new Set(options.models ?? [DEFAULT_MODEL]);
  let modelCalls = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, { status: 500, message: `fake server failed: ${messageOf(error)}` });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { entry, url, raw, body, bodyIsJson } = await readRequest(req);
    requests.push(entry);
    options.onRequest?.(entry);

    const route = url.pathname.replace(/^\/v1(?=\/)/, '').replace(/\/+$/, '');
    const known = route === '/chat/completions' || route === '/models' || route.startsWith('/models/');
    if (known && options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      const message = req.headers.authorization
        ? 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.'
        : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
      sendError(res, { status: 401, message, code: req.headers.authorization ? 'invalid_api_key' : null });
      return;
    }

    if (req.method === 'GET' && route === '/models') {
      sendJson(res, 200, { object: 'list', data: [...models].map(modelObject) });
      return;
    }
    if (req.method === 'GET' && route.startsWith('/models/')) {
      sendJson(res, 200, modelObject(decodeURIComponent(route.slice('/models/'.length))));
      return;
    }
    if (req.method === 'POST' && route === '/chat/completions') {
      if (!bodyIsJson || !isObject(body)) {
        sendError(res, {
          status: 400,
          message:
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
        });
        return;
      }
      for (const field of ['model', 'messages'] as const) {
        if (body[field] === undefined) {
          sendError(res, { status: 400, message: `Missing required parameter: '${field}'.`, param: field, code: 'missing_required_parameter' });
          return;
        }
      }
      if (!Array.isArray(body.messages)) {
        sendError(res, { status: 400, message: `Invalid type for 'messages': expected an array, but got ${typeof body.messages} instead.`, param: 'messages', code: 'invalid_type' });
        return;
      }
      const request = body as ChatRequest;
      if (typeof request.model === 'string' && request.model) models.add(request.model);
      let reply: ScriptedChatReply;
      try {
        reply = await options.model(request, modelCalls++);
      } catch (error) {
        sendError(res, { status: 500, message: `scripted model failed: ${messageOf(error)}` });
        return;
      }
      if (res.destroyed) return; // the client left (or close() ran) while the model was thinking
      if (reply.error) {
        sendError(res, reply.error);
        return;
      }
      const completion = buildCompletion(request, reply, Math.max(1, Math.ceil(raw.length / 4)));
      if (request.stream) streamCompletion(res, completion, request.stream_options?.include_usage === true);
      else sendJson(res, 200, completion.whole);
      return;
    }
    sendError(res, { status: 404, message: `Invalid URL (${req.method} ${url.pathname})` });
  }

  const { base, close } = await listen(server, options.port, options.host);
  return { url: `${base}/v1`, requests, close };
}

// ---------------------------------------------------------------------------
// Completions on the wire

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
 * and finally `data: [DONE]`.
 */
function streamCompletion(res: ServerResponse, completion: BuiltCompletion, includeUsage: boolean): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': randomId('req_', 32),
    'openai-version': '2020-10-01',
    'openai-processing-ms': '1',
  });
  const write = (data: Record<string, unknown>) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  const send = (delta: Record<string, unknown>, finishReason: FinishReason | null = null) =>
    write({
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
  if (includeUsage) write({ ...completion.head, choices: [], usage: completion.usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

function modelObject(model: string) {
  return { id: model, object: 'model', created: 1_700_000_000, owned_by: 'askrelay' };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': randomId('req_', 32), 'openai-version': '2020-10-01', ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, error: ScriptedError): void {
  const type = error.type ?? (error.status === 429 ? 'requests' : error.status >= 500 ? 'server_error' : 'invalid_request_error');
  const code = error.code !== undefined ? error.code : error.status === 429 ? 'rate_limit_exceeded' : null;
  const headers: Record<string, string> = { ...(error.headers ?? {}) };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  sendJson(res, error.status, { error: { message: error.message, type, param: error.param ?? null, code } }, headers);
}





// ---------------------------------------------------------------------------
// Helpers for scripted models

export interface ToolMessage {
  tool_call_id: string;
  /** Normalized to a string (text parts joined with blank lines). */
  content: string;
}

/**
 * What the helpers below read from a request. Both `ChatRequest` and the
 * `openai` client's `ChatCompletionCreateParams` fit it.
 */
export interface ChatRequestLike {
  messages?: ReadonlyArray<{ role: string; content?: unknown; tool_call_id?: string }>;
  tools?: ReadonlyArray<{ type?: string; function?: { name?: string; parameters?: unknown } }> | null;
}

/**
 * The `role:"tool"` messages after the last assistant message (the results of
 * its tool calls), in order; `[]` when none follow it.
 */
export function lastToolMessages(request: ChatRequestLike): ToolMessage[] {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'assistant') {
      start = i + 1;
      break;
    }
  }
  return messages
    .slice(start)
    .filter((message) => message?.role === 'tool')
    .map((message) => ({ tool_call_id: String(message.tool_call_id ?? ''), content: contentText(message.content) }));
}

/** What the model was sent back for the tool call with this id (its `tool` message), in any logged request. */
export function toolResultFor(requests: readonly LoggedRequest[], toolCallId: string): string | undefined {
  for (const request of requests) {
    const messages = (request.body as ChatRequestLike | undefined)?.messages ?? [];
    const message = messages.find((m) => m?.role === 'tool' && m.tool_call_id === toolCallId);
    if (message) return contentText(message.content);
  }
  return undefined;
}

/** How many tool results the model has been sent since the user's last message (the turn's tool calls so far). */
export function toolResultsThisTurn(request: ChatRequestLike): number {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  let last = -1;
  messages.forEach((m, i) => m?.role === 'user' && (last = i));
  return messages.slice(last + 1).filter((m) => m?.role === 'tool').length;
}

/** The last tool message (see `lastToolMessages`), or undefined. */
export function lastToolMessage(request: ChatRequestLike): ToolMessage | undefined {
  return lastToolMessages(request).at(-1);
}

/**
 * The text of the last `role:"user"` message (text parts joined with blank
 * lines), without the `<current_datetime>…</current_datetime>` block the
 * Copilot runtime puts before every prompt. `''` when there is none.
 */
export function lastUserText(request: ChatRequestLike): string {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') return stripCopilotContext(contentText(messages[i]!.content));
  }
  return '';
}

/** Removes the leading `<current_datetime>…</current_datetime>` block (and the blank line after it). */
export function stripCopilotContext(text: string): string {
  return text.replace(/^<current_datetime>[^<]*<\/current_datetime>\s*/, '');
}

/** The names of the function tools offered, in order. */
export function toolNames(request: ChatRequestLike): string[] {
  const tools = Array.isArray(request.tools) ? request.tools : [];
  return tools.map((tool) => String(tool?.function?.name ?? tool?.type ?? ''));
}

/** The JSON schema (`function.parameters`) of the tool called `name`, or undefined. */
export function toolSchema(request: ChatRequestLike, name: string): unknown {
  const tools = Array.isArray(request.tools) ? request.tools : [];
  return tools.find((tool) => tool?.function?.name === name)?.function?.parameters;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: string; text: string } => isObject(part) && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .filter((text) => text !== '')
    .join('\n\n');
}

// ---------------------------------------------------------------------------
// scriptedChat: a list of steps, played in order

export type ChatScriptStep =
  | ScriptedChatReply
  | string
  | ((request: ChatRequest, index: number) => ScriptedChatReply | string | Promise<ScriptedChatReply | string>);

/** What a script answers once its steps are used up. */
export const END_OF_SCRIPT = '(end of script)';

/**
 * A model that plays `steps` in order, one per request: a reply, a string (a
 * text reply), or a function of the request returning either. Once the steps
 * are used up it answers `"(end of script)"` with `stop`. Each model keeps its
 * own position, so create one per server.
 */
export function scriptedChat(steps: ChatScriptStep[]): ScriptedChatModel {
  let next = 0;
  return async (request, index) => {
    const step = steps[next++];
    if (step === undefined) return { text: END_OF_SCRIPT, finishReason: 'stop' };
    const reply = typeof step === 'function' ? await step(request, index) : step;
    return typeof reply === 'string' ? { text: reply } : reply;
  };
}

// ---------------------------------------------------------------------------
// The demo model

/** The `ask_user` arguments the demo model sends (Copilot's built-in ask_user and askrelay's take this shape). */
export const DEMO_ASK = { question: 'Which database?', choices: ['PostgreSQL', 'SQLite'] };

/**
 * Calls `ask_user` with `DEMO_ASK`; once the tool result comes back it replies
 * `Thanks — I will go with: <tool message content>` and stops.
 */
export const demoChatModel: ScriptedChatModel = (request) => {
  const result = lastToolMessage(request);
  if (result) return { text: `Thanks — I will go with: ${result.content}`, finishReason: 'stop' };
  return { toolCalls: [{ name: 'ask_user', arguments: DEMO_ASK }] };
};

// ---------------------------------------------------------------------------
// CLI: node --import tsx test/fakes/openai-server.ts [port]

function runDirectly(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(script).href;
  } catch {
    return false;
  }
}

if (runDirectly()) {
  const port = Number(process.argv[2] ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`usage: node --import tsx test/fakes/openai-server.ts [port]\n`);
    process.exit(2);
  }
  const server = await startOpenAIServer({
    model: demoChatModel,
    port,
    onRequest: (r) => process.stderr.write(`${r.method} ${r.path}${r.query}\n`),
  });
  process.stdout.write(`${server.url}\n`);
  process.stderr.write(`Scripted OpenAI Chat Completions API at ${server.url} (OPENAI_BASE_URL=${server.url}); Ctrl-C stops it.\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
