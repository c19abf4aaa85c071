import type { AnswerEntry, Card, Question } from '../cards/model.js';
import { parseEntry } from '../cards/reply-parser.js';

// Reading what someone typed at the terminal as the answer to one question, through the
// plain-text reply parser (src/cards/reply-parser.ts) that every surface shares.

// A number is a list item even when no option has it: "1 7" is a list with a slip in it
// (refused by the parser), not the phrase "1 7".
const isListItem = (q: Question, value: string): boolean => {
  const v = value.trim().toLowerCase();
  return /^\d+$/.test(v) || q.options.some((o) => o.label.trim().toLowerCase() === v);
};

/**
 * The shell's words as one reply text: several values that are each a number or an option's
 * label are a list ("3 red" → "3, red"); otherwise they are one phrase joined with
 * spaces ("use sqlite" → "use sqlite", "not sure" → "not sure").
 */
export function valuesText(question: Question, values: string[]): string {
  const list = values.length > 1 && values.every((v) => isListItem(question, v));
  return values.map((v) => v.trim()).join(list ? ', ' : ' ');
}

/** The answer to one question from its values, read by the reply parser, followed by `text` (--text). */
export function readValues(card: Card, question: Question, values: string[], text?: string): AnswerEntry {
  const extra = text?.trim() || undefined;
  const entry: AnswerEntry = values.length ? parseEntry(card, question, valuesText(question, values)) : { selected: [] };
  if (!extra) return entry;
  return { ...entry, text: entry.text ? `${entry.text} ${extra}` : extra };
}
