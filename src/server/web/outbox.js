// Answers (and skips) the page has taken and the relay has not yet: held for the undo window,
// or given while the relay was unreachable. Kept in this browser, so a reload or a closed tab
// does not lose them, and sent once the relay is back, each with its own Idempotency-Key: a
// second send of the same answer is the same answer to the relay, never a second one.
// Storage only, unit-tested in test/web/outbox.test.ts; card-actions.js sends.

const KEY = 'askrelay.outbox';

/**
 * @typedef {{cardId: string, action: 'answer' | 'skip', json?: any, key: string, label: string}} OutItem
 * @typedef {{getItem(key: string): string | null, setItem(key: string, value: string): void}} Store
 */

/** A key for one answer: sent with each try of it. */
export const newKey = () => (globalThis.crypto?.randomUUID?.() ?? `k-${Date.now()}-${Math.random().toString(36).slice(2)}`);

/** @param {Store} [storage] @returns {OutItem[]} */
export function outbox(storage = globalThis.localStorage) {
  try {
    const items = JSON.parse(storage?.getItem(KEY) ?? '[]');
    return Array.isArray(items) ? items.filter((i) => i && typeof i.cardId === 'string' && typeof i.key === 'string') : [];
  } catch {
    return [];
  }
}

function write(items, storage) {
  try {
    storage?.setItem(KEY, JSON.stringify(items));
  } catch {
    /* storage full or off: the answer lives as long as the page */
  }
}

/** Keeps the card's item (one per card: a newer one replaces it). @param {OutItem} item @param {Store} [storage] */
export function keep(item, storage = globalThis.localStorage) {
  write([...outbox(storage).filter((i) => i.cardId !== item.cardId), item], storage);
}

/** The card's item, taken out (sent, undone, or refused for good). @param {Store} [storage] */
export function take(cardId, storage = globalThis.localStorage) {
  const items = outbox(storage);
  const item = items.find((i) => i.cardId === cardId);
  if (item) write(items.filter((i) => i.cardId !== cardId), storage);
  return item;
}
