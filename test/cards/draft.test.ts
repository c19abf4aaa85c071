import { describe, expect, it } from 'vitest';
import { normalizeQuestions, shownLabels } from '../../src/cards/draft.js';
import { RelayError } from '../../src/errors.js';

const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RelayError);
    return err as RelayError;
  }
  throw new Error('expected a refusal');
};

describe('normalizeQuestions', () => {
  it('gives ids q1, q2, … and turns plain strings into options', () => {
    const qs = normalizeQuestions(
      [{ text: ' Which DB? ', options: ['PostgreSQL', { label: 'SQLite', description: 'No server' }] }, { text: 'Why?' }],
      'steps',
    );
    expect(qs).toEqual([
      {
        id: 'q1',
        text: 'Which DB?',
        options: [{ label: 'PostgreSQL' }, { label: 'SQLite', description: 'No server' }],
        multiSelect: false,
        freeText: true,
      },
      { id: 'q2', text: 'Why?', options: [], multiSelect: false, freeText: true },
    ]);
  });

  it('strips an agent-authored "Other" option, since free text is always there', () => {
    const [q] = normalizeQuestions(
      [{ text: 'Pick', options: ['A', 'B', 'Other', 'other (please specify)', 'Something else…'] }],
      'steps',
    );
    expect(q.options.map((o) => o.label)).toEqual(['A', 'B']);
    expect(q.freeText).toBe(true);
  });

  it('keeps labels that merely start with "Other"', () => {
    const [q] = normalizeQuestions([{ text: 'Pick', options: ['Other database', 'Mine'] }], 'steps');
    expect(q.options.map((o) => o.label)).toEqual(['Other database', 'Mine']);
  });

  it.each([
    [[], /questions is empty/],
    [Array.from({ length: 11 }, (_, i) => ({ text: `Q${i}` })), /at most 10/],
    [[{ text: '   ' }], /questions\[0\]\.text is empty/],
    [[{ text: 'A', options: ['x', 'X '] }], /"X" twice/],
    [[{ text: 'A', options: Array.from({ length: 21 }, (_, i) => `o${i}`) }], /at most 20/],
    [[{ id: 'a', text: 'A' }, { id: 'a', text: 'B' }], /id "a" twice/],
    [[{ id: 'bad id!', text: 'A' }], /may hold only/],
    [[{ text: 'A', options: ['x'], multiSelect: true }], /multiSelect needs at least 2 options/],
    [[{ text: 'A', options: [''] }], /label is empty/],
    [[{ text: 'A', freeText: false }], /nothing could answer it/],
  ])('refuses %j with a sentence naming the field', (input, message) => {
    const err = refused(() => normalizeQuestions(input, 'steps'));
    expect(err.code).toBe('invalid_card');
    expect(err.status).toBe(422);
    expect(err.message).toMatch(message);
  });

  it('gives form questions a field type, fixed options for booleans and no free text for choices', () => {
    const qs = normalizeQuestions(
      [
        { id: 'name', text: 'Name' },
        { id: 'size', text: 'Size', options: ['S', 'M'] },
        { id: 'colors', text: 'Colors', options: ['Red', 'Green'], multiSelect: true },
        { id: 'ok', text: 'OK?', field: { type: 'boolean' } },
        { id: 'n', text: 'How many?', field: { type: 'number' } },
      ],
      'form',
    );
    expect(qs.map((q) => [q.id, q.field?.type, q.freeText, q.multiSelect])).toEqual([
      ['name', 'string', true, false],
      ['size', 'choice', false, false],
      ['colors', 'choices', false, true],
      ['ok', 'boolean', false, false],
      ['n', 'number', true, false],
    ]);
    expect(qs[3].options).toEqual([{ label: 'Yes' }, { label: 'No' }]);
  });

  it('refuses a choice field without options', () => {
    expect(refused(() => normalizeQuestions([{ text: 'X', field: { type: 'choice' } }], 'form')).message).toMatch(
      /choice field but has no options/,
    );
  });
});

describe('shownLabels (provider-owned labels shaped to fit a card)', () => {
  it('trims, cuts, names invisible labels by place, tells repeats apart and drops "Other", index for index', () => {
    const long = 'L'.repeat(250);
    expect(shownLabels([' Yes ', 'yes', '\u200b', 'Other', long, `${long}!`])).toEqual([
      'Yes',
      'yes (2)',
      'Option 3',
      undefined,
      `${'L'.repeat(199)}…`,
      `${'L'.repeat(195)}… (2)`,
    ]);
  });
});
