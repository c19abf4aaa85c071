import { emitKeypressEvents } from 'node:readline';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Card, Question } from '../../src/cards/model.js';
import { questionLines, render, remaining, wrap } from '../../src/cli/tui/render.js';
import { toKeys } from '../../src/cli/tui/tui-command.js';
import { RESOLVED_KEPT, SCROLL_STEP, initialState, reduce, type Effect, type Input, type Key, type TuiState } from '../../src/cli/tui/state.js';

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

const typed = (text: string): Input[] => [...chars(text), k('enter')];
const answeredWith = (c: Card, answer: Card['answer']): Card => ({ ...c, status: 'answered', answer });

describe('tui state: the input line, /question and typed replies', () => {
  it('Esc collapses the card (draft kept) and shows a one-line indicator; /question reopens it', () => {
    const collapsed = run(loaded(single, multi), [k('char', '1'), k('char', '1'), k('char', '3'), k('escape')]).state;
    expect(collapsed.open).toBeUndefined();
    expect(collapsed.collapsed).toMatchObject({ cardId: 'c-multi', checked: ['ts', 'rust'] });
    const screen = render(collapsed, Date.parse('2026-01-01T00:00:00.000Z')).join('\n');
    // Both pending cards are counted, not only the questions of the one left open.
    expect(screen).toContain('2 cards waiting · /question reopens the one you left: Which languages?');
    expect(screen).toContain('› _');
    const { state, effects } = run(collapsed, typed('/question'));
    expect(effects).toEqual([]);
    expect(state.open).toMatchObject({ cardId: 'c-multi', checked: ['ts', 'rust'] });
    expect(state.input).toBe('');
    expect(render(state, 0).join('\n')).toContain('> 3. [x] rust');
    // Enter sends the resumed draft
    expect(run(state, [k('enter')]).effects).toEqual([{ type: 'answer', cardId: 'c-multi', answers: { langs: { selected: ['ts', 'rust'] } } }]);
  });

  it('a multi-question card collapsed on its second question resumes there with the first answer kept', () => {
    const collapsed = run(loaded(two), [k('enter'), k('char', '1'), ...chars('ask'), k('escape')]).state;
    expect(collapsed.open).toBeUndefined();
    expect(render(collapsed, 0).join('\n')).toContain('1 card waiting · /question reopens the one you left: Which database?');
    const { state, effects } = run(collapsed, [...typed('/question'), ...chars('relay'), k('enter')]);
    expect(state.open?.step).toBe(1);
    expect(effects).toEqual([{ type: 'answer', cardId: 'c-two-questions', answers: { db: { selected: ['sqlite'] }, name: { selected: [], text: 'askrelay' } } }]);
  });

  it('/question with nothing collapsed opens the oldest card; /question N the Nth; none pending says so', () => {
    expect(run(loaded(multi, single), typed('/question')).state.open?.cardId).toBe('c-multi');
    expect(run(loaded(multi, single), typed('/question 2')).state.open?.cardId).toBe('c-single');
    const tooFar = run(loaded(multi, single), typed('/question 3')).state;
    expect(tooFar.open).toBeUndefined();
    expect(tooFar.notice).toMatch(/^No card "3": the list has 2 cards \(1-2\)/);
    expect(tooFar.input).toBe('/question 3'); // kept to be corrected
    const none = run(loaded(), typed('/question')).state;
    expect(none.open).toBeUndefined();
    expect(none.notice).toBe('No question is waiting.');
    expect(render(none, 0).join('\n')).toContain('No question is waiting.');
    const unknown = run(loaded(single), typed('/qestion')).state;
    expect(unknown.notice).toMatch(/^Unknown command "\/qestion"/);
    expect(run(loaded(single), typed('/quit')).effects).toEqual([{ type: 'quit' }]);
  });

  it('digits and q are commands only on an empty line; otherwise they are typed', () => {
    // one card: "2" is no card, so it starts the line; then "1" and "q" are typed too
    const s = run(loaded(single), [k('char', '2'), k('char', '1'), k('char', 'q')]).state;
    expect(s.open).toBeUndefined();
    expect(s.quit).toBeUndefined();
    expect(s.input).toBe('21q');
    // arrows still move the list while typing; Backspace deletes; Esc clears the line
    expect(run(loaded(single, multi), [k('char', 'x'), k('down')]).state).toMatchObject({ listIndex: 1, input: 'x' });
    expect(run(s, [k('backspace')]).state.input).toBe('21');
    expect(run(s, [k('escape')]).state.input).toBe('');
    // a leading space makes a digit or q text; it is trimmed when sent
    const spaced = run(loaded(single), [k('space'), k('char', '1'), k('enter')]);
    expect(spaced.effects).toEqual([{ type: 'reply', cardId: 'c-single', text: '1' }]);
    expect(run(loaded(single), [k('char', '1')]).state.open?.cardId).toBe('c-single');
  });

  it('a typed reply answers the collapsed card, else the oldest, through the reply route', () => {
    const oldest = run(loaded(single, multi), typed('postgres'));
    expect(oldest.effects).toEqual([{ type: 'reply', cardId: 'c-multi', text: 'postgres' }]);
    const collapsed = run(loaded(single, multi), [k('char', '2'), k('escape')]).state;
    expect(collapsed.collapsed?.cardId).toBe('c-single');
    const { state, effects } = run(collapsed, typed('  postgres '));
    expect(effects).toEqual([{ type: 'reply', cardId: 'c-single', text: 'postgres' }]);
    expect(state.input).toBe('');
    expect(state.replying).toEqual({ cardId: 'c-single', text: 'postgres' });
    // the relay's answer (event first, then the POST's result): one compact resolution line
    const answered = answeredWith(single, { db: { selected: ['postgres'] } });
    const done = run(state, [{ type: 'card', card: answered }, { type: 'sent', card: answered }]).state;
    expect(done.cards.map((c) => c.id)).toEqual(['c-multi']);
    expect(done.collapsed).toBeUndefined();
    expect(done.replying).toBeUndefined();
    expect(done.resolved.map((r) => r.line)).toEqual(['Answered c-single: postgres']);
    const text = render(done, 0);
    expect(text.filter((l) => l === 'Answered c-single: postgres')).toHaveLength(1);
    expect(text.join('\n')).not.toContain('reopens the one you left');
  });

  it('a refused reply comes back to the input line with the reason', () => {
    const sending = run(loaded(single), typed('redis')).state;
    const failed = reduce(sending, { type: 'failed', cardId: 'c-single', message: 'Question "db" takes one choice; 2 were picked.' }).state;
    expect(failed.replying).toBeUndefined();
    expect(failed.input).toBe('redis');
    expect(failed.notice).toBe('Could not answer c-single: Question "db" takes one choice; 2 were picked.');
  });

  it('no card pending: a typed reply is kept and the user told', () => {
    const { state, effects } = run(loaded(), typed('hello'));
    expect(effects).toEqual([]);
    expect(state.input).toBe('hello');
    expect(state.notice).toBe('No question is waiting; nothing to answer.');
  });
});

