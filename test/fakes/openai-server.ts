// A wire-faithful, scripted OpenAI Chat Completions server (node:http only); with the
// `responses` option it also answers the Responses API (openai-responses.ts, what Codex talks).
//
// It speaks what the real API speaks — streaming SSE (`data: {chunk}` … `data:
// [DONE]`) and whole `chat.completion` JSON on POST /v1/chat/completions, the
// model list, OpenAI-shaped error bodies (429 with `retry-after`, 5xx, 401 for a
// wrong key), an `error` event inside a stream and a stream cut mid-answer
// (openai-wire.ts) — while a scripted model decides each reply. The `openai` client and the GitHub Copilot runtime (through
// `@github/copilot-sdk`'s BYOK provider `{type:"openai", baseUrl}`) accept it.
// It powers the tests and `askrelay demo`, so it must not import vitest.
//
// Paths: the base URL ends in `/v1` (what the `openai` client wants as
// `baseURL` and the Copilot SDK as `baseUrl`); every route also answers
// without the `/v1` prefix, so a base URL given without it works too.
//
// Run it by hand: node --import tsx test/fakes/openai-server.ts [port]
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { demoReply } from './demo-reply.js';
import { isObject, listen, messageOf, readRequest, serveWhenRunDirectly, type LoggedRequest } from './fake-http.js';
import { answerResponses, type ScriptedResponsesModel } from './openai-responses.js';
import { DEFAULT_MODEL, modelObject, sendError, sendJson, writeCompletion, type ChatRequest, type ScriptedChatModel, type ScriptedChatReply } from './openai-wire.js';

export {
  ARGUMENTS_CHUNK,
  DEFAULT_MODEL,
  TEXT_CHUNK,
  type ChatContentPart,
  type ChatMessage,
  type ChatRequest,
  type ChatTool,
  type ChatToolCall,
  type FinishReason,
  type ScriptedChatModel,
  type ScriptedChatReply,
  type ScriptedError,
  type ScriptedStreamError,
  type ScriptedToolCall,
} from './openai-wire.js';

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
  /** Answers POST /v1/chat/completions; without it that path is a 404. */
  model?: ScriptedChatModel;
  /** Answers POST /v1/responses (the Responses API, openai-responses.ts); without it that path is a 404. */
  responses?: ScriptedResponsesModel;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /**
   * Model ids GET /v1/models lists (default `[DEFAULT_MODEL]`); every model
   * named in a chat or Responses request so far is listed as well.
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

const NOT_JSON =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)";

export async function startOpenAIServer(options: OpenAIServerOptions): Promise<OpenAIServer> {
  const requests: LoggedRequest[] = [];
  const models = new Set(options.models ?? [DEFAULT_MODEL]);
  let [modelCalls, responsesCalls] = [0, 0];

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
    const known = route === '/chat/completions' || route === '/responses' || route === '/models' || route.startsWith('/models/');
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
    const chat = req.method === 'POST' && route === '/chat/completions' ? options.model : undefined;
    const responses = req.method === 'POST' && route === '/responses' ? options.responses : undefined;
    if ((chat || responses) && (!bodyIsJson || !isObject(body))) {
      sendError(res, { status: 400, message: NOT_JSON });
      return;
    }
    if (responses && isObject(body)) {
      if (typeof body.model === 'string' && body.model) models.add(body.model);
      await answerResponses(res, body, raw, (request) => responses(request, responsesCalls++));
      return;
    }
    if (chat && isObject(body)) {
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
        reply = await chat(request, modelCalls++);
      } catch (error) {
        sendError(res, { status: 500, message: `scripted model failed: ${messageOf(error)}` });
        return;
      }
      if (res.destroyed) return; // the client left (or close() ran) while the model was thinking
      if (reply.error) {
        sendError(res, reply.error);
        return;
      }
      writeCompletion(res, request, reply, Math.max(1, Math.ceil(raw.length / 4)));
      return;
    }
    sendError(res, { status: 404, message: `Invalid URL (${req.method} ${url.pathname})` });
  }

  const { base, close } = await listen(server, options.port, options.host);
  return { url: `${base}/v1`, requests, close };
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
 * with only the choice it read there (demo-reply.ts) and stops.
 */
export const demoChatModel: ScriptedChatModel = (request) => {
  const result = lastToolMessage(request);
  if (result) return { text: demoReply(result.content), finishReason: 'stop' };
  return { toolCalls: [{ name: 'ask_user', arguments: DEMO_ASK }] };
};

// ---------------------------------------------------------------------------
// CLI: node --import tsx test/fakes/openai-server.ts [port]

await serveWhenRunDirectly(import.meta.url, { file: 'openai-server.ts', title: 'Scripted OpenAI Chat Completions API', variable: 'OPENAI_BASE_URL' }, (port, onRequest) => startOpenAIServer({ model: demoChatModel, port, onRequest }));
