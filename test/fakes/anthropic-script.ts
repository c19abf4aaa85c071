// What the scripted models of the Anthropic fake (anthropic-server.ts) are made of: readers
// of a request (the tool results, the user's text, the tools offered), askingModel that plays
// a list of steps, and the demo model. Split from the server so each file stays readable;
// anthropic-server.ts re-exports all of it.
import { demoReply } from './demo-reply.js';
import { isObject } from './fake-http.js';
import type { MessagesRequest, ScriptedModel, ScriptedReply } from './anthropic-server.js';

// ---------------------------------------------------------------------------
// Helpers for scripted models

export interface ToolResult {
  tool_use_id: string;
  /** Normalized to a string, Claude Code's trailing system-reminders removed. */
  content: string;
  is_error?: boolean;
}

/**
 * What the helpers below read from a request. Both `MessagesRequest` and the
 * SDK's `MessageCreateParams` fit it, so the helpers work on either.
 */
export interface RequestLike {
  messages?: ReadonlyArray<{ role: string; content: unknown }>;
  tools?: ReadonlyArray<{ name?: string; type?: string | null }> | null;
}

/** The last message with role `user`, if any. */
export function lastUserMessage<M extends { role: string; content: unknown }>(request: { messages?: ReadonlyArray<M> }): M | undefined {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return messages[i];
  return undefined;
}

/** Every tool_result block in the last user message, normalized (see `ToolResult`). */
export function toolResults(request: RequestLike): ToolResult[] {
  const content = lastUserMessage(request)?.content;
  if (!Array.isArray(content)) return [];
  return content
    .filter((block): block is Record<string, unknown> => isObject(block) && block.type === 'tool_result')
    .map((block) => {
      const result: ToolResult = { tool_use_id: String(block.tool_use_id ?? ''), content: contentText(block.content) };
      if (typeof block.is_error === 'boolean') result.is_error = block.is_error;
      return result;
    });
}

/** The (last) tool_result in the last user message, or undefined when it has none. */
export function lastToolResult(request: RequestLike): ToolResult | undefined {
  return toolResults(request).at(-1);
}

/**
 * The text the user typed in the last user message: its text blocks joined
 * with blank lines, without Claude Code's `<system-reminder>` blocks and
 * suffixes. `''` when it has no text (e.g. only a tool_result).
 */
export function lastUserText(request: RequestLike): string {
  const message = lastUserMessage(request);
  return message ? contentText(message.content) : '';
}

/** The names of the tools offered (a server tool without a name shows its `type`). */
export function toolNames(request: RequestLike): string[] {
  const tools = Array.isArray(request.tools) ? request.tools : [];
  return tools.map((tool) => String(tool?.name ?? tool?.type ?? ''));
}

/**
 * Removes trailing `<system-reminder>…</system-reminder>` blocks (and the blank
 * line before each) that Claude Code appends to what it puts on the wire.
 */
export function stripSystemReminders(text: string): string {
  let out = text;
  while (out.endsWith('</system-reminder>')) {
    const start = out.lastIndexOf('<system-reminder>');
    if (start < 0) break;
    out = out.slice(0, start);
    if (out.endsWith('\n\n')) out = out.slice(0, -2);
    else if (out.endsWith('\n')) out = out.slice(0, -1);
  }
  return out;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return stripSystemReminders(content);
  if (!Array.isArray(content)) return '';
  const texts = content
    .filter((block): block is { type: 'text'; text: string } => isObject(block) && block.type === 'text' && typeof block.text === 'string')
    .map((block) => stripSystemReminders(block.text))
    .filter((text) => text !== '');
  return texts.join('\n\n');
}

// ---------------------------------------------------------------------------
// askingModel: a list of steps, played in order

export type ScriptStep =
  | ScriptedReply
  | string
  | ((request: MessagesRequest, index: number) => ScriptedReply | string | Promise<ScriptedReply | string>);

/** What a script answers once its steps are used up. */
export const END_OF_SCRIPT = '(end of script)';

/**
 * A model that plays `steps` in order, one per call: a reply, a string (a text
 * reply), or a function of the request returning either. Once the steps are
 * used up it answers `"(end of script)"` with `end_turn`. Each model keeps its
 * own position, so create one per server.
 */
export function askingModel(steps: ScriptStep[]): ScriptedModel {
  let next = 0;
  return async (request, index) => {
    const step = steps[next++];
    if (step === undefined) return { text: END_OF_SCRIPT, stopReason: 'end_turn' };
    const reply = typeof step === 'function' ? await step(request, index) : step;
    return typeof reply === 'string' ? { text: reply } : reply;
  };
}

// ---------------------------------------------------------------------------
// The demo model

/** The AskUserQuestion input the demo model sends. */
export const DEMO_QUESTION = {
  questions: [
    {
      question: 'Which database?',
      header: 'DB',
      options: [
        { label: 'PostgreSQL', description: 'A full SQL server: concurrent writers, rich types, replication.' },
        { label: 'SQLite', description: 'One embedded file: nothing to run, ideal for a single process.' },
      ],
      multiSelect: false,
    },
  ],
};

/**
 * Asks one AskUserQuestion; once the tool_result comes back it replies
 * with only the choice it read there (demo-reply.ts) and ends the turn.
 */
export const demoModel: ScriptedModel = (request) => {
  const result = lastToolResult(request);
  if (result) return { text: demoReply(result.content), stopReason: 'end_turn' };
  return { toolUse: { name: 'AskUserQuestion', input: DEMO_QUESTION } };
};
