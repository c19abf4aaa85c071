import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS, type Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Issue 13, item 13 (the card limits): every text a card holds is capped like question text
// (a 60,000-character title was accepted), and a label that shows nothing is refused.

let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterAll(() => relay.stop());

const ask = (body: unknown) => relay.api('/api/cards', { method: 'POST', json: body });
const question = (extra: Record<string, unknown> = {}) => ({ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'], ...extra });

async function refused(body: unknown): Promise<string> {
  const before = ((await (await relay.api('/api/cards')).json()) as { cards: Card[] }).cards.length;
  const res = await ask(body);
  expect(res.status).toBe(422);
  const { error } = (await res.json()) as { error: { code: string; message: string } };
  expect(error.code).toBe('invalid_card');
  // A refusal stores nothing.
  expect(((await (await relay.api('/api/cards')).json()) as { cards: Card[] }).cards.length).toBe(before);
  return error.message;
}

async function created(body: unknown): Promise<Card> {
  const res = await ask(body);
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

describe('POST /api/cards caps every text of a card', () => {
  it('refuses a title over the limit (60,000 characters was accepted), and takes one at the limit', async () => {
    expect(await refused({ title: 't'.repeat(60_000), questions: [question()] })).toBe(`title is longer than ${LIMITS.titleChars} characters.`);
    expect(await refused({ title: 't'.repeat(LIMITS.titleChars + 1), questions: [question()] })).toBe(`title is longer than ${LIMITS.titleChars} characters.`);
    expect((await created({ title: ` ${'t'.repeat(LIMITS.titleChars)} `, questions: [question()] })).title).toBe('t'.repeat(LIMITS.titleChars));
  });

  it('refuses a header, a description, a label and a question over theirs', async () => {
    expect(await refused({ questions: [question({ header: 'h'.repeat(LIMITS.headerChars + 1) })] })).toBe(`questions[0].header is longer than ${LIMITS.headerChars} characters.`);
    expect(await refused({ questions: [question({ options: [{ label: 'A', description: 'd'.repeat(LIMITS.descriptionChars + 1) }, 'B'] })] })).toBe(
      `questions[0].options[0].description is longer than ${LIMITS.descriptionChars} characters.`,
    );
    expect(await refused({ questions: [question({ options: ['A', 'l'.repeat(LIMITS.labelChars + 1)] })] })).toBe(`questions[0].options[1].label is longer than ${LIMITS.labelChars} characters.`);
    expect(await refused({ questions: [question({ text: 'q'.repeat(LIMITS.textChars + 1) })] })).toBe(`questions[0].text is longer than ${LIMITS.textChars} characters.`);
  });
});

// Zero-width space, joiners, bidi marks, embeddings and isolates, the BOM, the soft hyphen,
// a tag character, a variation selector, the Hangul filler, the blank Braille pattern, and
// those mixed with whitespace.
const INVISIBLE = ['\u200b', '\u200c\u200d', '\u200e\u200f', '\u202a\u202e\u202c', '\u2066\u2069', '\ufeff\u200b', '\u00ad', '\u{e0041}', '\ufe0f', '\u3164', '\u2800', ' \u2060\t\u180e ', '\u0001'];

describe('POST /api/cards refuses what shows nothing', () => {
  it.each(INVISIBLE.map((s) => [JSON.stringify(s), s]))('a label of %s', async (_name, label) => {
    expect(await refused({ questions: [question({ options: ['A', label] })] })).toBe('questions[0].options[1].label shows nothing: it holds only invisible characters.');
  });

  it('a question text of invisible characters', async () => {
    expect(await refused({ questions: [question({ text: '\u200b\u200e' })] })).toBe('questions[0].text shows nothing: it holds only invisible characters.');
  });

  it('leaves out a title, header or description that shows nothing, as if empty', async () => {
    const card = await created({ title: '\u200b\u2066', questions: [question({ header: '\ufeff\u200d', options: [{ label: 'A', description: '\u00ad' }, 'B'] })] });
    expect(card.title).toBeUndefined();
    expect(card.questions[0].header).toBeUndefined();
    expect(card.questions[0].options).toEqual([{ label: 'A' }, { label: 'B' }]);
  });

  it('keeps labels that hold visible text among invisible characters, and emoji', async () => {
    const card = await created({ questions: [question({ options: ['\u200bA', '👍🏽', '\u2764\ufe0f', 'ℹ'] })] });
    expect(card.questions[0].options.map((o) => o.label)).toEqual(['\u200bA', '👍🏽', '\u2764\ufe0f', 'ℹ']);
  });
});
