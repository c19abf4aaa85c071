import { describe, expect, it } from 'vitest';
import { nearMissOf, oneEditApart, questionName } from '../../src/cards/near-miss.js';
import type { Question } from '../../src/cards/model.js';

const q = (labels: string[], extra: Partial<Question> = {}): Question => ({
  id: 'q1',
  text: 'Which database?',
  options: labels.map((label) => ({ label })),
  multiSelect: false,
  freeText: true,
  ...extra,
});

describe('oneEditApart', () => {
  it.each([
    ['sqlite', 'sqlit'], // a letter dropped
    ['sqlite', 'sqqlite'], // a letter doubled
    ['sqlite', 'sqkite'], // a letter replaced
    ['sqlite', 'slqite'], // two neighbours swapped
    ['sqlite', 'qslite'], // swapped at the start
    ['sqlite', 'sqliet'], // swapped at the end
    ['a', ''],
    ['ab', 'ba'],
  ])('%j and %j are one edit apart', (a, b) => {
    expect(oneEditApart(a, b)).toBe(true);
    expect(oneEditApart(b, a)).toBe(true);
  });

  it.each([
    ['sqlite', 'sqlite'], // the same: an exact match, not a near miss
    ['sqlite', 'sqli'], // two dropped
    ['sqlite', 'sqkitr'], // two replaced
    ['sqlite', 'lsqite'], // a letter moved two places
    ['abc', 'cba'],
    ['postgresql', 'sqlite'],
    ['', 'ab'],
  ])('%j and %j are not', (a, b) => {
    expect(oneEditApart(a, b)).toBe(false);
    expect(oneEditApart(b, a)).toBe(false);
  });
});

describe('nearMissOf', () => {
  it('finds the label one edit away, ignoring case and surrounding space', () => {
    const db = q(['PostgreSQL', 'SQLite']);
    expect(nearMissOf(db, '  sqlit ')).toBe('SQLite');
    expect(nearMissOf(db, 'POSTGRESLQ')).toBe('PostgreSQL');
    expect(nearMissOf(db, 'sqlite')).toBeUndefined(); // an exact match is the option itself
    expect(nearMissOf(db, 'mysql')).toBeUndefined();
  });

  it('never near-misses a label shorter than 4 characters', () => {
    const yes = q(['Yes', 'No', 'Maybe']);
    expect(nearMissOf(yes, 'yet')).toBeUndefined();
    expect(nearMissOf(yes, 'so')).toBeUndefined();
    expect(nearMissOf(yes, 'mabye')).toBe('Maybe');
  });
});

describe('questionName', () => {
  it('is the header, else the text clipped to 40 characters, never the id', () => {
    expect(questionName(q([], { header: ' Database ' }))).toBe('Database');
    expect(questionName(q([], { header: '  ' }))).toBe('Which database?');
    const long = questionName(q([], { text: 'Which  database\nshould the relay keep its cards in, and why?' }));
    expect(long).toBe('Which database should the relay keep it…');
    expect(long).toHaveLength(40);
  });
});
