// Half-typed answers kept in this browser, per card: the picks and words of each question,
// the step a steps card shows, a form's field values. They survive switching cards, closing
// the page and reloads, and go when the card closes. The pure parts (what is saved, and how it
// is read back against the card as it is now) are unit-tested in test/web/drafts.test.ts.

const PREFIX = 'askrelay.draft.';

/**
 * @typedef {{getItem(key: string): string | null, setItem(key: string, value: string): void,
 *   removeItem(key: string): void, key(i: number): string | null, length: number}} Store
 * @typedef {{selected: string[], text: string, several?: boolean, done?: boolean}} SavedQuestion
 * @typedef {{step: number, questions: Record<string, SavedQuestion>}} SavedDraft
 */

/** What a steps card's UI state saves: the step, and each question's picks and words. */
export function draftOfUi(ui) {
  /** @type {Record<string, SavedQuestion>} */
  const questions = {};
  for (const [id, d] of Object.entries(ui.drafts)) {
    if (d.selected.size || d.text || d.several) questions[id] = { selected: [...d.selected], text: d.text, several: d.several, done: d.done };
  }
  return { step: ui.step, questions };
}

/**
 * A saved draft read back against the card: only its questions, only labels that are still
 * options, the step within range. Fills `ui` in place.
 */
export function restoreUi(ui, card, saved) {
  if (!saved || typeof saved !== 'object') return;
  for (const q of card.questions) {
    const s = saved.questions?.[q.id];
    const d = ui.drafts[q.id];
    if (!s || !d) continue;
    const labels = new Set(q.options.map((o) => o.label));
    d.selected = new Set((Array.isArray(s.selected) ? s.selected : []).filter((l) => labels.has(l)));
    d.text = typeof s.text === 'string' ? s.text : '';
    d.several = Boolean(s.several);
    d.done = Boolean(s.done);
  }
  const step = Number(saved.step);
  ui.step = Number.isInteger(step) && step >= 0 && step < card.questions.length ? step : 0;
}

/** Whether a draft holds anything worth keeping. */
export const isEmpty = (draft) => Object.keys(draft.questions).length === 0 && !draft.step;

/** @param {Store} [storage] */
export function saveDraft(cardId, draft, storage = globalThis.localStorage) {
  try {
    if (isEmpty(draft)) storage?.removeItem(PREFIX + cardId);
    else storage?.setItem(PREFIX + cardId, JSON.stringify(draft));
  } catch {
    /* storage full or off: the draft lives as long as the page */
  }
}

/** @param {Store} [storage] @returns {SavedDraft | null} */
export function loadDraft(cardId, storage = globalThis.localStorage) {
  try {
    const text = storage?.getItem(PREFIX + cardId);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** @param {Store} [storage] */
export function dropDraft(cardId, storage = globalThis.localStorage) {
  storage?.removeItem(PREFIX + cardId);
}

/** Drafts of cards no longer open (closed while the page was away). @param {Store} [storage] */
export function dropDraftsExcept(openIds, storage = globalThis.localStorage) {
  if (!storage) return;
  const keys = [];
  for (let i = 0; i < storage.length; i++) {
    const key = storage.key(i);
    if (key?.startsWith(PREFIX) && !openIds.has(key.slice(PREFIX.length))) keys.push(key);
  }
  keys.forEach((key) => storage.removeItem(key));
}
