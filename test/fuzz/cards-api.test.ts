import { fc, test } from '@fast-check/vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { CardSchema, type CardInput } from '../../src/cards/model.js';
import { DB_FILE } from '../../src/start.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { anyJson, expectDocumentedResponse, FUZZ_RUNS, FUZZ_TIMEOUT_MS, hostileText, PROTO_NAMES, replyFrom, responseOf, reportSlowestCases, runs } from './fuzz-support.js';

// Generated input thrown at the card routes of a real relay over HTTP: card bodies,
// answers and plain-text replies. Whatever comes in, the relay answers below 500, every
// refusal is the documented error, and a refusal leaves the SQLite file as it was (read
// through a second connection to the same file).

reportSlowestCases();

let relay: TestRelay;
let db: Database.Database;

beforeAll(async () => {
  relay = await startTestRelay();
  db = new Database(join(relay.dataDir, DB_FILE), { readonly: true });
});
afterAll(async () => {
  db.close();
  await relay.stop();
});

const cardCount = () => db.prepare('SELECT count(*) FROM cards').pluck().get() as number;
const storedRow = (id: string) => db.prepare('SELECT status, data FROM cards WHERE id = ?').get(id) as { status: string; data: string } | undefined;

async function post(path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return responseOf(await relay.api(path, { method: 'POST', body, headers }));
}

const option = () => fc.oneof(hostileText(), fc.record({ label: hostileText(), description: hostileText() }, { requiredKeys: ['label'] }));
const question = () =>
  fc.record(
    {
      id: fc.oneof(hostileText(), fc.constantFrom(...PROTO_NAMES), fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/)),
      header: hostileText(),
      text: hostileText(),
      options: fc.array(option(), { maxLength: 8 }),
      multiSelect: fc.boolean(),
      freeText: fc.boolean(),
      field: fc.record({ type: fc.constantFrom('string', 'number', 'boolean', 'choice', 'choices', 'date') }),
    },
    { requiredKeys: ['text'] },
  );
const cardBody = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ title: hostileText(), questions: fc.array(question(), { maxLength: 5 }), layout: fc.constantFrom('steps', 'form', 'grid'), waitSeconds: fc.oneof(fc.double(), fc.integer()), selectSeveral: fc.boolean() }, { requiredKeys: ['questions'] }) },
    { weight: 2, arbitrary: anyJson() },
  );

// Cards the answer and reply properties answer: each shape the relay knows, some with ids
// that are also names every JavaScript object has.
const TEMPLATES: CardInput[] = [
  { questions: [{ id: 'db', header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite', 'Salt, pepper'] }] },
  { questions: [{ id: 'colours', text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] },
  { questions: [{ text: 'Anything to add?' }] },
  { questions: [{ id: 'pick', text: 'Options only', options: ['1', '2', '10'], freeText: false }], selectSeveral: true },
  { layout: 'form', questions: [{ id: 'n', text: 'How many?', field: { type: 'number' } }, { id: 'ok', text: 'Go?', field: { type: 'boolean' } }, { id: 'sizes', text: 'Sizes', options: ['S', 'M'], field: { type: 'choices' } }] },
  ...PROTO_NAMES.slice(0, 4).map((id): CardInput => ({ questions: [{ id, header: id, text: `Question ${id}?`, options: ['Yes', 'No'] }, { id: 'second', text: 'And?' }] })),
];
const wordsOf = (t: CardInput) => t.questions.flatMap((q, i) => [q.id ?? `q${i + 1}`, q.header ?? '', ...(q.options ?? []).map((o) => (typeof o === 'string' ? o : o.label))]).filter(Boolean);

const answerEntry = (words: string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ selected: fc.array(fc.oneof(fc.constantFrom(...words), hostileText()), { maxLength: 4 }), text: hostileText() }, { requiredKeys: ['selected'] }) },
    { weight: 1, arbitrary: anyJson() },
  );
/** An answer the card takes: some of each question's options, or a typed value where it has none. */
const wellFormedAnswer = (t: CardInput) =>
  fc.tuple(
    ...t.questions.map((q) => {
      const labels = q.field?.type === 'boolean' ? ['Yes', 'No'] : (q.options ?? []).map((o) => (typeof o === 'string' ? o : o.label));
      if (!labels.length) return fc.constantFrom('fine', '42').map((text) => ({ selected: [] as string[], text }));
      const several = q.multiSelect || q.field?.type === 'choices' || t.selectSeveral;
      return fc.subarray(labels, { minLength: 1, maxLength: several ? labels.length : 1 }).map((selected) => ({ selected }));
    }),
  ).map((entries) => Object.fromEntries(entries.map((e, i) => [t.questions[i].id ?? `q${i + 1}`, e])));
const answerFor = (t: CardInput) => {
  const ids = t.questions.map((q, i) => q.id ?? `q${i + 1}`);
  return fc.oneof(
    { weight: 3, arbitrary: wellFormedAnswer(t) },
    { weight: 6, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...ids), hostileText()), answerEntry(wordsOf(t)), { maxKeys: 4 }) },
    { weight: 1, arbitrary: anyJson() },
  );
};