describe('tui state: resolution notices', () => {
  it('keeps one compact line per closed card, the last few, here and elsewhere', () => {
    const cards = ['c-a', 'c-bb', 'c-ccc', 'c-dddd', 'c-eeeee', 'c-ffffff'].map((id) => card(id, [question('q1', `Question ${id}?`, ['yes', 'no'])]));
    let s = loaded(...cards);
    // answered here with a number key
    s = run(s, [k('char', '1'), k('char', '2')]).state;
    s = reduce(s, { type: 'sent', card: answeredWith(cards[0], { q1: { selected: ['no'] } }) }).state;
    expect(s.notice).toBe('Answered c-a: no');
    s = reduce(s, { type: 'card', card: answeredWith(cards[1], { q1: { selected: [], text: 'maybe later' } }) }).state;
    s = reduce(s, { type: 'card', card: { ...cards[2], status: 'skipped' } }).state;
    s = reduce(s, { type: 'card', card: { ...cards[3], status: 'expired' } }).state;
    s = reduce(s, { type: 'card', card: { ...cards[4], status: 'cancelled' } }).state;
    // skipped from the card itself
    s = run(s, [k('enter'), k('char', '4')]).state;
    s = reduce(s, { type: 'sent', card: { ...cards[5], status: 'skipped' } }).state;
    expect(s.cards).toEqual([]);
    const lines = s.resolved.map((r) => r.line);
    expect(lines).toHaveLength(RESOLVED_KEPT);
    expect(lines).toEqual([
      'Card c-bb was answered elsewhere: maybe later',
      'Card c-ccc was skipped elsewhere.',
      'Card c-dddd expired before it was answered.',
      'Card c-eeeee was cancelled.',
      'Skipped c-ffffff.',
    ]);
    const screen = render(s, 0);
    expect(screen.slice(-RESOLVED_KEPT)).toEqual(lines);
  });

  it('a card closing while another is open waits in the list and leaves the open card alone', () => {
    const open = run(loaded(single, multi), [k('char', '1')]).state;
    expect(open.open?.cardId).toBe('c-multi');
    const s = reduce(open, { type: 'card', card: { ...single, status: 'expired' } }).state;
    expect(s.open?.cardId).toBe('c-multi');
    expect(s.notice).toBeUndefined();
    expect(render(run(s, [k('escape')]).state, 0)).toContain('Card c-single expired before it was answered.');
  });

  it('multi-question answers are summed up per question; cards gone after a reconnect are noted', () => {
    const answered = answeredWith(two, { db: { selected: ['sqlite'] }, name: { selected: [], text: 'askrelay' } });
    expect(reduce(loaded(two), { type: 'card', card: answered }).state.notice).toBe('Card c-two-questions was answered elsewhere: db: sqlite; name: askrelay');
    const reloaded = reduce(loaded(single, multi), { type: 'cards', cards: [multi] }).state;
    expect(reloaded.resolved.map((r) => r.line)).toEqual(['Card c-single is no longer pending.']);
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
    expect(text).toContain('1m 30s left');
    expect(remaining(multi, Date.parse('2026-01-01T00:00:00.000Z'))).toBe('8h 0m left');
  });
});

