import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { keyedLines, parseOpenclawReply } from '../../src/cards/reply-openclaw.js';
import { cardOf } from '../support/card-fixture.js';

// The OpenClaw reply rules' pieces that the MCP tests (test/providers/openclaw-replies.test.ts)
// reach only through a whole relay.

/** OpenClaw's keyed-line pattern, as its bridge writes it. */
function byPattern(text: string): Map<string, string> {
  const keyed = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const match = line.match(/^\s*([^:=-]+?)\s*[:=-]\s*(.+?)\s*$/);
    const key = match?.[1]?.trim().toLowerCase();
    const value = match?.[2]?.trim();
    if (key && value) keyed.set(key, value);
  }
  return keyed;
}

describe('keyed lines', () => {
  test.prop([fc.array(fc.constantFrom('a', 'Q1', ' ', '\t', ':', '=', '-', '\r', '\n', '\u2028', 'x y', '14', '30', 'é'), { maxLength: 24 }).map((p) => p.join(''))], {
    numRuns: 3000,
  })('read by index exactly as OpenClaw\'s pattern reads them', (text) => {
    expect([...keyedLines(text)]).toEqual([...byPattern(text)]);
  });

  it('cost grows with the line, not its square', () => {
    // 200,000 spaces and no delimiter: the pattern backtracks for minutes; the index, at once.
    const line = `${' '.repeat(200_000)}x`;
    expect(keyedLines(line).size).toBe(0);
  });
});

describe('parseOpenclawReply', () => {
  it('a question that takes no free text drops what names no option', () => {
    const card = { ...cardOf([{ id: 'db', text: 'Which?', options: ['PostgreSQL', 'SQLite'], freeText: false }]), answerRules: 'openclaw' as const };
    expect(parseOpenclawReply(card, 'MySQL')).toEqual({ db: { selected: [] } });
    expect(parseOpenclawReply(card, '2')).toEqual({ db: { selected: ['SQLite'] } });
  });
});
