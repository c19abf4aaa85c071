// The Gemini API (generativelanguage, v1beta) wire format the scripted server speaks: request
// and reply shapes, whole and streamed GenerateContentResponses, countTokens and model
// objects, and Google's error bodies. The server (gemini-server.ts) only routes; what goes on
// the wire is decided here. No vitest: it also powers `askrelay demo`.
//
// Shapes follow what the API answers and what @google/genai (bundled inside Gemini CLI)
// parses: each SSE event is one line `data: <GenerateContentResponse>` and a blank line (the
// SDK's reader matches /^\s*data: (.*)(?:\n\n|\r\r|\r\n\r\n)/), every chunk repeats
// `usageMetadata` (cumulative) with `modelVersion` and `responseId`, and only the last one
// carries `finishReason`. Function calls finish with "STOP" too: Gemini has no tool-use reason.
import type { ServerResponse } from 'node:http';
import { chunk, randomId } from './fake-http.js';

// ---------------------------------------------------------------------------
// Request shapes (loose on purpose: Gemini CLI sends fields that change between versions)

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string; [key: string]: unknown };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface GeminiContent {
  role?: 'user' | 'model' | string;
  parts: GeminiPart[];
  [key: string]: unknown;
}

export interface FunctionDeclaration {
  name: string;
  description?: string;
  parameters?: unknown;
  parametersJsonSchema?: unknown;
  [key: string]: unknown;
}

export interface GeminiTool {
  functionDeclarations?: FunctionDeclaration[];
  [key: string]: unknown;
}

/** The JSON body of POST …:generateContent / …:streamGenerateContent, as the client sent it. */
export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent | string;
  tools?: GeminiTool[];
  toolConfig?: Record<string, unknown>;
  generationConfig?: { responseMimeType?: string; responseJsonSchema?: unknown; responseSchema?: unknown; [key: string]: unknown };
  safetySettings?: unknown[];
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------
// The scripted model

/** The API's `Candidate.finishReason` values a script is likely to want. */
export type FinishReason = 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'RECITATION' | 'MALFORMED_FUNCTION_CALL' | 'OTHER' | (string & {});

export interface ScriptedFunctionCall {
  name: string;
  args?: Record<string, unknown>;
  /** The API leaves it out (clients make their own call ids); set it to send one. */
  id?: string;
  /** Sent beside the call as the part's `thoughtSignature`, as Gemini 2.5+/3 models do. */
  thoughtSignature?: string;
}

/**
 * A Google error body `{error:{code, message, status, details?}}` (google.rpc.Status as JSON).
 * `GEMINI_ERRORS` has the API's own ones.
 */
export interface ScriptedError {
  /** The HTTP status, sent again as `error.code`. */
  code: number;
  message: string;
  /** The canonical code: INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE… */
  status: string;
  /** google.rpc detail objects, each with its `@type` (ErrorInfo, RetryInfo, QuotaFailure, Help, BadRequest…). */
  details?: Array<Record<string, unknown>>;
  headers?: Record<string, string>;
}

export interface ScriptedGeminiReply {
  /** Model text: one part in a whole response, pieces of `TEXT_CHUNK` characters in a stream. */
  text?: string;
  /** Function calls, after the text; each goes whole in one part (and, streamed, one chunk). */
  functionCalls?: ScriptedFunctionCall[];
  /** Defaults to "STOP". */
  finishReason?: FinishReason;
  /** Answer with this HTTP error instead of a response. */
  error?: ScriptedError;
  /**
   * The connection breaks mid-answer: a stream sends this many chunks (headers and all),
   * then the socket is destroyed without the last chunk; a whole response is cut before it starts.
   */
  cutAfterChunks?: number;
}

/**
 * Decides the reply to one generateContent / streamGenerateContent request. `index` counts
 * the requests this server handed to the model so far (0-based); countTokens and the model
 * list never reach it. `model` is the model named in the request's path.
 */
export type ScriptedGeminiModel = (request: GenerateContentRequest, index: number, model: string) => ScriptedGeminiReply | Promise<ScriptedGeminiReply>;

/** Characters per streamed text piece. */
export const TEXT_CHUNK = 12;

/** The model listed when none is configured. */
export const DEFAULT_MODEL = 'gemini-2.5-flash';

/** The API's errors, as scripted replies (bodies as the API words them). */
export const GEMINI_ERRORS = {
  /** 429 as the free tier answers it: QuotaFailure, Help and RetryInfo (Gemini CLI waits `retryDelay`). */
  rateLimit: (retryDelaySeconds = 30, model = DEFAULT_MODEL): ScriptedGeminiReply => ({
    error: {
      code: 429,
      status: 'RESOURCE_EXHAUSTED',
      message: 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
              quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
              quotaDimensions: { location: 'global', model },
              quotaValue: '10',
            },
          ],
        },
        { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryDelaySeconds}s` },
      ],
    },
  }),
  internal: (): ScriptedGeminiReply => ({
    error: { code: 500, status: 'INTERNAL', message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting' },
  }),
  overloaded: (): ScriptedGeminiReply => ({ error: { code: 503, status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' } }),
  invalidArgument: (message = 'Request contains an invalid argument.'): ScriptedGeminiReply => ({ error: { code: 400, status: 'INVALID_ARGUMENT', message } }),
};

// ---------------------------------------------------------------------------
// Responses on the wire

/** Writes the scripted reply: an SSE stream, a streamed JSON array (no `alt=sse`), or one JSON body. */
export function writeResponse(res: ServerResponse, model: string, reply: ScriptedGeminiReply, promptTokens: number, stream: 'sse' | 'json-array' | false): void {
  const chunks = buildChunks(model, reply, promptTokens);
  if (!stream) {
    if (reply.cutAfterChunks !== undefined) res.destroy();
    else sendJson(res, 200, wholeResponse(chunks));
    return;
  }
  res.writeHead(200, {
    'content-type': stream === 'sse' ? 'text/event-stream' : 'application/json; charset=UTF-8',
    'content-disposition': 'attachment',
    vary: 'Origin, X-Origin, Referer',
    'x-content-type-options': 'nosniff',
  });
  const frames = stream === 'sse' ? chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`) : chunks.map((c, i) => `${i ? ',\r\n' : '['}${JSON.stringify(c)}`);
  if (reply.cutAfterChunks !== undefined) {
    // Destroyed once what came before is flushed: the client reads exactly that many chunks.
    res.write(frames.slice(0, Math.max(0, reply.cutAfterChunks)).join(''), () => res.destroy());
    return;
  }
  for (const frame of frames) res.write(frame);
  res.end(stream === 'sse' ? '' : ']');
}

