import { describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { cardsTable } from '../../src/cli/format.js';
import { entryText } from '../../src/cli/session-format.js';
import { render } from '../../src/cli/tui/render.js';
import { initialState, reduce } from '../../src/cli/tui/state.js';
import { cardOf } from '../support/card-fixture.js';

// What an agent writes reaches the human's terminal: the TUI, `askrelay cards` and the
// session transcripts. An escape sequence, a carriage return or a bidi override in it must
// show as text ([U+XXXX]) and never move the cursor, clear the screen or reorder the line.

const HOSTILE = 'Deploy?\x1b[2J\x1b[H\rAll tests passed\u202eevil\x07';
const card: Card = cardOf([{ id: 'go', header: 'Ship\x1b[31m', text: HOSTILE, options: ['Yes\x1b]0;pwned\x07', 'No'] }]);

/** Anything a terminal would act on: C0/C1 controls but newline and tab, and bidi controls. */
const STEERING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('terminal safety', () => {
  it('the TUI draws a card whose text holds escapes as visible text', () => {
    const list = reduce(initialState(), { type: 'cards', cards: [card] }).state;
    const opened = reduce(list, { type: 'key', key: { name: 'enter' } }).state;
    for (const state of [list, opened]) {
      const screen = render(state, Date.parse('2026-11-30T12:00:00.000Z'), 200).join('\n');
      expect(screen).not.toMatch(STEERING);
    }
    const screen = render(opened, Date.parse('2026-11-30T12:00:00.000Z'), 200).join('\n');
    expect(screen).toContain('[U+001B][2J');
    expect(screen).toContain('[U+202E]evil');
  });

  it('askrelay cards and a session transcript print the same text without steering the terminal', () => {
    const table = cardsTable([card], Date.parse('2026-11-30T12:00:00.000Z'));
    expect(table).not.toMatch(STEERING);
    expect(table).toContain('Ship[U+001B][31m');
    const transcript = entryText({ at: '2026-11-30T12:00:00.000Z', role: 'assistant', text: `${HOSTILE}\r\nsecond line` });
    expect(transcript).not.toMatch(STEERING);
    expect(transcript).toContain('[U+0007]');
    // A lone carriage return is a line break, never a return to the start of the line.
    expect(transcript.split('\n').map((l) => l.trim())).toEqual([expect.stringContaining('Deploy?[U+001B][2J[U+001B][H'), 'All tests passed[U+202E]evil[U+0007]', 'second line']);
  });
});
