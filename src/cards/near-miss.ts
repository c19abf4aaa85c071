import { RelayError } from '../errors.js';
import type { Card, Question } from './model.js';
import { clip } from './text.js';

// Telling a slip from an answer: a reply that is only a number, or one edit away from an
// option's label, is more likely a mistyped option than words meant for the agent
// (issue 17; docs/api.md, `POST /api/cards/:id/reply`).

/** Labels shorter than this are never near-missed: "Yes"/"Yet", "Go"/"No" are words of their own. */
export const NEAR_MISS_MIN_LABEL = 4;

/**
 * Whether `a` and `b` are exactly one edit apart: one character inserted, deleted or
 * replaced, or two neighbours swapped (Damerau–Levenshtein with adjacent transpositions).
 * Equal strings are not. Linear: the texts are compared from both ends once.
 */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const restA = endA - start;
  const restB = endB - start;
  // What differs is at most one character on each side, or one swapped pair.
  if (restA <= 1 && restB <= 1) return true;
  return restA === 2 && restB === 2 && a[start] === b[start + 1] && a[start + 1] === b[start];
}

/** The option label `typed` is one edit away from (ignoring case and surrounding space), if any. */
export function nearMissOf(q: Question, typed: string): string | undefined {
  const t = typed.trim().toLowerCase();
  return q.options.find((o) => {
    const label = o.label.trim().toLowerCase();
    return label.length >= NEAR_MISS_MIN_LABEL && oneEditApart(t, label);
  })?.label;
}

/** Whether a piece of a reply looks like a slip: only digits (a number no option has), or a near miss of a label. */
export function looksLikeSlip(q: Question, piece: string): boolean {
  if (!q.options.length) return false;
  return /^\d+$/.test(piece.trim()) || nearMissOf(q, piece) !== undefined;
}

const NAME_CHARS = 40;

/** How messages name a question: its header, else its text (clipped); never its id. */
export function questionName(q: Question): string {
  const header = q.header?.trim();
  if (header) return header;
  return clip(q.text.trim().replace(/\s+/g, ' '), NAME_CHARS);
}

export const named = (q: Question) => `"${questionName(q)}"`;

export function optionList(q: Question): string {
  return q.options.map((o, i) => `${i + 1}. ${o.label}`).join(', ');
}

/** `"7" is not one of the options of "Database" (1. PostgreSQL, 2. SQLite); …` */
export function notAnOption(q: Question, typed: string): string {
  const near = nearMissOf(q, typed);
  const label = near ? `an option's label (did you mean "${near}"?)` : "an option's label";
  const range = q.options.length === 1 ? 'the number 1' : `a number from 1 to ${q.options.length}`;
  const ways = q.freeText ? `${range}, ${label}, or mark your words as text` : `${range} or ${label}`;
  return `"${typed}" is not one of the options of ${named(q)} (${optionList(q)}); give ${ways}.`;
}

/** Refuses a reply that reads as a mistyped option rather than words (see the top of this file). */
export function refuseSlip(q: Question, text: string, rest: string[], everyPart: boolean): void {
  if (!q.freeText) return;
  const slips = rest.filter((part) => looksLikeSlip(q, part));
  const whole = looksLikeSlip(q, text);
  if (!whole && !(slips.length && (everyPart || slips.length === rest.length))) return;
  throw new RelayError('ambiguous_reply', notAnOption(q, whole ? text : slips[0]));
}

/** A card's questions as messages list them: "1. Database, 2. Languages, 3. Project name?". */
export const questionList = (card: Card) => card.questions.map((q, i) => `${i + 1}. ${questionName(q)}`).join(', ');
