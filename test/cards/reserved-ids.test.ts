import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAnswer } from '../../src/cards/answer.js';
import type { Card } from '../../src/cards/model.js';
import { parseReply } from '../../src/cards/reply-parser.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Issue 13, item 8: question ids that every JavaScript object already has (`__proto__`,
// `constructor`, `toString`, …) made answering a 500 and lost a plain-text reply to
// `__proto__` (stored as {}). Such ids are refused when the card is asked; answers that
// name them are refused like any unknown question; nothing is ever a 5xx.

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterAll(() => relay.stop());

const post = (path: string, body: string) => relay.api(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

describe.each(NAMES)('the question id %j', (name) => {
  it('is refused when the card is asked, with 422 invalid_card naming it', async () => {
    const res = await post('/api/cards', JSON.stringify({ questions: [{ id: name, text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }] }));
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: { code: 'invalid_card', message: `questions[0].id "${name}" is reserved (every JavaScript object has it); choose another id.` },
    });
  });

  it('in an answer or a keyed reply to another card is an unknown question, never a 5xx', async () => {
    const created = await post('/api/cards', JSON.stringify({ questions: [{ id: 'db', text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }, { id: 'why', text: 'Why?' }] }));
    expect(created.status).toBe(201);
    const card = (await created.json()) as Card;
    const pending = async () => ((await (await relay.api(`/api/cards/${card.id}`)).json()) as Card).status;

    const reply = await post(`/api/cards/${card.id}/reply`, JSON.stringify({ text: `${name}: 1\ndb: 2\nwhy: small` }));
    expect(reply.status).toBe(422);
    expect(((await reply.json()) as { error: { code: string } }).error.code).toBe('invalid_answer');
    expect(await pending()).toBe('pending');

    // Written as raw JSON so "__proto__" is an own key, as a client would send it.
    const answer = await post(`/api/cards/${card.id}/answer`, `{"answers":{"db":{"selected":["SQLite"]},"why":{"selected":[],"text":"small"},${JSON.stringify(name)}:{"selected":[],"text":"x"}}}`);
    if (name === '__proto__') {
      // The body's parser (zod) drops a "__proto__" key at the boundary; the rest is judged.
      expect(answer.status).toBe(200);
      const answered = (await answer.json()) as Card;
      expect(Object.keys(answered.answer!)).toEqual(['db', 'why']);
      expect(answered.answer).toEqual({ db: { selected: ['SQLite'] }, why: { selected: [], text: 'small' } });
      return;
    }
    expect(answer.status).toBe(422);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('unknown_question');
    expect(await pending()).toBe('pending');

    // And the card still takes a proper answer.
    const ok = await post(`/api/cards/${card.id}/reply`, JSON.stringify({ text: 'db: 2\nwhy: small' }));
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Card).answer).toEqual({ db: { selected: ['SQLite'] }, why: { selected: [], text: 'small' } });
  });
});

describe('a card stored with such an id before they were refused', () => {
  // Cards asked before this release may hold one: answering them stores the answer faithfully.
  const legacy = (id: string): Card => ({
    id: 'c_legacy',
    sessionId: null,
    provider: 'api',
    tool: 'cards',
    origin: 'relay',
    kind: 'question',
    layout: 'steps',
    questions: [{ id, text: 'Which DB?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }], multiSelect: false, freeText: true }],
    selectSeveral: false,
    relayMode: 'autopilot',
    status: 'pending',
    createdAt: '2026-11-30T12:00:00.000Z',
    expiresAt: '2026-11-30T20:00:00.000Z',
  });

  it.each(NAMES)('%j: a checked answer and a parsed reply keep it as an own key', (name) => {
    const card = legacy(name);
    const answer = JSON.parse(`{${JSON.stringify(name)}:{"selected":["sqlite"]}}`);
    const checked = checkAnswer(card, answer);
    expect(Object.keys(checked)).toEqual([name]);
    expect(Object.getPrototypeOf(checked)).toBe(Object.prototype);
    expect(JSON.stringify(checked)).toBe(`{${JSON.stringify(name)}:{"selected":["SQLite"]}}`);
    const parsed = parseReply(card, '2');
    expect(JSON.stringify(checkAnswer(card, parsed))).toBe(`{${JSON.stringify(name)}:{"selected":["SQLite"]}}`);
    expect(() => checkAnswer(card, {})).toThrow(/has no answer/);
  });
});
