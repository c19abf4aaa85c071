import { describe, expect, it } from 'vitest';
import { checkAnswer, sameAnswer } from '../../src/cards/answer.js';
import { normalizeQuestions } from '../../src/cards/draft.js';
import type { Card } from '../../src/cards/model.js';
import { findCredential } from '../../src/cards/secrets.js';
import { cardOf } from '../support/card-fixture.js';
import { codeOf } from '../support/refusal.js';

const card = (overrides: Partial<Card> = {}) =>
  cardOf(
    [
      { id: 'db', text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] },
      { id: 'extras', text: 'Extras?', options: ['Cache', 'Queue', 'Search'], multiSelect: true },
    ],
    overrides,
  );


describe('checkAnswer', () => {
  it('returns the canonical form: option spelling, option order, trimmed text', () => {
    const answer = checkAnswer(card(), {
      db: { selected: ['sqlite'] },
      extras: { selected: ['Search', 'cache', 'Search'], text: '  and a CDN ' },
    });
    expect(answer).toEqual({ db: { selected: ['SQLite'] }, extras: { selected: ['Cache', 'Search'], text: 'and a CDN' } });
  });

  it('takes free text alone, with nothing picked', () => {
    expect(checkAnswer(card(), { db: { selected: [], text: 'MySQL' }, extras: { selected: ['Queue'] } }).db).toEqual({
      selected: [],
      text: 'MySQL',
    });
  });

  it.each([
    ['an unknown question', { db: { selected: ['SQLite'] }, extras: { selected: ['Cache'] }, nope: { selected: [] } }, 'unknown_question'],
    ['a missing question', { db: { selected: ['SQLite'] } }, 'missing_answer'],
    ['a label that is not an option', { db: { selected: ['MySQL'] }, extras: { selected: ['Cache'] } }, 'unknown_option'],
    ['two picks on single choice', { db: { selected: ['SQLite', 'PostgreSQL'] }, extras: { selected: ['Cache'] } }, 'too_many_choices'],
    ['an empty entry', { db: { selected: [], text: '  ' }, extras: { selected: ['Cache'] } }, 'empty_answer'],
    ['an API key', { db: { selected: [], text: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz' }, extras: { selected: ['Cache'] } }, 'credential_refused'],
  ])('refuses %s', (_name, answer, code) => {
    expect(codeOf(() => checkAnswer(card(), answer))).toBe(code);
  });

  it('lets a single-choice question take several picks when the card has Select several on', () => {
    const answer = checkAnswer(card({ selectSeveral: true }), {
      db: { selected: ['SQLite', 'PostgreSQL'] },
      extras: { selected: ['Cache'] },
    });
    expect(answer.db.selected).toEqual(['PostgreSQL', 'SQLite']);
  });

  it('refuses free text where the question takes only its options, and non-numbers for number fields', () => {
    const form = card({
      layout: 'form',
      questions: normalizeQuestions(
        [
          { id: 'size', text: 'Size', options: ['S', 'M'] },
          { id: 'n', text: 'How many', field: { type: 'number' } },
        ],
        'form',
      ),
    });
    expect(codeOf(() => checkAnswer(form, { size: { selected: [], text: 'XL' }, n: { selected: [], text: '3' } }))).toBe(
      'free_text_not_allowed',
    );
    expect(codeOf(() => checkAnswer(form, { size: { selected: ['S'] }, n: { selected: [], text: 'three' } }))).toBe(
      'invalid_answer',
    );
    expect(checkAnswer(form, { size: { selected: ['S'] }, n: { selected: [], text: '3' } })).toEqual({
      size: { selected: ['S'] },
      n: { selected: [], text: '3' },
    });
  });

  it('compares canonical answers exactly', () => {
    const a = { db: { selected: ['SQLite'] } };
    expect(sameAnswer(a, { db: { selected: ['SQLite'] } })).toBe(true);
    expect(sameAnswer(a, { db: { selected: ['SQLite'], text: 'x' } })).toBe(false);
    expect(sameAnswer(a, { db: { selected: ['PostgreSQL'] } })).toBe(false);
    expect(sameAnswer(a, {})).toBe(false);
  });
});

describe('findCredential', () => {
  it.each([
    'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx',
    'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    'AKIAIOSFODNN7EXAMPLE',
    '-----BEGIN OPENSSH PRIVATE KEY-----\nabc',
    'xoxb-1234567890-abcdefghij',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    'the password: hunter2hunter2',
    'Authorization: Bearer abcdefghijklmnopqrstuvwxyz',
  ])('flags %s', (text) => {
    expect(findCredential(text)).toBeDefined();
  });

  it.each([
    'PostgreSQL',
    'use commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39',
    '/home/me/.ssh/config',
    'https://example.com/path?x=1',
    'meet at 14:30',
    'the token bucket should hold 10',
    'sk-learn is a library',
  ])('lets %s through', (text) => {
    expect(findCredential(text)).toBeUndefined();
  });
});
