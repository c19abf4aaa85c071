import { describe, expect, it } from 'vitest';
import type { Card, Question } from '../../src/cards/model.js';
import { render, remaining } from '../../src/cli/tui/render.js';
import { initialState, reduce, type Effect, type Input, type Key, type TuiState } from '../../src/cli/tui/state.js';

function question(id: string, text: string, options: string[], multiSelect = false): Question {
  return { id, text, options: options.map((label) => ({ label })), multiSelect, freeText: true };
}

function card(id: string, questions: Question[], extra: Partial<Card> = {}): Card {
  return {
    id,
    sessionId: null,
    provider: 'api',
    tool: 'ask',
    origin: 'relay',
    kind: 'question',
    layout: 'steps',
    questions,
    selectSeveral: false,
    relayMode: 'manual',
    status: 'pending',
    createdAt: `2026-01-01T00:00:0${id.length % 10}.000Z`,
    expiresAt: '2026-01-01T08:00:00.000Z',
    ...extra,
  };
}

const k = (name: Key['name'], ch?: string): Input => ({ type: 'key', key: ch === undefined ? { name } : { name, ch } });
const chars = (text: string): Input[] => [...text].map((c) => (c === ' ' ? k('space') : k('char', c)));

/** Runs inputs from a state; returns the last state and every effect. */
function run(start: TuiState, inputs: Input[]): { state: TuiState; effects: Effect[] } {
  let state = start;
  const effects: Effect[] = [];
  for (const input of inputs) {
    const step = reduce(state, input);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const single = card('c-single', [question('db', 'Which database?', ['sqlite', 'postgres', 'mysql'])]);
const multi = card('c-multi', [question('langs', 'Which languages?', ['ts', 'go', 'rust'], true)]);
const two = card('c-two-questions', [question('db', 'Which database?', ['sqlite', 'postgres']), question('name', 'Project name?', [])]);
const loaded = (...cards: Card[]) => reduce(initialState(), { type: 'cards', cards }).state;

describe('tui state: list', () => {
  it('lists pending cards oldest first and opens one with Enter', () => {
    const s = loaded(multi, single);
    expect(s.cards.map((c) => c.id)).toEqual(['c-multi', 'c-single']);
    const { state } = run(s, [k('down'), k('enter')]);
    expect(state.open?.cardId).toBe('c-single');
  });

  it('a number key opens that card; q quits', () => {
    expect(run(loaded(single, multi), [k('char', '2')]).state.open?.cardId).toBe('c-single');
    expect(run(loaded(single), [k('char', 'q')]).effects).toEqual([{ type: 'quit' }]);
    expect(run(loaded(single), [k('enter'), k('ctrl-c')]).effects).toEqual([{ type: 'quit' }]);
  });
});

describe('tui state: answering', () => {
  it('single choice: arrows and Enter', () => {
    const { effects } = run(loaded(single), [k('enter'), k('down'), k('enter')]);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-single', answers: { db: { selected: ['postgres'] } } }]);
  });

  it('single choice: a number key picks at once', () => {
    const { state, effects } = run(loaded(single), [k('enter'), k('char', '3')]);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-single', answers: { db: { selected: ['mysql'] } } }]);
    expect(state.open?.sending).toBe('answer');
    // keys are ignored while sending
    expect(run(state, [k('char', '1'), k('escape')]).effects).toEqual([]);
  });

  it('multi-select: space and numbers toggle, Enter sends in option order', () => {
    const { effects } = run(loaded(multi), [k('enter'), k('char', '3'), k('up'), k('up'), k('space'), k('char', '2'), k('char', '2'), k('enter')]);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-multi', answers: { langs: { selected: ['ts', 'rust'] } } }]);
  });

  it('multi-select: Enter with nothing checked sends the option under the cursor', () => {
    const { effects } = run(loaded(multi), [k('enter'), k('down'), k('enter')]);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-multi', answers: { langs: { selected: ['go'] } } }]);
  });

  it('Other… types free text (backspace works, Esc goes back to the options)', () => {
    const { effects } = run(loaded(single), [k('enter'), k('char', '4'), ...chars('duckdbx'), k('backspace'), k('enter')]);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-single', answers: { db: { selected: [] , text: 'duckdb' } } }]);
    const back = run(loaded(single), [k('enter'), k('char', '4'), ...chars('x'), k('escape')]).state;
    expect(back.open?.typing).toBeUndefined();
    expect(back.open?.cardId).toBe('c-single');
  });

  it('Other… on multi-select keeps the checked options with the text', () => {
    const { effects } = run(loaded(multi), [k('enter'), k('char', '1'), k('char', '4'), ...chars('zig too'), k('enter')]);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-multi', answers: { langs: { selected: ['ts'], text: 'zig too' } } }]);
  });

  it('empty free text is not sent', () => {
    const { effects, state } = run(loaded(single), [k('enter'), k('char', '4'), k('enter')]);
    expect(effects).toEqual([]);
    expect(state.notice).toMatch(/Type an answer/);
  });

  it('Skip declines', () => {
    const { effects } = run(loaded(single), [k('enter'), k('up'), k('enter')]);
    expect(effects).toEqual([{ type: 'skip', cardId: 'c-single' }]);
    expect(run(loaded(single), [k('enter'), k('char', '5')]).effects).toEqual([{ type: 'skip', cardId: 'c-single' }]);
  });

  it('Esc returns to the list without answering', () => {
    const { state, effects } = run(loaded(single), [k('enter'), k('down'), k('escape')]);
    expect(effects).toEqual([]);
    expect(state.open).toBeUndefined();
    expect(state.cards).toHaveLength(1);
  });

  it('several questions advance one at a time and send one answer', () => {
    const mid = run(loaded(two), [k('enter'), k('char', '2')]);
    expect(mid.effects).toEqual([]);
    expect(mid.state.open?.step).toBe(1);
    // the second question has no options: typing starts at once
    expect(mid.state.open?.typing).toBe('');
    const { effects } = run(mid.state, [...chars('askrelay'), k('enter')]);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-two-questions', answers: { db: { selected: ['postgres'] }, name: { selected: [], text: 'askrelay' } } }]);
  });

  it('a sent answer removes the card; a failure lets the user try again', () => {
    const sending = run(loaded(single), [k('enter'), k('char', '1')]).state;
    const done = reduce(sending, { type: 'sent', card: { ...single, status: 'answered' } }).state;
    expect(done.cards).toEqual([]);
    expect(done.open).toBeUndefined();
    expect(done.notice).toMatch(/^Answered/);
    const failed = reduce(sending, { type: 'failed', cardId: single.id, message: 'nope' }).state;
    expect(failed.open?.sending).toBeUndefined();
    expect(failed.notice).toBe('Could not send: nope');
    expect(run(failed, [k('char', '2')]).effects).toEqual([{ type: 'answer', cardId: single.id, answers: { db: { selected: ['postgres'] } } }]);
  });
});

describe('tui state: live updates', () => {
  it('a new card appears in the list', () => {
    const s = reduce(loaded(single), { type: 'card', card: multi }).state;
    expect(s.cards.map((c) => c.id)).toContain('c-multi');
  });

  it.each([
    ['answered', /answered elsewhere/],
    ['expired', /expired/],
    ['cancelled', /cancelled/],
  ] as const)('an open card %s elsewhere closes with a line saying so', (status, line) => {
    const open = run(loaded(single, multi), [k('enter')]).state;
    const s = reduce(open, { type: 'card', card: { ...open.cards[0], status } }).state;
    expect(s.open).toBeUndefined();
    expect(s.cards).toHaveLength(1);
    expect(s.notice).toMatch(line);
  });

  it('a reload after a reconnect closes an open card that is gone', () => {
    const open = run(loaded(single), [k('enter')]).state;
    const lost = reduce(open, { type: 'connection', connection: 'lost', reason: 'ECONNREFUSED' }).state;
    expect(lost.notice).toMatch(/reconnecting/);
    const reloaded = run(lost, [{ type: 'cards', cards: [multi] }, { type: 'connection', connection: 'live' }]).state;
    expect(reloaded.open).toBeUndefined();
    expect(reloaded.cards.map((c) => c.id)).toEqual(['c-multi']);
    expect(reloaded.notice).toMatch(/Reconnected/);
  });
});

describe('tui render', () => {
  it('shows the question, numbered options, Other…, Skip and the time left', () => {
    const now = Date.parse('2026-01-01T07:58:30.000Z');
    const s = run(loaded(multi), [k('enter'), k('char', '2')]).state;
    const text = render(s, now).join('\n');
    expect(text).toContain('Which languages?');
    expect(text).toContain('> 2. [x] go');
    expect(text).toContain('4. Other…');
    expect(text).toContain('5. Skip');
    expect(text).toContain('1:30 left');
    expect(remaining(multi, Date.parse('2026-01-01T00:00:00.000Z'))).toBe('8:00:00 left');
  });
});
