import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card, CardInput } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// POST /api/cards/:id/reply {text}: plain text read by the reply parser, answered like /answer.

let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterAll(() => relay.stop());

async function create(input: CardInput = { questions: [{ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }] }): Promise<Card> {
  const res = await relay.api('/api/cards', { method: 'POST', json: input });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

const reply = (id: string, text: unknown, headers: Record<string, string> = {}) =>
  relay.api(`/api/cards/${id}/reply`, { method: 'POST', json: { text }, headers });

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = await res.json();
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(10);
  return body;
}

describe('POST /api/cards/:id/reply', () => {
  it('picks an option by number or label and records the surface', async () => {
    const card = await create();
    const res = await reply(card.id, '2');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'answered',
      answer: { q1: { selected: ['SQLite'] } },
      answeredBy: { kind: 'human', id: 'operator', surface: 'api' },
    });

    const chat = await create();
    const named = await reply(chat.id, '  postgresql ', { 'x-askrelay-surface': 'chat' });
    expect(await named.json()).toMatchObject({ answer: { q1: { selected: ['PostgreSQL'] } }, answeredBy: { surface: 'chat' } });
  });

  it('reads free text, multi-select lists and several questions', async () => {
    const free = await create();
    expect(await (await reply(free.id, 'MySQL, if we must')).json()).toMatchObject({ answer: { q1: { selected: [], text: 'MySQL, if we must' } } });

    const multi = await create({ questions: [{ text: 'Colors?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] });
    expect(await (await reply(multi.id, '1; blue\nteal')).json()).toMatchObject({ answer: { q1: { selected: ['Red', 'Blue'], text: 'teal' } } });

    const form = await create({
      questions: [
        { id: 'db', header: 'Database', text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'when', text: 'When?' },
      ],
    });
    const res = await reply(form.id, 'when: 14:30\nDatabase = 1');
    expect(res.status).toBe(200);
    expect((await res.json()).answer).toEqual({ db: { selected: ['PostgreSQL'] }, when: { selected: [], text: '14:30' } });
  });

  it('the same reply again is 200; a different one after the answer is 409 with the winner', async () => {
    const card = await create();
    expect((await reply(card.id, 'sqlite')).status).toBe(200);
    expect((await reply(card.id, '2')).status).toBe(200);
    const refused = await expectError(await reply(card.id, '1'), 409, 'already_answered');
    expect(refused.card.answer).toEqual({ q1: { selected: ['SQLite'] } });
  });

  it('a reply the parser cannot read is 422 invalid_answer and changes nothing', async () => {
    const card = await create({
      questions: [
        { id: 'db', text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'name', text: 'Name?' },
      ],
    });
    const missing = await expectError(await reply(card.id, 'sqlite'), 422, 'invalid_answer');
    expect(missing.error.message).toContain('Question "Name?" has no answer');
    const tooMany = await expectError(await reply(card.id, '1, 2\nx'), 422, 'invalid_answer');
    expect(tooMany.error.message).toBe('Question "Which DB?" takes one choice; 2 were picked.');
    await expectError(await reply(card.id, ' '), 422, 'invalid_answer');
    expect((await (await relay.api(`/api/cards/${card.id}`)).json()).status).toBe('pending');
  });

  it('a number that is no option\'s, or a label one letter off, is 422 ambiguous_reply unless asText', async () => {
    const card = await create({ questions: [{ header: 'Database', text: 'Which DB?', options: ['PostgreSQL', 'SQLite', 'MySQL'] }] });
    const seven = await expectError(await reply(card.id, '7'), 422, 'ambiguous_reply');
    expect(seven.error.message).toBe(
      '"7" is not one of the options of "Database" (1. PostgreSQL, 2. SQLite, 3. MySQL); give a number from 1 to 3, an option\'s label, or mark your words as text.',
    );
    const near = await expectError(await reply(card.id, 'sqlit'), 422, 'ambiguous_reply');
    expect(near.error.message).toContain('(did you mean "SQLite"?)');
    expect((await (await relay.api(`/api/cards/${card.id}`)).json()).status).toBe('pending');

    const asText = (id: string, text: string) => relay.api(`/api/cards/${id}/reply`, { method: 'POST', json: { text, asText: true } });
    const res = await asText(card.id, ' 7 ');
    expect(res.status).toBe(200);
    expect((await res.json()).answer).toEqual({ q1: { selected: [], text: '7' } });
    // Marked as text, even a number in range picks nothing; asText must be a boolean.
    const two = await create();
    expect((await (await asText(two.id, '2')).json()).answer).toEqual({ q1: { selected: [], text: '2' } });
    await expectError(await relay.api(`/api/cards/${two.id}/reply`, { method: 'POST', json: { text: '2', asText: 'yes' } }), 400, 'invalid_request');
    // A question that takes only its options takes no text, marked or not.
    const strict = await create({ questions: [{ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'], freeText: false }] });
    await expectError(await asText(strict.id, '7'), 422, 'invalid_answer');
  });

  it('the relay still refuses what /answer refuses (a credential in the text)', async () => {
    const card = await create({ questions: [{ text: 'Anything else?' }] });
    await expectError(await reply(card.id, 'sk-ant-api03-' + 'a'.repeat(90)), 422, 'credential_refused');
  });

  it('404 for an unknown card (even with a bad body), 410 for a closed one, 400 for a bad body', async () => {
    await expectError(await reply('c_nope', '1'), 404, 'not_found');
    await expectError(await relay.api('/api/cards/c_nope/reply', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }), 404, 'not_found');

    const skipped = await create();
    await relay.api(`/api/cards/${skipped.id}/skip`, { method: 'POST' });
    const gone = await expectError(await reply(skipped.id, 'words nobody can parse, 1, 2'), 410, 'card_closed');
    expect(gone.card.status).toBe('skipped');

    const card = await create();
    await expectError(await relay.api(`/api/cards/${card.id}/reply`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }), 400, 'malformed_json');
    await expectError(await reply(card.id, 42), 400, 'invalid_request');
    await expectError(await relay.api(`/api/cards/${card.id}/reply`, { method: 'POST', json: { answers: {} } }), 400, 'invalid_request');
  });

  it('needs the token', async () => {
    const res = await fetch(new URL('/api/cards/c_x/reply', relay.url), { method: 'POST', body: '{"text":"1"}' });
    await expectError(res, 401, 'unauthorized');
  });
});
