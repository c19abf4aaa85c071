import type { TranscriptEntry } from '../../src/sessions/model.js';

// Pure helpers for Grok's plain-text questions: what a reply adds to the transcript, and
// whether it asks the user something. No I/O here.

/** The parts of a Chat Completions reply the relay keeps. */
export interface GrokReply {
  content: string | null | undefined;
  refusal?: string | null;
  finishReason?: string | null;
}

/** The assistant message stored in the conversation (and sent back on the next request). */
export function assistantMessage(reply: GrokReply): { role: 'assistant'; content: string } {
  return { role: 'assistant', content: reply.content ?? '' };
}

/** The transcript entries a reply adds, in order: its text, then a note when it was cut short or refused. */
export function transcriptEntries(reply: GrokReply): Array<{ role: TranscriptEntry['role']; text: string }> {
  const entries: Array<{ role: TranscriptEntry['role']; text: string }> = [];
  const text = reply.content?.trim() ?? '';
  if (text) entries.push({ role: 'assistant', text });
  if (reply.refusal?.trim()) entries.push({ role: 'assistant', text: reply.refusal.trim() });
  if (reply.finishReason === 'length') entries.push({ role: 'system', text: "Grok's reply was cut off at the token limit." });
  else if (reply.finishReason === 'content_filter') entries.push({ role: 'system', text: "Grok's reply was stopped by the provider's content filter." });
  else if (!text && !reply.refusal?.trim()) entries.push({ role: 'system', text: 'Grok replied with no text.' });
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
