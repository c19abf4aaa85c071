import { describe, expect, it } from 'vitest';
import type { Question } from '../../src/cards/model.js';
import { readValues } from '../../src/cli/answer-values.js';

const q = (options: string[], multiSelect = false): Question => ({
  id: 'q1',
  text: 'Pick?',
  options: options.map((label) => ({ label })),
  multiSelect,
  freeText: true,
});

describe('readValues', () => {
  it('takes a label in any case or a 1-based number', () => {
    expect(readValues(q(['PostgreSQL', 'SQLite']), ['sqlite'])).toEqual({ selected: ['SQLite'] });
    expect(readValues(q(['PostgreSQL', 'SQLite']), ['1'])).toEqual({ selected: ['PostgreSQL'] });
  });

  it('prefers a label over a number, and a number out of range is text', () => {
    expect(readValues(q(['1', '2', '3']), ['3'])).toEqual({ selected: ['3'] });
    expect(readValues(q(['A', 'B']), ['3'])).toEqual({ selected: [], text: '3' });
  });

  it('makes anything else free text, joined with spaces and followed by --text', () => {
    expect(readValues(q(['A', 'B']), ['not', 'sure'])).toEqual({ selected: [], text: 'not sure' });
    expect(readValues(q(['A', 'B']), ['b', 'maybe'], 'later')).toEqual({ selected: ['B'], text: 'maybe later' });
    expect(readValues(q([]), ['hello'])).toEqual({ selected: [], text: 'hello' });
  });

  it('reads several words that spell one label as that label', () => {
    expect(readValues(q(['Use SQLite', 'Use Postgres']), ['use', 'sqlite'])).toEqual({ selected: ['Use SQLite'] });
  });

  it('splits on "," only on multi-select questions, keeping unmatched parts as text', () => {
    expect(readValues(q(['Red', 'Green', 'Blue'], true), ['red, 3'])).toEqual({ selected: ['Red', 'Blue'] });
    expect(readValues(q(['Red', 'Green', 'Blue'], true), ['Red, teal'])).toEqual({ selected: ['Red'], text: 'teal' });
    expect(readValues(q(['Red', 'Green'], false), ['Red, Green'])).toEqual({ selected: [], text: 'Red, Green' });
    expect(readValues(q(['Salt, pepper', 'Oil'], true), ['salt, pepper'])).toEqual({ selected: ['Salt, pepper'] });
  });
});
