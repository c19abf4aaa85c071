import { describe, expect, it } from 'vitest';
import { classicCardDraft, classicResponse, noAnswerText, toCardDraft, toToolResult } from '../../providers/copilot/adapter.js';
import { permissionDecision, permissionDraft } from '../../providers/copilot/approvals.js';
import { relayToolResult } from '../../providers/copilot/handlers.js';
import { copilotToolSchema } from '../../providers/copilot/tool.js';
import { normalizeQuestions } from '../../src/cards/draft.js';
import type { Answer, Card, CardDraft, CardStatus, RelayMode } from '../../src/cards/model.js';

// Golden strings for what Copilot's model reads, pinned without the runtime (the runtime
// tests in copilot.test.ts check the same strings on the wire).

function card(draft: CardDraft, status: CardStatus, answer?: Answer, relayMode: RelayMode = 'autopilot'): Card {
  return {
    id: 'c_1',
    sessionId: 's_1',
    provider: 'copilot',
    engine: 'sdk',
    tool: draft.tool ?? 'ask_user',
    origin: draft.origin ?? 'relay',
    kind: draft.kind ?? 'question',
    layout: 'steps',
    questions: normalizeQuestions(draft.questions, 'steps'),
    selectSeveral: draft.selectSeveral ?? false,
    relayMode,
    status,
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-01T08:00:00.000Z',
    ...(answer ? { answer } : {}),
  };
}

const draftOf = (input: unknown) => {
  const result = toCardDraft(input);
  if (!result.ok) throw new Error(result.error);
  return result.draft;
};
const ask = { question: 'Which database?', choices: ['PostgreSQL', 'SQLite', 'MySQL'] };

