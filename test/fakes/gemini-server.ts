// A wire-faithful, scripted Gemini API (generativelanguage v1beta) server (node:http only).
//
// It speaks what the real API speaks — POST /v1beta/models/{model}:generateContent (one JSON
// GenerateContentResponse), :streamGenerateContent?alt=sse (`data: {chunk}` events; without
// alt=sse a streamed JSON array), :countTokens, GET /v1beta/models[/{model}], and Google's
// error bodies `{error:{code, message, status, details?}}` (gemini-wire.ts) — while a scripted
// model decides each reply. Gemini CLI (GOOGLE_GEMINI_BASE_URL=<url>, plain http is fine)
// and the @google/genai client bundled in it accept it (gemini-server-cli.test.ts records
// what the CLI sends). It powers the tests and `askrelay demo`, so it must not import vitest.
//
// Run it by hand: node --import tsx test/fakes/gemini-server.ts [port]
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isObject, listen, messageOf, readRequest, serveWhenRunDirectly, type LoggedRequest } from './fake-http.js';
import { lastFunctionResponse } from './gemini-script.js';
import {
  countTokens,
  DEFAULT_MODEL,
  modelResource,
  sendError,
  sendJson,
  sendNotFoundPage,
  writeResponse,
  type GenerateContentRequest,
  type ScriptedError,
  type ScriptedGeminiModel,
  type ScriptedGeminiReply,
} from './gemini-wire.js';

export * from './gemini-script.js';
export * from './gemini-wire.js';
export type { LoggedRequest } from './fake-http.js';

// ---------------------------------------------------------------------------
// Server

export interface GeminiServer {
  /** Base URL without the API version, e.g. `http://127.0.0.1:PORT`: GOOGLE_GEMINI_BASE_URL, or @google/genai's `httpOptions.baseUrl`. */
  url: string;
  /** Every request received, in arrival order (logged before it is answered). */
  requests: LoggedRequest[];
  close(): Promise<void>;
}

export interface GeminiServerOptions {
  model: ScriptedGeminiModel;
  /** The only key accepted; unset, any non-empty key is. A request without a key is refused either way (403, as the API does). */
  apiKey?: string;
  /** Model ids GET /v1beta/models lists (default `[DEFAULT_MODEL]`); every model named in a request so far is listed too. */
  models?: string[];
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** Called for every request as soon as it is logged (the CLI prints them). */
  onRequest?: (request: LoggedRequest) => void;
}

// /v1beta/models/gemini-2.5-flash:streamGenerateContent → version, model, method. GOOGLE_GENAI_API_VERSION
// may select v1 or v1alpha, so any of them is answered.
const MODEL_ROUTE = /^\/(v1beta|v1|v1alpha)\/models\/([^/:]+)(?::([A-Za-z]+))?$/;

