import type { Answer, AnswerEntry, Card, Question } from './model.js';

// A plain-text reply to a card asked through OpenClaw's ask_user, read as OpenClaw's bridge
// reads it (openclaw/openclaw src/agents/harness/user-input-bridge.ts,
// buildAgentHarnessUserInputAnswers), so that a person answers it the same way wherever it
// shows. Nothing is refused: what names no option is free text (or dropped on a question
// that takes none), and a question the reply does not reach is left empty.
//
// One question: the whole reply is its answer. Several: a line `key: value` (also `=`, `-`)
// answers the question whose id, header, question text or 1-based number is the key (case
// ignored); any other question takes the line at its own position (blank lines count).
// An answer: a 1-based option number (before a label that is itself a number), else an
// option label in any case; on a multi-select question the whole answer as a label first,
// then its parts split on "," ";" or a new line.

/** The option a piece names: its number first, then its label in any case. */
function option(q: Question, piece: string): string | undefined {
  const t = piece.trim();
  const byNumber = /^\d+$/.test(t) ? q.options[Number(t) - 1] : undefined;
  return byNumber?.label ?? q.options.find((o) => o.label.toLowerCase() === t.toLowerCase())?.label;
}

/** One value: an option's label, or the trimmed text when the question takes free text. */
function value(q: Question, piece: string): string | undefined {
  const named = option(q, piece);
  if (named) return named;
  if (q.options.length > 0 && !q.freeText) return undefined;
  return piece.trim() || undefined;
}

function values(q: Question, answer: string): string[] {
  if (!q.multiSelect) {
    const one = value(q, answer);
    return one ? [one] : [];
  }
  const whole = option(q, answer);
  if (whole) return [whole];
  return [...new Set(answer.split(/[,;\n]/u).map((part) => value(q, part)).filter((v): v is string => v !== undefined))];
}

/** OpenClaw's values as an answer entry: its options picked, the rest as the typed text. */
function entryOf(q: Question, list: string[]): AnswerEntry {
  const labels = new Set(q.options.map((o) => o.label));
  const selected = list.filter((v) => labels.has(v));
  const typed = list.filter((v) => !labels.has(v));
  return typed.length ? { selected, text: typed.join(', ') } : { selected };
}

/**
 * OpenClaw's `/^\s*([^:=-]+?)\s*[:=-]\s*(.+?)\s*$/` per line, found by index: the key is what
 * stands before the first ":", "=" or "-", the value what follows, both trimmed and not
 * empty, and the value holds no line break (the pattern's "." stops at one). The pattern
 * itself costs the square of a long line with no delimiter.
 */
export function keyedLines(text: string): Map<string, string> {
  const keyed = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.search(/[:=-]/);
    if (at < 0) continue;
    const key = line.slice(0, at).trim().toLowerCase();
    const rest = line.slice(at + 1).trim();
    if (key && rest && !/[\r\u2028\u2029]/.test(rest)) keyed.set(key, rest);
  }
  return keyed;
}

export function parseOpenclawReply(card: Card, text: string): Answer {
  const { questions } = card;
  if (questions.length === 1) return { [questions[0].id]: entryOf(questions[0], values(questions[0], text)) };
  const keyed = keyedLines(text);
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  return Object.fromEntries(
    questions.map((q, i) => {
      const answer = keyed.get(q.id.toLowerCase()) ?? keyed.get((q.header ?? '').toLowerCase()) ?? keyed.get(q.text.toLowerCase()) ?? keyed.get(String(i + 1)) ?? lines[i] ?? '';
      return [q.id, entryOf(q, answer ? values(q, answer) : [])];
    }),
  );
}