describe('tui render: long cards, words-only questions, going back', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');
  const long = card('c-long', [
    question('db', Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of the question.`).join('\n'), ['sqlite', 'postgres', 'mysql']),
  ]);

  it('keeps the status line on top and the keys at the bottom when the card is taller than the terminal', () => {
    const s = run(loaded(long), [k('enter')]).state;
    const lines = render(s, now, 80, 20);
    expect(lines).toHaveLength(20);
    expect(lines[0]).toBe('askrelay tui — card c-long · 8h 0m left · connecting…');
    expect(lines[2]).toBe('Line 1 of the question.');
    expect(lines.some((l) => /↓ \d+ more lines \(PgDn\)/.test(l))).toBe(true);
    expect(lines.at(-1)).toContain('↑↓ move · 1-9 or Enter pick');
    // The cursor moved onto an option below the fold: the card scrolls to show it, the status line stays.
    const down = run(s, [k('down')]).state;
    const moved = render(down, now, 80, 20);
    expect(moved).toHaveLength(20);
    expect(moved[0]).toBe(lines[0]);
    expect(moved).toContain('> 2. postgres');
    expect(moved.some((l) => /↑ \d+ more lines \(PgUp\)/.test(l))).toBe(true);
  });

  it('scrolls with PgDn and PgUp', () => {
    const s = run(loaded(long), [k('enter'), k('pagedown')]).state;
    expect(s.open?.scroll).toBe(SCROLL_STEP);
    const lines = render(s, now, 80, 20);
    expect(lines[3]).toBe(`Line ${SCROLL_STEP + 1} of the question.`);
    expect(run(s, [k('pageup'), k('pageup')]).state.open?.scroll).toBe(0);
  });

  it('cuts a long line to the width, and e shows it whole', () => {
    const wide = card('c-wide', [question('q', `Which one? ${'word '.repeat(40)}end`, ['a', 'b'])]);
    const cut = render(run(loaded(wide), [k('enter')]).state, now, 60);
    expect(cut[2]).toHaveLength(60);
    expect(cut.join('\n')).not.toContain('end');
    const whole = render(run(loaded(wide), [k('enter'), k('char', 'e')]).state, now, 60);
    expect(whole.join('\n')).toContain('end');
    expect(whole.every((l) => l.length <= 60)).toBe(true);
    expect(whole.join('\n')).toContain('e cut long lines');
  });

  it('wraps at spaces, and cuts a word longer than the width', () => {
    expect(wrap('one two three', 8)).toEqual(['one two', 'three']);
    expect(wrap('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
  });

  it('shows a fenced code block indented, without its fences, and the rest as it was written', () => {
    expect(questionLines('Run **this**?\n```sh\nrm -rf build\n```\nOK?')).toEqual(['Run **this**?', '    rm -rf build', 'OK?']);
  });

  it('a question without options is a text prompt, not "1. Other… 2. Skip"; /skip skips it', () => {
    const words = card('c-words', [question('name', 'Project name?', [])]);
    const s = run(loaded(words), [k('enter')]).state;
    const text = render(s, now).join('\n');
    expect(text).toContain('Your answer: _');
    expect(text).not.toContain('Other…');
    expect(text).not.toContain('Skip\n');
    expect(text).toContain('/skip skips');
    const skipped = run(s, chars('/skip').concat(k('enter')));
    expect(skipped.effects).toEqual([{ type: 'skip', cardId: 'c-words' }]);
  });

  it('← goes back to the question before, with what was answered there', () => {
    const three = card('c-three', [
      question('db', 'Which database?', ['sqlite', 'postgres']),
      question('langs', 'Which languages?', ['ts', 'go', 'rust'], true),
      question('name', 'Project name?', []),
    ]);
    const s = run(loaded(three), [k('enter'), k('char', '2'), k('char', '1'), k('char', '3'), k('enter')]).state;
    expect(s.open).toMatchObject({ step: 2, typing: '' });
    expect(render(s, now).join('\n')).toContain('← previous question');
    // ← from the words-only third question: the second again, with ts and rust still checked.
    const second2 = run(s, [k('left')]).state;
    expect(second2.open).toMatchObject({ step: 1, checked: ['ts', 'rust'] });
    expect(render(second2, now).join('\n')).toContain('[x] rust');
    // From the options of question 2, ← shows question 1 with postgres under the cursor.
    const second = run(loaded(three), [k('enter'), k('char', '2'), k('char', '1')]).state;
    const first = run(second, [k('left')]).state;
    expect(first.open).toMatchObject({ step: 0, cursor: 1 });
    expect(render(first, now).join('\n')).toContain('> 2. postgres');
    // Forward again: the answers are given anew, and the card is sent once.
    const sent = run(first, [k('char', '1'), k('char', '2'), k('enter'), ...chars('demo'), k('enter')]);
    expect(sent.effects).toEqual([
      { type: 'answer', cardId: 'c-three', answers: { db: { selected: ['sqlite'] }, langs: { selected: ['go'] }, name: { selected: [], text: 'demo' } } },
    ]);
  });
});

describe('tui keys from a real terminal', () => {
  /** What Node's own keypress decoder makes of the bytes, as the tui's keys. */
  function decode(bytes: string): Key[] {
    const stream = new PassThrough();
    emitKeypressEvents(stream);
    const keys: Key[] = [];
    stream.on('keypress', (str: string | undefined, key: Parameters<typeof toKeys>[1]) => keys.push(...toKeys(str, key)));
    stream.write(bytes);
    return keys;
  }

  it('reads arrows, Enter, Backspace and characters', () => {
    expect(decode('\x1b[A\x1b[B\r\x7fa/ ')).toEqual([
      { name: 'up' },
      { name: 'down' },
      { name: 'enter' },
      { name: 'backspace' },
      { name: 'char', ch: 'a' },
      { name: 'char', ch: '/' },
      { name: 'space' },
    ]);
  });

  it('Esc followed quickly by a key (one "meta" key for Node) is Esc, then that key', () => {
    expect(decode('\x1b/')).toEqual([{ name: 'escape' }, { name: 'char', ch: '/' }]);
    expect(decode('\x1bq')).toEqual([{ name: 'escape' }, { name: 'char', ch: 'q' }]);
    expect(decode('\x1b\x1b[B')).toEqual([{ name: 'escape' }, { name: 'down' }]);
    expect(decode('\x1b\r')).toEqual([{ name: 'escape' }, { name: 'enter' }]);
  });
});

describe('drafts, delivery and late answers', () => {
  it('keeps every card\'s draft while it runs: leaving one card for another and coming back resumes it', () => {
    // The list is oldest first: c-multi is 1, c-single 2.
    let s = run(loaded(single, multi), [k('char', '2'), k('down'), k('escape')]).state;
    s = run(s, [k('char', '1'), k('char', '3'), k('escape')]).state; // c-multi: "rust" checked
    expect(s.collapsed?.cardId).toBe('c-multi');
    s = run(s, [k('char', '2')]).state;
    expect(s.open).toMatchObject({ cardId: 'c-single', cursor: 1 });
    s = run(s, [k('escape'), k('char', '1')]).state;
    expect(s.open).toMatchObject({ cardId: 'c-multi', checked: ['rust'] });
    // Closed: its draft goes.
    s = reduce(s, { type: 'card', card: { ...single, status: 'expired' } }).state;
    expect(Object.keys(s.drafts)).toEqual(['c-multi']);
  });

  it('the line of a closed card follows where its answer got to', () => {
    const answered = { ...single, status: 'answered' as const, answer: { db: { selected: ['postgres'] } }, delivery: { state: 'sent' as const, at: '2026-01-01T00:01:00.000Z' } };
    let s = reduce(loaded(single), { type: 'card', card: answered }).state;
    expect(s.resolved.map((r) => r.line)).toEqual(['Card c-single was answered elsewhere: postgres · sent']);
    s = reduce(s, { type: 'card', card: { ...answered, delivery: { state: 'delivered', at: '2026-01-01T00:01:01.000Z', to: 'session' } } }).state;
    expect(s.resolved.map((r) => r.line)).toEqual(['Card c-single was answered elsewhere: postgres · delivered to the session']);
    s = reduce(s, { type: 'card', card: { ...multi, status: 'answered', delivery: { state: 'undelivered', at: '2026-01-01T00:01:01.000Z' } } }).state;
    expect(s.resolved).toHaveLength(1); // a card it never listed changes nothing
  });

  it('/late <card-id> <answer> sends a late answer; the card\'s line then says so', () => {
    let s = reduce(loaded(single), { type: 'card', card: { ...single, status: 'expired' } }).state;
    expect(s.resolved.map((r) => r.line)).toEqual(['Card c-single expired before it was answered.']);
    const { state, effects } = run(s, typed('/late c-single postgres'));
    expect(effects).toEqual([{ type: 'reply', cardId: 'c-single', text: 'postgres', late: true }]);
    expect(state.notice).toBe('Sending the late answer "postgres" to c-single…');
    const late = {
      ...single,
      status: 'expired' as const,
      lateAnswer: { answer: { db: { selected: ['postgres'] } }, answeredBy: { kind: 'human' as const, id: 'operator', surface: 'cli' }, lateAt: '2026-01-01T09:00:00.000Z' },
      delivery: { state: 'sent' as const, at: '2026-01-01T09:00:00.000Z' },
    };
    s = reduce(state, { type: 'sent', card: late }).state;
    expect(s.resolved.map((r) => r.line)).toEqual(['Card c-single expired before it was answered. · answered late: postgres · sent']);
    expect(run(s, typed('/late c-single')).state.notice).toMatch(/^Give the card and the answer\. \/late <card-id> <answer>/);
  });
});

describe('tui render: routes', () => {
  it('an open routed card says its rule and who it goes to', () => {
    const routed = card('c-routed', [question('db', 'Which database?', ['sqlite', 'postgres'])], { route: 'payments', routedTo: ['ada', 'telegram'], restricted: true });
    expect(render(run(loaded(routed), [k('enter')]).state, 0).join('\n')).toContain('For payments → ada, telegram (only them)');
    expect(render(run(loaded(single), [k('enter')]).state, 0).join('\n')).not.toContain('For ');
  });
});