type Chunk = Record<string, unknown> & { candidates: Array<Record<string, unknown> & { content: { parts: GeminiPart[]; role: string } }> };

/**
 * The response as stream chunks: text pieces, then each function call whole, the last chunk
 * with `finishReason` and the final token counts. Every chunk has the same `responseId`.
 */
function buildChunks(model: string, reply: ScriptedGeminiReply, promptTokens: number): Chunk[] {
  const parts: GeminiPart[][] = [];
  if (reply.text !== undefined) for (const text of chunk(reply.text, TEXT_CHUNK)) parts.push([{ text }]);
  for (const call of reply.functionCalls ?? []) {
    const functionCall = { name: call.name, args: call.args ?? {}, ...(call.id !== undefined ? { id: call.id } : {}) };
    parts.push([{ functionCall, ...(call.thoughtSignature !== undefined ? { thoughtSignature: call.thoughtSignature } : {}) }]);
  }
  if (!parts.length) parts.push([{ text: '' }]);
  const responseId = randomId('', 23);
  // The API words a finish after function calls (recorded from gemini-2.5-flash).
  const finish = { finishReason: reply.finishReason ?? 'STOP', ...(reply.functionCalls?.length && !reply.finishReason ? { finishMessage: 'Model generated function call(s).' } : {}) };
  let produced = 0;
  return parts.map((pieceParts, i) => {
    for (const part of pieceParts) produced += (part.text?.length ?? 0) + (part.functionCall ? JSON.stringify(part.functionCall).length : 0);
    const last = i === parts.length - 1;
    const candidatesTokens = Math.max(1, Math.ceil(produced / 4));
    return {
      candidates: [{ content: { parts: pieceParts, role: 'model' }, ...(last ? finish : {}), index: 0 }],
      usageMetadata: usageMetadata(promptTokens, candidatesTokens),
      modelVersion: model,
      responseId,
    };
  });
}

/** One GenerateContentResponse from the stream chunks: text pieces joined into one part. */
function wholeResponse(chunks: Chunk[]): Record<string, unknown> {
  const parts: GeminiPart[] = [];
  for (const part of chunks.flatMap((c) => c.candidates[0]!.content.parts)) {
    const previous = parts.at(-1);
    if (part.text !== undefined && previous?.text !== undefined && !previous.functionCall) previous.text += part.text;
    else parts.push({ ...part });
  }
  const last = chunks.at(-1)!;
  return { ...last, candidates: [{ ...last.candidates[0], content: { parts, role: 'model' } }] };
}

export function usageMetadata(promptTokens: number, candidatesTokens: number) {
  return {
    promptTokenCount: promptTokens,
    candidatesTokenCount: candidatesTokens,
    totalTokenCount: promptTokens + candidatesTokens,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
  };
}

/** A rough token count of what a request sends (characters / 4), as countTokens and usageMetadata report it. */
export function countTokens(request: Partial<GenerateContentRequest>): number {
  const sent = JSON.stringify([request.systemInstruction ?? null, request.contents ?? [], request.tools ?? []]);
  return Math.max(1, Math.ceil(sent.length / 4));
}

/** A Model resource as GET /v1beta/models lists it. */
export function modelResource(model: string) {
  return {
    name: `models/${model}`,
    version: '001',
    displayName: model,
    description: 'A scripted model (askrelay test fake).',
    inputTokenLimit: 1_048_576,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
    thinking: true,
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer', 'x-content-type-options': 'nosniff', ...headers });
  res.end(JSON.stringify(body));
}

export function sendError(res: ServerResponse, error: ScriptedError): void {
  const { code, message, status, details } = error;
  sendJson(res, code, { error: { code, message, status, ...(details ? { details } : {}) } }, error.headers);
}

/** Google's front end answers an unknown URL with an HTML page, not a JSON error. */
export function sendNotFoundPage(res: ServerResponse, method: string, path: string): void {
  res.writeHead(404, { 'content-type': 'text/html; charset=UTF-8' });
  res.end(`<!DOCTYPE html>\n<html lang=en>\n<title>Error 404 (Not Found)!!1</title>\n<p><b>404.</b> <ins>That’s an error.</ins>\n<p>The requested URL <code>${escapeHtml(path)}</code> was not found on this server (${escapeHtml(method)}). <ins>That’s all we know.</ins>\n`);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
