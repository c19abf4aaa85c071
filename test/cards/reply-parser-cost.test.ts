import { describe, expect, it } from 'vitest';
import type { Card, QuestionInput } from '../../src/cards/model.js';
import { parseReply } from '../../src/cards/reply-parser.js';
import { cardOf } from '../support/card-fixture.js';

// The reply parser must cost time in proportion to the reply (issue 13): a 16 KB reply may
// cost at most 64 times a 1 KB one (16 times is linear). This is a check of how the cost
// grows, not a timer threshold: each size is timed as the fastest of several batches, and
// the same batch size is used for every length. Time is the process's CPU time, not the
// clock on the wall: on a loaded machine a long batch is preempted more often than a short
// one, which would read as growth.

const KB = 1024;

/** CPU time this process has used, in ms (microsecond grain). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** `unit` repeated to exactly `bytes` characters. */
const fill = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

function parse(card: Card, text: string): void {
  try {
    parseReply(card, text);
  } catch {
    // A refusal costs as much as an answer; only the time matters here.
  }
}

/** The fastest of `samples` batches of `reps` parses, in ms. */
function cost(card: Card, text: string, reps: number, samples = 5): number {
  let best = Infinity;
  for (let s = 0; s < samples; s++) {
    const start = cpuMs();
    for (let r = 0; r < reps; r++) parse(card, text);
    best = Math.min(best, cpuMs() - start);
  }
  return best;
}

/** How many parses of `text` make a batch of at least `ms` (so the timer's grain does not matter). */
function batchFor(card: Card, text: string, ms = 10): number {
  for (let reps = 1; ; reps *= 2) {
    const start = cpuMs();
    for (let r = 0; r < reps; r++) parse(card, text);
    if (cpuMs() - start >= ms || reps >= 4096) return reps;
  }
}

const card = (questions: QuestionInput[], selectSeveral = false) => cardOf(questions, { selectSeveral });

const colors = card([{ text: 'Colors?', options: ['Red', 'Green', 'Blue'], multiSelect: true }]);
const single = card([{ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }], true);
const spices = card([{ text: 'Spices?', options: ['Salt, pepper', 'Oil', 'x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, y'], multiSelect: true }]);
// Labels as long as the card allows, made of separators: the longest runs a list can hold.
const commas = card([
  { text: 'Commas?', options: [fill('x,', 200), fill(',x', 200), fill('X;', 199), 'x'], multiSelect: true },
]);
const several = card([
  { id: 'db', header: 'Database', text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] },
  { id: 'langs', text: 'Languages?', options: ['TS', 'Go', 'Rust'], multiSelect: true },
  { id: 'name', text: 'Name?' },
]);
const free = card([{ text: 'Anything?' }]);

const SHAPES: { name: string; card: Card; unit: string }[] = [
  { name: 'x,x,x,… on a multi-select question', card: colors, unit: 'x,' },
  { name: 'x,x,x,… on a single-choice card that selects several', card: single, unit: 'x,' },
  { name: '1,2,1,2,… (every part an option)', card: colors, unit: '1,2,3,' },
  { name: 'x, x, … against labels holding commas', card: spices, unit: 'x, ' },
  { name: 'x,x,… against 200-character labels of commas', card: commas, unit: 'x,' },
  { name: 'separators only', card: colors, unit: ',;\n' },
  { name: 'many keyed lines', card: several, unit: 'langs: 1, rust\n' },
  { name: 'many lines that name no key', card: several, unit: 'db: 1\nlangs: x\nname: y\n' },
  { name: 'a long line without separators', card: several, unit: 'a' },
  { name: 'a key, then only spaces', card: several, unit: ' ' },
  { name: 'colons without keys', card: several, unit: ':' },
  { name: 'many URL-like tokens', card: colors, unit: 'https://x.org/a,b;c ' },
  { name: 'many path-like tokens with separators', card: colors, unit: '/a,b;c\\d, ' },
  { name: 'one free-text question', card: free, unit: 'why, not; ' },
];

describe('the reply parser costs time in proportion to the reply', () => {
  it.each(SHAPES)('$name: 16 KB costs at most 64 times 1 KB', ({ card, unit }) => {
    const small = fill(unit, KB);
    const text = unit === ' ' ? `name${fill(' ', 16 * KB - 4)}` : fill(unit, 16 * KB);
    const smallText = unit === ' ' ? `name${fill(' ', KB - 4)}` : small;
    const quarter = unit === ' ' ? `name${fill(' ', 4 * KB - 4)}` : fill(unit, 4 * KB);
    // Warm up at every size (the first runs are slower before the JIT compiles, and a long
    // input may be compiled apart), then size the batches.
    batchFor(card, smallText);
    parse(card, quarter);
    parse(card, text);
    const reps = batchFor(card, smallText);
    // A measurement can still be spoilt (a collection, a tier-up, another process's cache
    // traffic): up to three tries, and the best one counts. A parser that grows faster than
    // linearly fails all three.
    let shown = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const base = cost(card, smallText, reps);
      // Through 4 KB first, with the same slack over linear (4 times): a parser that grows
      // faster than linearly fails there in seconds instead of holding the test for minutes.
      const mid = cost(card, quarter, reps, 2);
      shown = `4 KB cost ${mid.toFixed(2)} ms, 1 KB ${base.toFixed(2)} ms`;
      if (mid / base > 16) continue;
      const large = cost(card, text, reps, 3);
      shown = `16 KB cost ${large.toFixed(2)} ms, 4 KB ${mid.toFixed(2)} ms, 1 KB ${base.toFixed(2)} ms`;
      if (large / base <= 64) shown = '';
      if (!shown) break;
    }
    expect(shown, 'every try grew faster than 4 times linear').toBe('');
  });
});
