import { describe, expect, it } from 'vitest';
import {
  answersFromDrafts, fieldAnswer, fieldType, isMulti, newUi, pickOption, replyToQuestion, setSeveral, stepNamedIn,
} from '../../src/server/web/card-draft.js';

// The page's card draft without a browser: the human's picks and typing → the Answer the
// relay takes, and the checks that stop an empty or malformed one.

type Q = { id: string; text: string; header?: string; options: { label: string }[]; multiSelect?: boolean; freeText?: boolean; field?: { type: string } };
const q = (id: string, extra: Partial<Q> = {}): Q => ({ id, text: `${id}?`, options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }], ...extra });
const card = (...questions: Q[]) => ({ questions });

describe('picking options', () => {
  it('a single choice replaces the pick and says go on', () => {
    const question = q('db');
    const ui = newUi(card(question));
    const draft = ui.drafts.db;
    expect(ui.step).toBe(0);
    expect(pickOption(question, draft, 'A')).toBe('chosen');
    expect(pickOption(question, draft, 'B')).toBe('chosen');
    expect([...draft.selected]).toEqual(['B']);
    expect(draft.done).toBe(true);
  });

  it('multi-select toggles, and so does single-select with "Select several" on', () => {
    const multi = q('m', { multiSelect: true });
    const draft = newUi(card(multi)).drafts.m;
    expect(pickOption(multi, draft, 'A')).toBe('toggled');
    expect(pickOption(multi, draft, 'C')).toBe('toggled');
    expect(pickOption(multi, draft, 'A')).toBe('toggled');
    expect([...draft.selected]).toEqual(['C']);
    expect(draft.done).toBe(false);

    const single = q('s');
    const other = newUi(card(single)).drafts.s;
    expect(isMulti(single, other)).toBe(false);
    setSeveral(other, true);
    expect(isMulti(single, other)).toBe(true);
    pickOption(single, other, 'A');
    pickOption(single, other, 'B');
    expect([...other.selected]).toEqual(['A', 'B']);
    // Switching it off forgets a selection a single choice cannot hold.
    setSeveral(other, false);
    expect(other.selected.size).toBe(0);
  });

  it('switching "Select several" off keeps a selection of one', () => {
    const single = q('s');
    const draft = newUi(card(single)).drafts.s;
    setSeveral(draft, true);
    pickOption(single, draft, 'B');
    setSeveral(draft, false);
    expect([...draft.selected]).toEqual(['B']);
  });
});

describe('replying', () => {
  it('refuses an empty reply, with the words for single and multiple choice', () => {
    const single = q('s', { freeText: true });
    expect(replyToQuestion(single, newUi(card(single)).drafts.s)).toBe('Type an answer first, or pick an option.');
    const multi = q('m', { multiSelect: true });
    const draft = newUi(card(multi)).drafts.m;
    draft.text = '   ';
    expect(replyToQuestion(multi, draft)).toBe('Check at least one option, or type an answer.');
    expect(draft.done).toBe(false);
  });

  it('a typed reply to a single-choice question is the answer: the pick is dropped', () => {
    const single = q('s', { freeText: true });
    const draft = newUi(card(single)).drafts.s;
    pickOption(single, draft, 'A');
    draft.text = 'neither';
    expect(replyToQuestion(single, draft)).toBeNull();
    expect(draft.selected.size).toBe(0);
    expect(draft.done).toBe(true);
  });

  it('a multi-select reply keeps its checks beside the text', () => {
    const multi = q('m', { multiSelect: true, freeText: true });
    const draft = newUi(card(multi)).drafts.m;
    pickOption(multi, draft, 'B');
    expect(replyToQuestion(multi, draft)).toBeNull();
    expect([...draft.selected]).toEqual(['B']);
  });
});

describe('the Answer', () => {
  it('has every question, text trimmed and only where the question takes text', () => {
    const c = card(q('a'), q('b', { freeText: true }), q('c', { freeText: true }), q('d'));
    const { drafts } = newUi(c);
    pickOption(c.questions[0], drafts.a, 'A');
    drafts.b.text = '  my own  ';
    pickOption(c.questions[2], drafts.c, 'C');
    drafts.c.text = ' ';
    drafts.d.text = 'typed where no text is taken';
    pickOption(c.questions[3], drafts.d, 'B');
    expect(answersFromDrafts(c, drafts)).toEqual({
      a: { selected: ['A'] },
      b: { selected: [], text: 'my own' },
      c: { selected: ['C'] },
      d: { selected: ['B'] },
    });
  });
});

describe('form fields', () => {
  it('take their type from the card, else from the options', () => {
    expect(fieldType(q('x', { field: { type: 'number' } }))).toBe('number');
    expect(fieldType(q('x', { options: [] }))).toBe('string');
    expect(fieldType(q('x', { multiSelect: true }))).toBe('choices');
    expect(fieldType(q('x'))).toBe('choice');
  });

  it('need a value, and a number field a finite number', () => {
    expect(fieldAnswer(q('x', { header: 'Port' }), { selected: [], text: '' })).toEqual({ error: 'Answer “Port” first.' });
    expect(fieldAnswer(q('x'), { selected: [], text: '' })).toEqual({ error: 'Answer “x?” first.' });
    const port = q('port', { header: 'Port', field: { type: 'number' }, options: [] });
    expect(fieldAnswer(port, { selected: [], text: 'abc' })).toEqual({ error: '“Port” takes a number.' });
    expect(fieldAnswer(port, { selected: [], text: '8080' })).toEqual({ answer: { selected: [], text: '8080' } });
    expect(fieldAnswer(q('x'), { selected: ['A'], text: '' })).toEqual({ answer: { selected: ['A'] } });
    expect(fieldAnswer(q('x'), { selected: ['A'], text: 'and more' })).toEqual({ answer: { selected: ['A'], text: 'and more' } });
  });
});

it('finds the step of the question a relay error names', () => {
  const c = card(q('db'), q('cache'));
  expect(stepNamedIn(c, 'Answer for question "cache" is not one of its options.')).toBe(1);
  expect(stepNamedIn(c, 'Answer for question "nope" is wrong.')).toBe(-1);
  // The relay names a question by its header, else its text (clipped with "…").
  const named = card(q('db', { header: 'Database' }), q('cache', { text: 'Which   cache should the relay keep in front of the store?' }));
  expect(stepNamedIn(named, 'Question "Database" takes one choice; 2 were picked.')).toBe(0);
  expect(stepNamedIn(named, 'The answer to question "Which cache should the relay keep in fr…" is empty')).toBe(1);
  expect(stepNamedIn(named, 'Question "Which cache should the relay keep in front of the store?" takes one choice')).toBe(1);
  expect(stepNamedIn(c, 'Something else.')).toBe(-1);
  expect(stepNamedIn(c, undefined)).toBe(-1);
});
