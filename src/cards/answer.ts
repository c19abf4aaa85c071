import { RelayError } from '../errors.js';
import { LIMITS, type Answer, type AnswerEntry, type Card, type Question } from './model.js';
import { named } from './near-miss.js';
import { findCredential } from './secrets.js';

// Checks an answer against its card and returns it in canonical form: labels spelled as
// the options spell them, in option order, without repeats; text trimmed and dropped when
// empty. Two answers are "the same" exactly when their canonical forms are equal.

/** The refusal of an answer whose text holds a credential (`what`: its kind, "a GitHub token"). */
export const credentialRefused = (q: Question, what: string) =>
  new RelayError(
    'credential_refused',
    `The answer to question ${named(q)} looks like ${what}. Never answer with a credential; give it to the tool that needs it another way.`,
  );

function checkEntry(card: Card, q: Question, entry: AnswerEntry): AnswerEntry {
  const byKey = new Map(q.options.map((o) => [o.label.toLowerCase(), o.label]));
  const picked = new Set<string>();
  for (const raw of entry.selected) {
    const label = byKey.get(raw.trim().toLowerCase());
    if (!label) {
      throw new RelayError(
        'unknown_option',
        q.options.length
          ? `"${raw}" is not an option of question ${named(q)} (options: ${q.options.map((o) => o.label).join(', ')}); typed words belong in "text".`
          : `Question ${named(q)} has no options; put the answer in "text".`,
      );
    }
    picked.add(label);
  }
  if (picked.size > 1 && !q.multiSelect && !card.selectSeveral) {
    throw new RelayError('too_many_choices', `Question ${named(q)} takes one choice; ${picked.size} were picked.`);
  }
  const text = entry.text?.trim() || undefined;
  if (text !== undefined) {
    if (!q.freeText) {
      throw new RelayError('free_text_not_allowed', `Question ${named(q)} takes one of its options, not free text.`);
    }
    if (text.length > LIMITS.answerTextChars) {
      throw new RelayError('invalid_answer', `The text for question ${named(q)} is longer than ${LIMITS.answerTextChars} characters.`);
    }
    const credential = findCredential(text);
    if (credential) throw credentialRefused(q, credential);
    if (q.field?.type === 'number' && !Number.isFinite(Number(text))) {
      throw new RelayError('invalid_answer', `Question ${named(q)} takes a number; "${text}" is not one.`);
    }
  }
  // OpenClaw's rules leave a question without an answer as an empty list.
  if (picked.size === 0 && text === undefined && card.answerRules !== 'openclaw') {
    throw new RelayError('empty_answer', `The answer to question ${named(q)} is empty: pick an option or type some text.`);
  }
  const selected = q.options.map((o) => o.label).filter((l) => picked.has(l));
  return text === undefined ? { selected } : { selected, text };
}

export function checkAnswer(card: Card, answer: Answer): Answer {
  const known = new Set(card.questions.map((q) => q.id));
  for (const id of Object.keys(answer)) {
    if (!known.has(id)) {
      throw new RelayError('unknown_question', `The card has no question "${id}" (questions: ${[...known].join(', ')}).`);
    }
  }
  // Own keys only, built with fromEntries: a question id such as "constructor" or
  // "__proto__" (refused for new cards, see draft.ts) must never read or set what every
  // object inherits.
  return Object.fromEntries(
    card.questions.map((q) => {
      const given = Object.hasOwn(answer, q.id) ? answer[q.id] : undefined;
      const entry = given ?? (card.answerRules === 'openclaw' ? { selected: [] } : undefined);
      if (!entry) throw new RelayError('missing_answer', `Question ${named(q)} has no answer; every question needs one.`);
      return [q.id, checkEntry(card, q, entry)];
    }),
  );
}

export function sameAnswer(a: Answer, b: Answer): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => {
    const x = a[k];
    const y = Object.hasOwn(b, k) ? b[k] : undefined;
    return (
      y !== undefined &&
      x.text === y.text &&
      x.selected.length === y.selected.length &&
      x.selected.every((label, i) => label === y.selected[i])
    );
  });
}

/** Whether a waiter has what it waits for: the card closed, or (`late`) an answer of any kind, a late one included. */
export function waitedFor(card: Card, late: boolean): boolean {
  return late ? card.status === 'answered' || card.status === 'skipped' || card.lateAnswer !== undefined : card.status !== 'pending';
}

/**
 * The card as its asker reads a late answer: answered with it. What an MCP client that re-sends
 * its call gets (through its dialect's usual result), and what `askrelay ask --accept-late` prints.
 */
export function asAnswered(card: Card): Card {
  if (!card.lateAnswer) return card;
  const { answer, answeredBy, lateAt } = card.lateAnswer;
  return { ...card, status: 'answered', answer, answeredBy, closedAt: lateAt };
}
