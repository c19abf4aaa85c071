import { describe, expect, it } from 'vitest';
import { UNDO_DEFAULT, holdMs, setUndoSeconds, undoSeconds } from '../../src/server/web/undo.js';

// The page's undo window (src/server/web/undo.js): how long an answer is held, and the
// choice this browser keeps.

/** A Storage stand-in with the two calls undo.js makes. */
function memoryStorage() {
  const map = new Map<string, string>();
  return { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v), map };
}

describe('undo window', () => {
  const now = Date.parse('2026-12-01T10:00:00Z');
  const inAnHour = new Date(now + 3_600_000).toISOString();

  it('holds an answer for the window', () => {
    expect(holdMs(5, inAnHour, now)).toBe(5000);
    expect(holdMs(10, inAnHour, now)).toBe(10_000);
  });

  it('sends at once with the window off', () => {
    expect(holdMs(0, inAnHour, now)).toBe(0);
  });

  it('never holds an answer past the card’s deadline: it goes 2 s before it, or at once', () => {
    expect(holdMs(5, new Date(now + 4000).toISOString(), now)).toBe(2000);
    expect(holdMs(5, new Date(now + 1500).toISOString(), now)).toBe(0);
    expect(holdMs(5, new Date(now - 1000).toISOString(), now)).toBe(0);
  });

  it('keeps the window when the deadline cannot be read', () => {
    expect(holdMs(5, 'not a date', now)).toBe(5000);
  });

  it('is 5 s until this browser picks another choice, and ignores a choice it does not offer', () => {
    const storage = memoryStorage();
    expect(undoSeconds(storage)).toBe(UNDO_DEFAULT);
    expect(UNDO_DEFAULT).toBe(5);
    setUndoSeconds(0, storage);
    expect(undoSeconds(storage)).toBe(0);
    setUndoSeconds(7, storage);
    expect(undoSeconds(storage)).toBe(0);
    storage.map.set('askrelay.undoSeconds', 'junk');
    expect(undoSeconds(storage)).toBe(5);
  });
});