/** Creates a card from a template; undefined when the relay refuses the template itself. */
async function createFrom(t: CardInput): Promise<string | undefined> {
  const created = await post('/api/cards', JSON.stringify(t));
  expectDocumentedResponse(created);
  return created.status === 201 ? (created.body as { id: string }).id : undefined;
}

/** After an answer or a reply: accepted → answered and stored as returned; refused → the row untouched. */
function expectStoredOutcome(id: string, before: { status: string; data: string }, res: { status: number; body: unknown }) {
  expectDocumentedResponse(res);
  const after = storedRow(id)!;
  if (res.status === 200) {
    const card = CardSchema.parse(res.body);
    expect(card.status).toBe('answered');
    expect(JSON.parse(after.data)).toEqual(res.body);
    // Every question has its own entry in the stored answer, whatever its id is called.
    for (const q of card.questions) expect(Object.hasOwn(JSON.parse(after.data).answer, q.id), q.id).toBe(true);
  } else {
    expect(after).toEqual(before);
  }
}

const reached = { answers: 0, replies: 0, accepted: 0 };

describe('fuzz: the card routes', () => {
  test.prop([cardBody()], runs())(
    'POST /api/cards: a card or a documented refusal, and a refusal stores nothing',
    async (body) => {
      const before = cardCount();
      const res = await post('/api/cards', JSON.stringify(body));
      expectDocumentedResponse(res);
      if (res.status === 201) {
        CardSchema.parse(res.body);
        expect(cardCount()).toBe(before + 1);
      } else {
        expect(cardCount()).toBe(before);
      }
    },
    FUZZ_TIMEOUT_MS,
  );

  test.prop([fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 })), fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16'), fc.constantFrom('/api/cards', '/api/cards/c_missing/answer', '/api/cards/c_missing/reply', '/api/sessions', '/api/login')], runs())(
    'any bytes to a JSON route: a documented refusal, nothing stored',
    async (body, type, path) => {
      const before = cardCount();
      const res = await post(path, body, { 'content-type': type });
      expectDocumentedResponse(res);
      if (res.status !== 201) expect(cardCount()).toBe(before);
    },
    FUZZ_TIMEOUT_MS,
  );

  test.prop([fc.nat(TEMPLATES.length - 1).chain((i) => fc.tuple(fc.constant(i), answerFor(TEMPLATES[i])))], runs())(
    'POST /api/cards/:id/answer: answered as returned, or refused with the card untouched',
    async ([i, answers]) => {
      const id = await createFrom(TEMPLATES[i]);
      if (!id) return; // the relay may refuse a template whose ids it does not take
      reached.answers++;
      const before = storedRow(id)!;
      const res = await post(`/api/cards/${id}/answer`, JSON.stringify({ answers }));
      if (res.status === 200) reached.accepted++;
      expectStoredOutcome(id, before, res);
    },
    FUZZ_TIMEOUT_MS,
  );

  test.prop([fc.nat(TEMPLATES.length - 1).chain((i) => fc.tuple(fc.constant(i), replyFrom(wordsOf(TEMPLATES[i]))))], runs())(
    'POST /api/cards/:id/reply: any text is an answer or a documented refusal, with the card untouched',
    async ([i, text]) => {
      const id = await createFrom(TEMPLATES[i]);
      if (!id) return;
      reached.replies++;
      const before = storedRow(id)!;
      expectStoredOutcome(id, before, await post(`/api/cards/${id}/reply`, JSON.stringify({ text })));
    },
    FUZZ_TIMEOUT_MS,
  );

  test('the answer and reply properties reached real cards (not only refused templates)', () => {
    expect(reached.answers).toBeGreaterThan(FUZZ_RUNS / 2);
    expect(reached.replies).toBeGreaterThan(FUZZ_RUNS / 2);
    expect(reached.accepted).toBeGreaterThan(FUZZ_RUNS / 10);
  });
});

