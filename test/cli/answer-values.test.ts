import { describe, expect, it } from 'vitest';
import type { Card, Question } from '../../src/cards/model.js';
import { readValues, valuesText } from '../../src/cli/answer-values.js';

const q = (options: string[], multiSelect = false): Question => ({
  id: 'q1',
  text: 'Pick?',
  options: options.map((label) => ({ label })),
  multiSelect,
  freeText: true,
});

const card = (question: Question): Card => ({
  id: 'c_1',
  sessionId: null,
  provider: 'api',
  tool: 'cards',
  origin: 'relay',
  kind: 'question',
  layout: 'steps',
  questions: [question],
  selectSeveral: false,
  relayMode: 'autopilot',
  status: 'pending',
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T08:00:00.000Z',
});

const read = (question: Question, values: string[], text?: string) => readValues(card(question), question, values, text);

describe('valuesText', () => {
  it('lists values that are each an option, and joins anything else as a phrase', () => {
    expect(valuesText(q(['Red', 'Green', 'Blue'], true), ['3', 'red'])).toBe('3, red');
    expect(valuesText(q(['Use SQLite', 'Use Postgres']), ['use', 'sqlite'])).toBe('use sqlite');
    expect(valuesText(q(['A', 'B']), ['not', 'sure'])).toBe('not sure');
    expect(valuesText(q(['A', 'B']), [' b '])).toBe('b');
    expect(valuesText(q(['A', 'B']), ['1', '7'])).toBe('1, 7'); // a list with a slip, refused by the parser
    expect(valuesText(q(['A', 'B']), ['7', 'days'])).toBe('7 days');
  });
});

describe('readValues (through the reply parser)', () => {
  it('takes a label in any case or a 1-based number', () => {
    expect(read(q(['PostgreSQL', 'SQLite']), ['sqlite'])).toEqual({ selected: ['SQLite'] });
    expect(read(q(['PostgreSQL', 'SQLite']), ['1'])).toEqual({ selected: ['PostgreSQL'] });
  });

  it('prefers a label over a number, and refuses a number out of range unless it is --text', () => {
    expect(read(q(['1', '2', '3']), ['3'])).toEqual({ selected: ['3'] });
    // Changed with issue 17: it was the text "3".
    expect(() => read(q(['A', 'B']), ['3'])).toThrow('"3" is not one of the options of "Pick?" (1. A, 2. B)');
    expect(() => read(q(['Red', 'Green', 'Blue'], true), ['1', '7'])).toThrow('"7" is not one of the options');
    expect(read(q(['A', 'B']), [], '3')).toEqual({ selected: [], text: '3' });
  });

  it('makes anything else free text, joined with spaces and followed by --text', () => {
    expect(read(q(['A', 'B']), ['not', 'sure'])).toEqual({ selected: [], text: 'not sure' });
    // Changed with the parser: an option word inside a phrase no longer picks it.
    expect(read(q(['A', 'B']), ['b', 'maybe'], 'later')).toEqual({ selected: [], text: 'b maybe later' });
    expect(read(q(['A', 'B']), ['b'], 'later')).toEqual({ selected: ['B'], text: 'later' });
    expect(read(q(['A', 'B']), [], 'later')).toEqual({ selected: [], text: 'later' });
    expect(read(q([]), ['hello'])).toEqual({ selected: [], text: 'hello' });
  });

  it('reads several words that spell one label as that label', () => {
    expect(read(q(['Use SQLite', 'Use Postgres']), ['use', 'sqlite'])).toEqual({ selected: ['Use SQLite'] });
  });

  it('splits lists on multi-select questions, keeping unmatched parts as text', () => {
    expect(read(q(['Red', 'Green', 'Blue'], true), ['red, 3'])).toEqual({ selected: ['Red', 'Blue'] });
    expect(read(q(['Red', 'Green', 'Blue'], true), ['3', 'red'])).toEqual({ selected: ['Red', 'Blue'] });
    expect(read(q(['Red', 'Green', 'Blue'], true), ['Red; teal'])).toEqual({ selected: ['Red'], text: 'teal' });
    expect(read(q(['Salt, pepper', 'Oil'], true), ['salt, pepper'])).toEqual({ selected: ['Salt, pepper'] });
  });

  it('refuses a list of options on a single-choice question (changed with the parser: it was free text)', () => {
    expect(() => read(q(['Red', 'Green'], false), ['Red, Green'])).toThrow('Question "Pick?" takes one choice; 2 were picked.');
    expect(read(q(['Red', 'Green'], false), ['Red, or not'])).toEqual({ selected: [], text: 'Red, or not' });
  });
});
