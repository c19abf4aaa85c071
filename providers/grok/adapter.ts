import type { TranscriptEntry } from '../../src/sessions/model.js';

// Pure helpers for Grok's plain-text questions: what a reply adds to the transcript, and
// whether it asks the user something. No I/O here.

/** A function call in a Chat Completions reply, as the wire carries it (arguments: JSON text). */
export interface GrokToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The parts of a Chat Completions reply the relay keeps. */
export interface GrokReply {
  content: string | null | undefined;
  refusal?: string | null;
  finishReason?: string | null;
  /** Calls of the relay tool; a reply with calls does not end the turn. */
  toolCalls?: GrokToolCall[];
}

/** The assistant message stored in the conversation (and sent back on the next request). */
export function assistantMessage(reply: GrokReply):
  | { role: 'assistant'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls: GrokToolCall[] } {
  if (!reply.toolCalls?.length) return { role: 'assistant', content: reply.content ?? '' };
  const tool_calls = reply.toolCalls.map(({ id, function: { name, arguments: args } }) => ({ id, type: 'function' as const, function: { name, arguments: args } }));
  return { role: 'assistant', content: reply.content || null, tool_calls };
}

/** The tool message that hands a call's result back to the model. */
export function toolMessage(toolCallId: string, text: string): { role: 'tool'; tool_call_id: string; content: string } {
  return { role: 'tool', tool_call_id: toolCallId, content: text };
}

/**
 * A call's arguments as an object for the relay tool; a sentence for the model when they are
 * not JSON. Empty arguments are `{}` (list_questions takes none).
 */
export function toolArguments(call: GrokToolCall): { ok: true; args: unknown } | { ok: false; text: string } {
  const raw = call.function.arguments.trim();
  if (!raw) return { ok: true, args: {} };
  try {
    return { ok: true, args: JSON.parse(raw) };
  } catch {
    return { ok: false, text: `The arguments of ${call.function.name} are not valid JSON; call it again with a JSON object.` };
  }
}

/** The transcript entries a reply adds, in order: its text, then a note when it was cut short or refused. */
export function transcriptEntries(reply: GrokReply): Array<{ role: TranscriptEntry['role']; text: string }> {
  const entries: Array<{ role: TranscriptEntry['role']; text: string }> = [];
  const text = reply.content?.trim() ?? '';
  if (text) entries.push({ role: 'assistant', text });
  if (reply.refusal?.trim()) entries.push({ role: 'assistant', text: reply.refusal.trim() });
  if (reply.finishReason === 'length') entries.push({ role: 'system', text: "Grok's reply was cut off at the token limit." });
  else if (reply.finishReason === 'content_filter') entries.push({ role: 'system', text: "Grok's reply was stopped by the provider's content filter." });
  else if (!text && !reply.refusal?.trim() && !reply.toolCalls?.length) entries.push({ role: 'system', text: 'Grok replied with no text.' });
  return entries;
}

/**
 * Whether a reply asks the user something: its last paragraph holds a question mark, or
 * it ends on a numbered list of options. A hint for surfaces only: every reply ends the
 * turn either way.
 */
export function asksUser(text: string): boolean {
  const paragraphs = text.trim().split(/\n\s*\n/).filter((p) => p.trim());
  const last = paragraphs.at(-1);
  if (!last) return false;
  if (/[?？]/.test(last)) return true;
  const lines = last.split('\n').map((l) => l.trim()).filter(Boolean);
  const numbered = lines.filter((l) => /^\d{1,2}[.)]\s+\S/.test(l));
  if (numbered.length >= 2 && /^\d{1,2}[.)]\s+\S/.test(lines.at(-1)!)) {
    // The list must be introduced by a question (in this paragraph or the one before).
    const before = [...lines.slice(0, lines.indexOf(numbered[0]!)), paragraphs.at(-2) ?? ''].join('\n');
    return /[?？:：]\s*$/m.test(before);
  }
  return false;
}
