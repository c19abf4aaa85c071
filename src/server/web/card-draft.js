// A card's draft: the human's picks and typing, question by question, and how they become
// an Answer ({[questionId]: {selected, text?}}). Pure: the card modules keep the DOM in
// step. Unit-tested in test/web/card-draft.test.ts.

/**
 * @typedef {{selected: Set<string>, text: string, several: boolean, done: boolean}} Draft
 * @typedef {{step: number, drafts: Record<string, Draft>, busy: boolean, countdown: any, probed: boolean,
 *   held: any, invalidField: string | null, replyError: boolean, late: boolean, queued: any}} CardUi
 */

/**
 * A card's UI state: the step shown, one draft per question, and the card's busy flags.
 * @returns {CardUi}
 */
export function newUi(card) {
  /** @type {Record<string, Draft>} */
  const drafts = {};
  for (const q of card.questions) drafts[q.id] = { selected: new Set(), text: '', several: false, done: false };
  return { step: 0, drafts, busy: false, countdown: null, probed: false, held: null, invalidField: null, replyError: false, late: false, queued: null };
}

/** Whether the card takes an answer from the page: open, or closed and being answered late (Answer anyway). */
export const answerable = (entry) => entry.card.status === 'pending' || Boolean(entry.ui.late);

/** Several options may be checked: the question asks for it, or the human switched it on. */
export const isMulti = (q, draft) => Boolean(q.multiSelect || draft.several);

/**
 * A click (or number key) on an option. Multi-select toggles it and returns 'toggled'; a
 * single choice is the answer to the question and returns 'chosen' (go on).
 */
export function pickOption(q, draft, label) {
  if (isMulti(q, draft)) {
    if (draft.selected.has(label)) draft.selected.delete(label);
    else draft.selected.add(label);
    return 'toggled';
  }
  draft.selected = new Set([label]);
  draft.done = true;
  return 'chosen';
}

/** The "Select several" switch: turning it off forgets a selection of more than one. */
export function setSeveral(draft, several) {
  draft.several = several;
  if (!several && draft.selected.size > 1) draft.selected.clear();
}

/**
 * Reply (Send / Next / Reply with selection): marks the question done, or says what is
 * missing. A typed reply to a single-choice question is the answer (the pick is dropped).
 * @returns {string | null} the error to show, or null
 */
export function replyToQuestion(q, draft) {
  const multi = isMulti(q, draft);
  if (!multi) draft.selected.clear();
  if (draft.selected.size === 0 && !draft.text.trim()) {
    return multi ? 'Check at least one option, or type an answer.' : 'Type an answer first, or pick an option.';
  }
  draft.done = true;
  return null;
}

/** Every question's draft as the Answer the relay takes. Text only where the question takes it. */
export function answersFromDrafts(card, drafts) {
  const answers = {};
  for (const q of card.questions) {
    const d = drafts[q.id];
    const text = q.freeText ? d.text.trim() : '';
    answers[q.id] = text ? { selected: [...d.selected], text } : { selected: [...d.selected] };
  }
  return answers;
}

/** A form field's type: the card's own, else string (no options), choices or choice. */
export function fieldType(q) {
  if (q.field?.type) return q.field.type;
  if (q.options.length === 0) return 'string';
  return q.multiSelect ? 'choices' : 'choice';
}

/**
 * One form field's value, checked: {answer} or {error}. Every field needs a value; a
 * number field a finite number.
 */
export function fieldAnswer(q, { selected, text }) {
  if (selected.length === 0 && !text) return { error: `Answer “${q.header || q.text}” first.` };
  if (fieldType(q) === 'number' && !Number.isFinite(Number(text))) return { error: `“${q.header || q.text}” takes a number.` };
  return { answer: text ? { selected, text } : { selected } };
}

/**
 * The step of the question a relay error names (`question "Database" …`), or -1. The relay
 * names a question by its header, else its text clipped with "…" (src/cards/near-miss.ts);
 * an id is still recognized.
 */
export function stepNamedIn(card, message) {
  const named = /question "([^"]+)"/i.exec(message ?? '')?.[1];
  if (!named) return -1;
  const spaced = (s) => s.trim().replace(/\s+/g, ' ');
  const byText = (q) => (named.endsWith('…') ? spaced(q.text).startsWith(named.slice(0, -1)) : spaced(q.text) === named);
  return card.questions.findIndex((q) => q.id === named || (q.header?.trim() ? q.header.trim() === named : byText(q)));
}