export async function startGeminiServer(options: GeminiServerOptions): Promise<GeminiServer> {
  const requests: LoggedRequest[] = [];
  const models = new Set(options.models ?? [DEFAULT_MODEL]);
  let modelCalls = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, { code: 500, status: 'INTERNAL', message: `fake server failed: ${messageOf(error)}` });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { entry, url, raw, body, bodyIsJson } = await readRequest(req);
    requests.push(entry);
    options.onRequest?.(entry);

    const isList = /^\/(v1beta|v1|v1alpha)\/models\/?$/.test(url.pathname);
    const match = MODEL_ROUTE.exec(url.pathname);
    if (!isList && !match) {
      sendNotFoundPage(res, req.method ?? '', url.pathname);
      return;
    }
    const refused = checkKey(req, url, options.apiKey);
    if (refused) {
      sendError(res, refused);
      return;
    }
    if (req.method === 'GET' && isList) {
      sendJson(res, 200, { models: [...models].map(modelResource) });
      return;
    }
    const [, , rawModel = '', method] = match ?? [];
    const model = decodeURIComponent(rawModel);
    if (req.method === 'GET' && match && !method) {
      sendJson(res, 200, modelResource(model));
      return;
    }
    const generate = method === 'generateContent' || method === 'streamGenerateContent';
    if (req.method !== 'POST' || !(generate || method === 'countTokens')) {
      sendError(res, { code: 404, status: 'NOT_FOUND', message: `models/${model} is not found for API version ${match?.[1]}, or is not supported for ${method ?? req.method}. Call ListModels to see the list of available models and their supported methods.` });
      return;
    }
    if (!bodyIsJson || !isObject(body)) {
      const snippet = raw.slice(0, 40);
      const message = `Invalid JSON payload received. Unexpected token.\n${snippet}\n^`;
      sendError(res, { code: 400, status: 'INVALID_ARGUMENT', message, details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: message }] }] });
      return;
    }
    models.add(model);
    if (method === 'countTokens') {
      // countTokens takes `contents` or a whole `generateContentRequest`.
      const counted = isObject(body.generateContentRequest) ? (body.generateContentRequest as Partial<GenerateContentRequest>) : (body as Partial<GenerateContentRequest>);
      const totalTokens = countTokens(counted);
      sendJson(res, 200, { totalTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: totalTokens }] });
      return;
    }
    if (!Array.isArray(body.contents) || body.contents.length === 0) {
      sendError(res, { code: 400, status: 'INVALID_ARGUMENT', message: '* GenerateContentRequest.contents: contents is not specified\n' });
      return;
    }
    const request = body as GenerateContentRequest;
    let reply: ScriptedGeminiReply;
    try {
      reply = await options.model(request, modelCalls++, model);
    } catch (error) {
      sendError(res, { code: 500, status: 'INTERNAL', message: `scripted model failed: ${messageOf(error)}` });
      return;
    }
    if (res.destroyed) return; // the client left (or close() ran) while the model was thinking
    if (reply.error) {
      sendError(res, reply.error);
      return;
    }
    const stream = method === 'streamGenerateContent' ? (url.searchParams.get('alt') === 'sse' ? 'sse' : 'json-array') : false;
    writeResponse(res, model, reply, countTokens(request), stream);
  }

  const { base, close } = await listen(server, options.port, options.host);
  return { url: base, requests, close };
}

/**
 * The API key rules: the key comes as `x-goog-api-key` (what @google/genai and Gemini CLI
 * send), as `?key=`, or — Gemini CLI with GEMINI_API_KEY_AUTH_MECHANISM=bearer — as
 * `Authorization: Bearer <key>`. No key: 403 PERMISSION_DENIED; a wrong key: the API's 400
 * API_KEY_INVALID (or 401 UNAUTHENTICATED for a bearer token it does not know).
 */
function checkKey(req: IncomingMessage, url: URL, apiKey: string | undefined): ScriptedError | undefined {
  const header = req.headers['x-goog-api-key'];
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const key = (Array.isArray(header) ? header[0] : header) || url.searchParams.get('key') || undefined;
  if (!key && !bearer) {
    return {
      code: 403,
      status: 'PERMISSION_DENIED',
      message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    };
  }
  if (apiKey === undefined) return undefined;
  if (key !== undefined ? key === apiKey : bearer === apiKey) return undefined;
  if (key === undefined) {
    return {
      code: 401,
      status: 'UNAUTHENTICATED',
      message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_TYPE_UNSUPPORTED', metadata: { service: 'generativelanguage.googleapis.com', method: 'google.ai.generativelanguage.v1beta.GenerativeService.GenerateContent' } }],
    };
  }
  const message = 'API key not valid. Please pass a valid API key.';
  return {
    code: 400,
    status: 'INVALID_ARGUMENT',
    message,
    details: [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
      { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
    ],
  };
}

// ---------------------------------------------------------------------------
// A model for trying the server by hand

/** Answers every request with one line of text naming what came back, if anything. */
export const echoGeminiModel: ScriptedGeminiModel = (request) => {
  const result = lastFunctionResponse(request);
  return { text: result ? `The function ${result.name} answered ${JSON.stringify(result.response)}.` : 'Hello from the scripted Gemini model.' };
};

// ---------------------------------------------------------------------------
// CLI: node --import tsx test/fakes/gemini-server.ts [port]

await serveWhenRunDirectly(import.meta.url, { file: 'gemini-server.ts', title: 'Scripted Gemini API', variable: 'GOOGLE_GEMINI_BASE_URL' }, (port, onRequest) => startGeminiServer({ model: echoGeminiModel, port, onRequest }));
