// What the scripted models of the Gemini fake (gemini-server.ts) are made of: readers of a
// request (the function responses sent back, the user's text, the functions offered) and
// scriptedGemini, which plays a list of steps. Split from the server so each file stays
// readable; gemini-server.ts re-exports all of it. No vitest.
import { END_OF_SCRIPT, isObject, playSteps, type ScriptStepOf } from './fake-http.js';
import type { GenerateContentRequest, ScriptedGeminiModel, ScriptedGeminiReply } from './gemini-wire.js';

// ---------------------------------------------------------------------------
// Readers of a request

/** A `functionResponse` part as the client sent it back. */
export interface FunctionResponse {
  name: string;
  /** The `response` object, e.g. Gemini CLI's `{output: "…"}` or `{error: "…"}`. */
  response: Record<string, unknown>;
  id?: string;
}

/**
 * What the helpers below read from a request: `GenerateContentRequest` and @google/genai's
 * `GenerateContentParameters`-like bodies both fit.
 */
export interface GeminiRequestLike {
  contents?: ReadonlyArray<{ role?: string; parts?: ReadonlyArray<Record<string, unknown>> }>;
  tools?: ReadonlyArray<{ functionDeclarations?: ReadonlyArray<{ name?: string; [key: string]: unknown }> }> | null;
}

/** The last content with role `user` (the API's default role when none is given), if any. */
export function lastUserContent(request: GeminiRequestLike): { role?: string; parts?: ReadonlyArray<Record<string, unknown>> } | undefined {
  const contents = listOf(request.contents);
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i];
    if (content && (content.role === undefined || content.role === 'user')) return content;
  }
  return undefined;
}

/**
 * The `functionResponse` parts of the last user content, in order: the results of the model's
 * last function calls. `[]` when the last user content is plain text.
 */
export function functionResponses(request: GeminiRequestLike): FunctionResponse[] {
  const parts = lastUserContent(request)?.parts ?? [];
  return parts
    .map((part) => part?.functionResponse)
    .filter((value): value is Record<string, unknown> => isObject(value))
    .map((value) => ({
      name: String(value.name ?? ''),
      response: isObject(value.response) ? value.response : {},
      ...(typeof value.id === 'string' ? { id: value.id } : {}),
    }));
}

/** The last `functionResponse` of the request (see `functionResponses`), or undefined. */
export function lastFunctionResponse(request: GeminiRequestLike): FunctionResponse | undefined {
  return functionResponses(request).at(-1);
}

/**
 * The text of the last user content: its text parts joined with blank lines, without the
 * `<session_context>…</session_context>` part Gemini CLI puts before the first prompt (date,
 * OS, workspace listing). `''` when it has none (e.g. only function responses).
 */
export function lastUserText(request: GeminiRequestLike): string {
  const parts = lastUserContent(request)?.parts ?? [];
  return parts
    .filter((part) => typeof part?.text === 'string' && part.thought !== true)
    .map((part) => part.text as string)
    .filter((text) => text !== '' && !isSessionContext(text))
    .join('\n\n');
}

/** Whether a text part is Gemini CLI's session context block, not something the user typed. */
export function isSessionContext(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.startsWith('<session_context>') && trimmed.endsWith('</session_context>');
}

/** The names of the functions offered, in order, across every tool's `functionDeclarations`. */
export function functionNames(request: GeminiRequestLike): string[] {
  const tools = listOf(request.tools);
  return tools.flatMap((tool) => (tool?.functionDeclarations ?? []).map((declaration) => String(declaration?.name ?? '')));
}

/** The declaration of the function called `name` (its `parametersJsonSchema` or `parameters`), or undefined. */
export function functionDeclaration(request: GeminiRequestLike, name: string): Record<string, unknown> | undefined {
  const tools = listOf(request.tools);
  for (const tool of tools) {
    const found = (tool?.functionDeclarations ?? []).find((declaration) => declaration?.name === name);
    if (found) return found;
  }
  return undefined;
}

/** How many function responses came back since the user's last typed text (the turn's calls so far). */
export function functionResponsesThisTurn(request: GeminiRequestLike): number {
  const contents = listOf(request.contents);
  let count = 0;
  for (let i = contents.length - 1; i >= 0; i--) {
    const parts = contents[i]?.parts ?? [];
    const role = contents[i]?.role;
    if ((role === undefined || role === 'user') && parts.some((p) => typeof p?.text === 'string' && !p.functionResponse)) break;
    count += parts.filter((p) => isObject(p?.functionResponse)).length;
  }
  return count;
}

/** The array, or `[]` for anything else (a hand-made request may lack a field or send junk). */
function listOf<T>(value: ReadonlyArray<T> | null | undefined): ReadonlyArray<T> {
  return Array.isArray(value) ? value : [];
}

// ---------------------------------------------------------------------------
// scriptedGemini: a list of steps, played in order

export type GeminiScriptStep = ScriptStepOf<GenerateContentRequest, ScriptedGeminiReply>;

export { END_OF_SCRIPT };

/** A model that plays `steps` in order, one per request (fake-http.ts: playSteps); then `"(end of script)"`. One per server. */
export function scriptedGemini(steps: GeminiScriptStep[]): ScriptedGeminiModel {
  return playSteps(steps, { text: END_OF_SCRIPT });
}
