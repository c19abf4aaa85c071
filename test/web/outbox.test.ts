import { describe, expect, it } from 'vitest';
import { keep, newKey, outbox, take } from '../../src/server/web/outbox.js';

// The page's outbox without a browser: one item per card, kept until taken out, and a stored
// value that is not an outbox read as empty.

class MemoryStorage {
  private readonly items = new Map<string, string>();
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
}

describe('the outbox', () => {
  it('keeps one item per card, the newest, until it is taken out', () => {
    const storage = new MemoryStorage();
    const first = { cardId: 'c_1', action: 'answer' as const, json: { answers: { q1: { selected: ['A'] } } }, key: newKey(), label: 'Answered: A' };
    const second = { ...first, key: newKey(), label: 'Answered: B' };
    const other = { cardId: 'c_2', action: 'skip' as const, key: newKey(), label: 'Skipped' };
    keep(first, storage);
    keep(other, storage);
    keep(second, storage);
    expect(outbox(storage).map((i) => i.label)).toEqual(['Skipped', 'Answered: B']);
    expect(take('c_1', storage)).toEqual(second);
    expect(take('c_1', storage)).toBeUndefined();
    expect(outbox(storage)).toEqual([other]);
    expect(second.key).not.toBe(first.key);
  });

  it('reads anything else stored under its name as empty', () => {
    const storage = new MemoryStorage();
    for (const junk of ['not json', '{"a":1}', '[1, {"cardId": 3}]']) {
      storage.setItem('askrelay.outbox', junk);
      expect(outbox(storage)).toEqual([]);
    }
  });
});