describe('sdk engine: input → card', () => {
  it('one question, its choices as options, Select several on for two or more', () => {
    expect(draftOf(ask)).toEqual({
      tool: 'ask_user',
      origin: 'relay',
      kind: 'question',
      layout: 'steps',
      selectSeveral: true,
      questions: [{ id: 'q1', text: 'Which database?', options: ['PostgreSQL', 'SQLite', 'MySQL'], multiSelect: false }],
    });
    expect(draftOf({ question: 'Why?' }).selectSeveral).toBe(false);
  });

  it('keeps the first 8 choices, without blanks or repeats', () => {
    const choices = ['a', ' ', 'A', ...Array.from({ length: 10 }, (_, i) => `c${i}`)];
    expect(draftOf({ question: 'Pick', choices }).questions[0].options).toEqual(['a', 'c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
  });

  it('multi_select or "select all that apply" (any case) make it multi-select', () => {
    expect(draftOf({ ...ask, multi_select: true }).questions[0].multiSelect).toBe(true);
    expect(draftOf({ ...ask, question: 'Which ones? SELECT ALL THAT APPLY' }).questions[0].multiSelect).toBe(true);
    expect(draftOf({ ...ask, multi_select: false }).questions[0].multiSelect).toBe(false);
  });

  it.each([
    [{ choices: ['a'] }, 'question is required: the text of the question to ask.'],
    [{ question: '  ' }, 'question is empty.'],
    [{ question: 'Q', choices: 'a, b' }, 'choices must be a list of texts.'],
    [{ question: 'Q', choices: [1, 2] }, 'every choice must be a text.'],
    [{ question: 'Q', multi_select: 'yes' }, 'multi_select must be true or false.'],
    [{ question: 'Q', multi_select: true }, 'multi_select needs at least 2 choices; none were given.'],
    [{ question: 'Q', choices: ['a'], multi_select: true }, 'multi_select needs at least 2 choices; only 1 was given.'],
    ['not an object', 'the arguments must be an object: {question, choices?, multi_select?}.'],
  ])('refuses %j with one sentence', (input, error) => {
    expect(toCardDraft(input)).toEqual({ ok: false, error });
  });
});

describe('sdk engine: card → what the model reads', () => {
  const draft = draftOf(ask);
  it.each([
    [{ q1: { selected: ['SQLite'] } }, 'User selected: SQLite'],
    [{ q1: { selected: ['PostgreSQL', 'MySQL'] } }, 'User selected: PostgreSQL, MySQL'],
    [{ q1: { selected: [], text: 'DuckDB' } }, 'User responded: DuckDB'],
    [{ q1: { selected: ['SQLite'], text: 'for now' } }, 'User selected: SQLite\nUser responded: for now'],
  ])('%j', (answer, expected) => {
    expect(toToolResult(card(draft, 'answered', answer))).toBe(expected);
  });

  it.each([
    ['skipped', 'autopilot', 'The user declined to answer. Proceed with your best judgement and say what you assumed.'],
    ['skipped', 'manual', "The user declined to answer. Stop here and wait for the user's next message; do not guess."],
    ['expired', 'autopilot', 'Nobody answered within the wait. Proceed with your best judgement and say what you assumed.'],
    ['expired', 'manual', "Nobody answered within the wait. Stop here and wait for the user's next message; do not guess."],
    ['cancelled', 'autopilot', 'The question was cancelled: the session is stopping.'],
  ] as const)('%s in %s mode', (status, mode, expected) => {
    expect(toToolResult(card(draft, status, undefined, mode))).toBe(expected);
    expect(noAnswerText(card(draft, status, undefined, mode))).toBe(expected);
  });
});

describe('extension engine, classic: {question, choices} ↔ {answer, wasFreeform}', () => {
  const draft = classicCardDraft({ question: 'Which color?', choices: ['Red', 'Green'], allowFreeform: true });
  it('becomes a single-choice card with free text', () => {
    expect(draft).toMatchObject({ origin: 'native', tool: 'ask_user', questions: [{ options: ['Red', 'Green'], multiSelect: false, freeText: true }] });
  });
  it.each([
    [{ q1: { selected: ['Green'] } }, { answer: 'Green', wasFreeform: false }],
    [{ q1: { selected: [], text: 'teal' } }, { answer: 'teal', wasFreeform: true }],
    [{ q1: { selected: ['Red'], text: 'ish' } }, { answer: 'Red, ish', wasFreeform: true }],
  ])('%j', (answer, expected) => {
    expect(classicResponse(card(draft, 'answered', answer))).toEqual(expected);
  });
  it('a skip or an expiry is a sentence, never a throw', () => {
    expect(classicResponse(card(draft, 'skipped'))).toEqual({
      answer: 'The user declined to answer. Proceed with your best judgement and say what you assumed.',
      wasFreeform: true,
    });
    expect(classicResponse(card(draft, 'expired', undefined, 'manual')).answer).toBe(
      "Nobody answered within the wait. Stop here and wait for the user's next message; do not guess.",
    );
  });
});

describe('permission requests', () => {
  const draft = permissionDraft({ kind: 'shell', toolCallId: 'call_1', fullCommandText: 'rm -rf build' });
  it('become approval cards showing the command', () => {
    expect(draft).toMatchObject({ kind: 'approval', tool: 'permission:shell', questions: [{ id: 'allow', text: 'Run this command?\n\nrm -rf build' }] });
  });
  it.each([
    [{ allow: { selected: ['Allow'] } }, { kind: 'approve-once' }],
    [{ allow: { selected: ['Deny'] } }, { kind: 'reject', feedback: 'The user denied this tool use.' }],
    [{ allow: { selected: ['Deny'], text: 'not on main' } }, { kind: 'reject', feedback: 'The user denied this tool use: not on main' }],
  ])('%j', (answer, expected) => {
    expect(permissionDecision(card(draft, 'answered', answer))).toEqual(expected);
  });
  it('nobody answering is a reject with feedback, so the turn goes on', () => {
    expect(permissionDecision(card(draft, 'expired'))).toEqual({ kind: 'reject', feedback: 'Nobody approved it in time.' });
  });
});

describe('the relay tool in the runtime\'s form', () => {
  it('results: text on success, a failure the model reads verbatim on error', () => {
    expect(relayToolResult({ text: 'No pending questions that you can see.', isError: false })).toBe('No pending questions that you can see.');
    expect(relayToolResult({ text: 'No card "c_1" that you can see.', isError: true })).toEqual({ textResultForLlm: 'No card "c_1" that you can see.', resultType: 'failure' });
  });
  it('schemas lose only the validation keywords the runtime would turn into text; field names stay', () => {
    const schema = {
      type: 'object',
      properties: {
        minLength: { type: 'string', minLength: 1 },
        answers: { anyOf: [{ type: 'object', propertyNames: { type: 'string' }, additionalProperties: { type: 'string' } }, { type: 'string', minLength: 1 }] },
      },
      required: ['minLength'],
    };
    expect(copilotToolSchema(schema)).toEqual({
      type: 'object',
      properties: {
        minLength: { type: 'string' },
        answers: { anyOf: [{ type: 'object', additionalProperties: { type: 'string' } }, { type: 'string' }] },
      },
      required: ['minLength'],
    });
  });
});
