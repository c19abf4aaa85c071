// The undo window: an answer or skip made on the page waits this long before it goes to the
// relay, so a slip of the finger can be taken back. The relay (and the agent waiting on the
// card) sees nothing until it is sent. The setting lives in this browser only.
// holdMs is pure and unit-tested in test/web/undo.test.ts.

const KEY = 'askrelay.undoSeconds';
export const UNDO_CHOICES = [0, 3, 5, 10];
export const UNDO_DEFAULT = 5;

/**
 * @typedef {{getItem(key: string): string | null, setItem(key: string, value: string): void}} Store
 */

/**
 * The window in seconds this browser uses: its saved choice, else 5.
 * @param {Store} [storage]
 */
export function undoSeconds(storage = globalThis.localStorage) {
  const saved = storage?.getItem(KEY);
  const n = saved === null || saved === undefined ? NaN : Number(saved);
  return UNDO_CHOICES.includes(n) ? n : UNDO_DEFAULT;
}

/** @param {number} seconds @param {Store} [storage] */
export function setUndoSeconds(seconds, storage = globalThis.localStorage) {
  if (UNDO_CHOICES.includes(seconds)) storage?.setItem(KEY, String(seconds));
}

// Whatever is held is sent this long before the card's deadline at the latest.
const MARGIN_MS = 2000;

/**
 * How long to hold an answer: the window, but never so long that the card expires first
 * (an answer held past the deadline would be lost). 0: send it now.
 */
export function holdMs(seconds, expiresAt, now) {
  const window = Math.max(0, seconds) * 1000;
  const deadline = Date.parse(expiresAt);
  const room = Number.isNaN(deadline) ? window : deadline - now - MARGIN_MS;
  return Math.max(0, Math.min(window, room));
}
