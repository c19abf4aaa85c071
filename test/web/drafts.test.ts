import { describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { newUi } from '../../src/server/web/card-draft.js';
import { draftOfUi, dropDraftsExcept, loadDraft, restoreUi, saveDraft } from '../../src/server/web/drafts.js';

// The page's drafts without a browser: what a card's half-typed answer saves, and how it is
// read back against the card (only its questions and options).

const card = {
  id: 'c_1',
  questions: [
    { id: 'db', text: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }], multiSelect: false, freeText: true },
    { id: 'why', text: 'Why?', options: [], multiSelect: false, freeText: true },
  ],
} as unknown as Card;

class MemoryStorage {
  private readonly items = new Map<string, string>();
  get length() {
    return this.items.size;
  }
  key(i: number) {
    return [...this.items.keys()][i] ?? null;
  }
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
}

describe('drafts', () => {
  it('save the step and each question\'s picks and words, and read them back', () => {
    const ui = newUi(card);
    ui.drafts.db.selected.add('SQLite');
    ui.drafts.db.done = true;
    ui.drafts.why.text = 'It is small';
    ui.step = 1;
    const storage = new MemoryStorage();
    saveDraft(card.id, draftOfUi(ui), storage);
    const back = newUi(card);
    restoreUi(back, card, loadDraft(card.id, storage));
    expect(back.step).toBe(1);
    expect([...back.drafts.db.selected]).toEqual(['SQLite']);
    expect(back.drafts.db.done).toBe(true);
    expect(back.drafts.why.text).toBe('It is small');
  });

  it('read back only what the card still has: its questions, its options, a step in range', () => {
    const back = newUi(card);
    restoreUi(back, card, { step: 7, questions: { db: { selected: ['MySQL', 'PostgreSQL'], text: 'x' }, gone: { selected: ['A'], text: '' } } });
    expect(back.step).toBe(0);
    expect([...back.drafts.db.selected]).toEqual(['PostgreSQL']);
    expect(Object.keys(back.drafts)).toEqual(['db', 'why']);
    restoreUi(back, card, 'not a draft' as never);
    expect([...back.drafts.db.selected]).toEqual(['PostgreSQL']);
  });

  it('an empty draft is removed, not kept; drafts of cards no longer open are dropped', () => {
    const storage = new MemoryStorage();
    saveDraft('c_1', { step: 1, questions: {} }, storage);
    saveDraft('c_1', { step: 0, questions: {} }, storage);
    expect(loadDraft('c_1', storage)).toBeNull();
    saveDraft('c_open', { step: 1, questions: {} }, storage);
    saveDraft('c_closed', { step: 1, questions: {} }, storage);
    storage.setItem('askrelay.undoSeconds', '3');
    dropDraftsExcept(new Set(['c_open']), storage);
    expect(loadDraft('c_open', storage)).not.toBeNull();
    expect(loadDraft('c_closed', storage)).toBeNull();
    expect(storage.getItem('askrelay.undoSeconds')).toBe('3');
  });
});
