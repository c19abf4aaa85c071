import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { claudeCodeToolResult, toCardDraft, toolInputError, toToolResult, toUpdatedInput } from '../../providers/claude/adapter.js';
import { planApprovalDraft, planDecision } from '../../providers/claude/approvals.js';
import {
  ASK_USER_QUESTION,
  ASK_USER_QUESTION_TOOL,
  AskUserQuestionInputSchema,
  EXIT_PLAN_MODE,
} from '../../providers/claude/tool.js';
import { checkAnswer } from '../../src/cards/answer.js';
import { normalizeQuestions } from '../../src/cards/draft.js';
import type { Answer, Card, CardDraft, CardStatus } from '../../src/cards/model.js';

// Golden tests: every expected string is written out literally, byte for byte as Claude Code
// 2.1.332 writes it. Those a live run produces are checked against the real binary in
// claude-code-engine.test.ts ("the exact tool_result Claude Code sends for each kind of answer").

// ---- helpers ------------------------------------------------------------------------------

function parsed(input: unknown) {
  const result = toCardDraft(input);
  if (!result.ok) throw new Error(`expected valid input, got: ${result.error}`);
  return result;
}

/** A card as the relay would hold it: questions through the generic rules, answer through checkAnswer. */
function cardFor(
  draft: CardDraft,
  status: CardStatus,
  answer?: Answer,
  { raw = false, selectSeveral = false }: { raw?: boolean; selectSeveral?: boolean } = {},
): Card {
  const card: Card = {
    id: 'card-1',
    sessionId: 'session-1',
    provider: 'claude',
    engine: 'code',
    tool: draft.tool ?? 'unset',
    origin: draft.origin ?? 'relay',
    kind: draft.kind ?? 'question',
    layout: draft.layout ?? 'steps',
    questions: normalizeQuestions(draft.questions, draft.layout ?? 'steps'),
    selectSeveral,
    relayMode: 'autopilot',
    status: 'pending',
    createdAt: '2030-01-01T00:00:00.000Z',
    expiresAt: '2030-01-01T08:00:00.000Z',
  };
  if (!answer) return { ...card, status };
  return {
    ...card,
    status,
    answer: raw ? answer : checkAnswer(card, answer),
    answeredBy: { kind: 'human', id: 'me', surface: 'web' },
  };
}

/** Answers `input` with `answer` and returns both outputs: code engine and messages engine. */
function answer(input: unknown, reply: Answer, options?: { raw?: boolean; selectSeveral?: boolean }) {
  const { input: valid, draft } = parsed(input);
  const card = cardFor(draft, 'answered', reply, options);
  return { updated: toUpdatedInput(valid, card), result: toToolResult(valid, card) };
}

function closed(input: unknown, status: CardStatus) {
  const { input: valid, draft } = parsed(input);
  const card = cardFor(draft, status);
  return { updated: toUpdatedInput(valid, card), result: toToolResult(valid, card) };
}

const DB = {
  question: 'Which database?',
  header: 'Database',
  options: [
    { label: 'PostgreSQL', description: 'Relational, runs as a server' },
    { label: 'SQLite', description: 'Embedded, one file' },
    { label: 'MySQL, MariaDB', description: 'Either of the two' },
  ],
  multiSelect: false,
};
const DBS = { ...DB, question: 'Which databases?', multiSelect: true };
const CACHE = {
  question: 'Which cache?',
  header: 'Cache',
  options: [
    { label: 'Redis', description: 'In memory' },
    { label: 'None', description: 'No cache' },
  ],
  multiSelect: false,
};

const single = { questions: [DB] };
const multi = { questions: [DBS] };
const two = { questions: [DB, CACHE] };

// ---- the tool -----------------------------------------------------------------------------

describe('ASK_USER_QUESTION_TOOL', () => {
  it('is the definition Claude Code 2.1.332 sends, unchanged', () => {
    expect(ASK_USER_QUESTION).toBe('AskUserQuestion');
    expect(EXIT_PLAN_MODE).toBe('ExitPlanMode');
    // The messages engine offers the model this constant; the code engine's model gets Claude
    // Code's own. All three fields must match, the description too: it tells the model when
    // to ask, so both engines' models are asked the same way. Key order included (the JSON
    // text is compared), since the constant claims to be the captured request byte for byte.
    const golden = JSON.parse(readFileSync(new URL('./golden/claude-code-ask-user-question.json', import.meta.url), 'utf8')) as { tool: unknown };
    expect(ASK_USER_QUESTION_TOOL).toEqual(golden.tool);
    expect(JSON.stringify(ASK_USER_QUESTION_TOOL)).toBe(JSON.stringify(golden.tool));
  });
});

// ---- input → card draft -------------------------------------------------------------------

describe('toCardDraft', () => {
  it('turns the input into a steps card, q1..qN, previews left out, no runner fields', () => {
    const input = {
      questions: [
        {
          question: 'Which database?',
          header: 'Database',
          options: [
            { label: 'PostgreSQL', description: 'Relational', preview: '<div>pg</div>' },
            { label: 'SQLite', description: 'Embedded' },
          ],
          multiSelect: false,
        },
        { question: 'Which features?', header: 'Features', options: [{ label: 'Auth' }, { label: 'Billing' }], multiSelect: true },
      ],
    };
    const result = toCardDraft(input);
    expect(result).toEqual({
      ok: true,
      input,
      draft: {
        layout: 'steps',
        tool: 'AskUserQuestion',
        origin: 'native',
        kind: 'question',
        questions: [
          {
            id: 'q1',
            header: 'Database',
            text: 'Which database?',
            options: [
              { label: 'PostgreSQL', description: 'Relational' },
              { label: 'SQLite', description: 'Embedded' },
            ],
            multiSelect: false,
            freeText: true,
          },
          {
            id: 'q2',
            header: 'Features',
            text: 'Which features?',
            options: [{ label: 'Auth' }, { label: 'Billing' }],
            multiSelect: true,
            freeText: true,
          },
        ],
      },
    });
  });

  it('shortens a 40-character header to 12 characters for display and never refuses it', () => {
    const header = 'Choose the primary database engine today';
    expect(header).toHaveLength(40);
    const { draft, input } = parsed({ questions: [{ ...DB, header }] });
    expect(draft.questions[0].header).toBe('Choose the …');
    expect(draft.questions[0].header).toHaveLength(12);
    expect(input.questions[0].header).toBe(header);
    expect(parsed({ questions: [{ ...DB, header: 'Exactly12chr' }] }).draft.questions[0].header).toBe('Exactly12chr');
  });

  it('keeps unknown fields of the input and of its questions', () => {
    const input = {
      title: 'Setup',
      metadata: { source: 'remember' },
      questions: [{ ...DB, kind: 'choice', options: [{ label: 'A', description: 'a', tone: 'x' }, { label: 'B' }] }],
    };
    expect(parsed(input).input).toEqual(input);
  });

  it('gives the generic card rules input they accept, however Claude Code-valid input looks', () => {
    const { draft } = parsed({
      questions: [
        // "Other" is stripped by the relay; one option left cannot be multi-select.
        { question: 'Pick one', header: '  ', options: [{ label: 'Alpha' }, { label: 'Other' }], multiSelect: true },
        // Labels that differ only in case or space are one label to the card.
        { question: 'Case?', options: [{ label: 'Yes' }, { label: 'yes' }, { label: ' Yes ' }] },
        // Over the card's limits: label 200, description 1000, text 4000.
        {
          question: `Long ${'q'.repeat(5000)}?`,
          options: [{ label: 'L'.repeat(250), description: 'd'.repeat(1500) }, { label: 'Short' }],
        },
        { question: '  Padded?  ', options: [{ label: ' Spaced ' }, { label: 'Plain' }] },
      ],
    });
    const questions = normalizeQuestions(draft.questions, 'steps');
    expect(questions[0]).toEqual({ id: 'q1', text: 'Pick one', options: [{ label: 'Alpha' }], multiSelect: false, freeText: true });
    expect(questions[1].options.map((o) => o.label)).toEqual(['Yes', 'yes (2)', 'Yes (3)']);
    expect(questions[2].text).toHaveLength(4000);
    expect(questions[2].text.endsWith('qq…')).toBe(true);
    expect(questions[2].options[0].label).toHaveLength(200);
    expect(questions[2].options[0].description).toHaveLength(1000);
    expect(questions[3].text).toBe('Padded?');
    expect(questions[3].options.map((o) => o.label)).toEqual(['Spaced', 'Plain']);
  });

  const refusals: [string, unknown, string][] = [
    ['not an object', null, 'The tool input must be an object with a "questions" list, not null.'],
    ['a string', 'Which database?', 'The tool input must be an object with a "questions" list, not a string.'],
    ['no questions field', {}, 'questions is missing; it must be a list of 1 to 4 questions.'],
    ['0 questions', { questions: [] }, 'questions must hold 1 to 4 questions; it has 0.'],
    ['5 questions', { questions: [1, 2, 3, 4, 5].map((n) => ({ ...DB, question: `Q${n}?` })) }, 'questions must hold 1 to 4 questions; it has 5.'],
    ['1 option', { questions: [{ ...DB, options: [{ label: 'PostgreSQL' }] }] }, 'questions[0].options must hold 2 to 4 options; it has 1.'],
    [
      '5 options',
      { questions: [CACHE, { ...DB, options: ['A', 'B', 'C', 'D', 'E'].map((label) => ({ label })) }] },
      'questions[1].options must hold 2 to 4 options; it has 5.',
    ],
    ['duplicate question texts', { questions: [DB, { ...CACHE, question: 'Which database?' }] }, 'questions[1].question repeats questions[0].question ("Which database?"); question texts must be unique.'],
    [
      'duplicate labels',
      { questions: [{ ...DB, options: [{ label: 'PostgreSQL' }, { label: 'PostgreSQL' }] }] },
      'questions[0].options[1].label repeats questions[0].options[0].label ("PostgreSQL"); labels must be unique within a question.',
    ],
    ['missing question field', { questions: [{ header: 'DB', options: DB.options }] }, 'questions[0].question is missing; it must be a string.'],
    ['blank question', { questions: [{ ...DB, question: '   ' }] }, 'questions[0].question is empty; it must contain text.'],
    ['missing label', { questions: [{ ...DB, options: [{ label: 'A' }, { description: 'no label' }] }] }, 'questions[0].options[1].label is missing; it must be a string.'],
    ['options not a list', { questions: [{ ...DB, options: 'A or B' }] }, 'questions[0].options must be a list of 2 to 4 options, not a string.'],
    ['multiSelect not boolean', { questions: [{ ...DB, multiSelect: 'yes' }] }, 'questions[0].multiSelect must be true or false, not a string.'],
  ];
  it.each(refusals)('refuses %s with one sentence naming the field', (_name, input, message) => {
    expect(toCardDraft(input)).toEqual({ ok: false, error: message });
  });

  it('wraps a refusal the way Claude Code does for the messages engine', () => {
    expect(toolInputError('questions must hold 1 to 4 questions; it has 5.')).toBe(
      '<tool_use_error>InputValidationError: questions must hold 1 to 4 questions; it has 5.</tool_use_error>',
    );
  });

  it('the schema itself keeps unknown fields (passthrough)', () => {
    const data = AskUserQuestionInputSchema.parse({ questions: [DB], extra: 1 });
    expect(data.extra).toBe(1);
  });
});

// ---- answered cards: updatedInput and tool_result -----------------------------------------

describe('answers (code engine updatedInput, messages engine tool_result)', () => {
  it('single choice', () => {
    const { updated, result } = answer(single, { q1: { selected: ['PostgreSQL'] } });
    expect(updated).toEqual({ questions: [DB], answers: { 'Which database?': 'PostgreSQL' } });
    expect(result).toBe(
      'Your questions have been answered: "Which database?"="PostgreSQL". You can now continue with these answers in mind.',
    );
  });

  it('multi-select with two labels, in option order', () => {
    const { updated, result } = answer(multi, { q1: { selected: ['SQLite', 'PostgreSQL'] } });
    expect(updated).toEqual({ questions: [DBS], answers: { 'Which databases?': 'PostgreSQL, SQLite' } });
    expect(result).toBe(
      'Your questions have been answered: "Which databases?"="PostgreSQL, SQLite". You can now continue with these answers in mind.',
    );
  });

  it('multi-select: a label containing ", " is quoted next to another label', () => {
    const { updated, result } = answer(multi, { q1: { selected: ['PostgreSQL', 'MySQL, MariaDB'] } });
    expect(updated.answers).toEqual({ 'Which databases?': 'PostgreSQL, "MySQL, MariaDB"' });
    expect(result).toBe(
      'Your questions have been answered: "Which databases?"="PostgreSQL, "MySQL, MariaDB"". You can now continue with these answers in mind.',
    );
  });

  it('multi-select: a label containing a double quote is written as JSON next to another label', () => {
    const input = { questions: [{ ...DBS, options: [{ label: 'PostgreSQL' }, { label: 'Say "hi"' }] }] };
    const { updated, result } = answer(input, { q1: { selected: ['PostgreSQL', 'Say "hi"'] } });
    expect(updated.answers).toEqual({ 'Which databases?': 'PostgreSQL, "Say \\"hi\\""' });
    expect(result).toBe(
      'Your questions have been answered: "Which databases?"="PostgreSQL, "Say \\"hi\\""". You can now continue with these answers in mind.',
    );
  });

  it('a label containing ", " picked alone is written raw', () => {
    for (const input of [single, multi]) {
      const q = input.questions[0].question;
      const { updated, result } = answer(input, { q1: { selected: ['MySQL, MariaDB'] } });
      expect(updated.answers).toEqual({ [q]: 'MySQL, MariaDB' });
      expect(result).toBe(`Your questions have been answered: "${q}"="MySQL, MariaDB". You can now continue with these answers in mind.`);
    }
  });

  it('free text only', () => {
    const { updated, result } = answer(single, { q1: { selected: [], text: 'Use DuckDB instead' } });
    expect(updated).toEqual({ questions: [DB], answers: { 'Which database?': 'Use DuckDB instead' } });
    expect(result).toBe(
      'The user answered: "Which database?"="Use DuckDB instead". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
  });

  it('free text is inserted verbatim: quotes and newlines unescaped', () => {
    const { result } = answer(single, { q1: { selected: [], text: 'Use "DuckDB"\nand nothing else' } });
    expect(result).toBe(
      'The user answered: "Which database?"="Use "DuckDB"\nand nothing else". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
  });

  it('labels plus text: labels first, then the text, always the free-text form', () => {
    const one = answer(single, { q1: { selected: ['PostgreSQL'], text: 'but v16 only' } });
    expect(one.updated.answers).toEqual({ 'Which database?': 'PostgreSQL, but v16 only' });
    expect(one.result).toBe(
      'The user answered: "Which database?"="PostgreSQL, but v16 only". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
    const several = answer(multi, { q1: { selected: ['MySQL, MariaDB', 'PostgreSQL'], text: 'DuckDB' } });
    expect(several.updated.answers).toEqual({ 'Which databases?': 'PostgreSQL, "MySQL, MariaDB", DuckDB' });
    expect(several.result).toBe(
      'The user answered: "Which databases?"="PostgreSQL, "MySQL, MariaDB", DuckDB". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
  });

  it('several questions, labels only', () => {
    const { updated, result } = answer(two, { q1: { selected: ['PostgreSQL'] }, q2: { selected: ['Redis'] } });
    expect(updated).toEqual({ questions: [DB, CACHE], answers: { 'Which database?': 'PostgreSQL', 'Which cache?': 'Redis' } });
    expect(result).toBe(
      'Your questions have been answered: "Which database?"="PostgreSQL", "Which cache?"="Redis". You can now continue with these answers in mind.',
    );
  });

  it('several questions, one label and one free text: the whole result is the free-text form', () => {
    const { updated, result } = answer(two, { q1: { selected: ['PostgreSQL'] }, q2: { selected: [], text: 'No cache for now' } });
    expect(updated.answers).toEqual({ 'Which database?': 'PostgreSQL', 'Which cache?': 'No cache for now' });
    expect(result).toBe(
      'The user answered: "Which database?"="PostgreSQL", "Which cache?"="No cache for now". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
  });

  it('the same free text for every question of a 2+ question card is a whole reply: response', () => {
    const text = 'I want to think about it, ask later';
    const { updated, result } = answer(two, { q1: { selected: [], text }, q2: { selected: [], text } });
    expect(updated).toEqual({ questions: [DB, CACHE], response: 'I want to think about it, ask later' });
    expect(updated).not.toHaveProperty('answers');
    expect(result).toBe('The user responded: I want to think about it, ask later');
  });

  it('different texts, or one question, are answers, not a whole reply', () => {
    const differ = answer(two, { q1: { selected: [], text: 'Later' }, q2: { selected: [], text: 'Never' } });
    expect(differ.updated).not.toHaveProperty('response');
    expect(differ.updated.answers).toEqual({ 'Which database?': 'Later', 'Which cache?': 'Never' });
    const lone = answer(single, { q1: { selected: [], text: 'Later' } });
    expect(lone.updated).not.toHaveProperty('response');
    expect(lone.result).toBe(
      'The user answered: "Which database?"="Later". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
  });

  it('several labels on a single-choice question (select several) read as free text, as in Claude Code', () => {
    const { updated, result } = answer(single, { q1: { selected: ['PostgreSQL', 'SQLite'] } }, { selectSeveral: true });
    expect(updated.answers).toEqual({ 'Which database?': 'PostgreSQL, SQLite' });
    expect(result).toBe(
      'The user answered: "Which database?"="PostgreSQL, SQLite". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
  });

  it('answers carry the labels as the model spelled them, not as the card shows them', () => {
    const input = { questions: [{ ...DBS, options: [{ label: ' PostgreSQL ' }, { label: 'sqlite' }, { label: 'SQLite' }] }] };
    const { updated, result } = answer(input, { q1: { selected: ['PostgreSQL', 'SQLite (2)'] } });
    expect(updated.answers).toEqual({ 'Which databases?': ' PostgreSQL , SQLite' });
    expect(result).toBe(
      'Your questions have been answered: "Which databases?"=" PostgreSQL , SQLite". You can now continue with these answers in mind.',
    );
  });

  it('a partial answer lists only the answered question', () => {
    const { updated, result } = answer(two, { q1: { selected: ['PostgreSQL'] } }, { raw: true });
    expect(updated.answers).toEqual({ 'Which database?': 'PostgreSQL' });
    expect(result).toBe(
      'Your questions have been answered: "Which database?"="PostgreSQL". You can now continue with these answers in mind.',
    );
  });

  it('keeps unknown extra fields in updatedInput', () => {
    const input = { title: 'Setup', metadata: { source: 'remember' }, questions: [{ ...DB, kind: 'choice' }] };
    const { updated } = answer(input, { q1: { selected: ['SQLite'] } });
    expect(updated).toEqual({
      title: 'Setup',
      metadata: { source: 'remember' },
      questions: [{ ...DB, kind: 'choice' }],
      answers: { 'Which database?': 'SQLite' },
    });
  });

  it('never passes on answers, annotations or response the model put in its own input', () => {
    const input = {
      questions: [DB],
      answers: { 'Which database?': 'SQLite' },
      annotations: { 'Which database?': { notes: 'made up' } },
      response: 'made up',
    };
    const done = answer(input, { q1: { selected: ['PostgreSQL'] } });
    expect(done.updated).toEqual({ questions: [DB], answers: { 'Which database?': 'PostgreSQL' } });
    const skipped = closed(input, 'skipped');
    expect(skipped.updated).toEqual({ questions: [DB] });
    expect(skipped.result).toBe('The user did not answer the questions.');
  });
});

// ---- Claude Code's own rendering of an updatedInput (measured with 2.1.332; notes not kept) ---

describe('claudeCodeToolResult', () => {
  const questions = [DBS, CACHE];
  const render = (extra: Record<string, unknown>) => claudeCodeToolResult(questions, { questions, ...extra });

  it('response wins even when answers are set; an empty response counts as no answer', () => {
    expect(render({ answers: { 'Which databases?': 'PostgreSQL' }, response: 'free reply' })).toBe('The user responded: free reply');
    expect(render({ response: '' })).toBe('The user did not answer the questions.');
    expect(render({ response: '  ' })).toBe('The user did not answer the questions.');
  });

  it('empty strings and unknown question keys are no answer', () => {
    expect(render({ answers: { 'Which databases?': '', 'Which cache?': '' } })).toBe('The user did not answer the questions.');
    expect(render({ answers: { 'Nope?': 'PostgreSQL' } })).toBe('The user did not answer the questions.');
    expect(render({ answers: {} })).toBe('The user did not answer the questions.');
  });

  it('matching is case-sensitive, and an unquoted label with ", " among others is not recognised', () => {
    expect(render({ answers: { 'Which databases?': 'postgresql' } })).toBe(
      'The user answered: "Which databases?"="postgresql". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
    expect(render({ answers: { 'Which databases?': 'PostgreSQL, MySQL, MariaDB' } })).toBe(
      'The user answered: "Which databases?"="PostgreSQL, MySQL, MariaDB". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.',
    );
  });

  it('lists answered questions in question order, not answer order', () => {
    expect(render({ answers: { 'Which cache?': 'Redis', 'Which databases?': 'SQLite' } })).toBe(
      'Your questions have been answered: "Which databases?"="SQLite", "Which cache?"="Redis". You can now continue with these answers in mind.',
    );
  });
});

// ---- no answer ----------------------------------------------------------------------------

describe('cards closed without an answer', () => {
  it.each(['skipped', 'expired', 'cancelled'] as const)('%s: no answers, "did not answer"', (status) => {
    const { updated, result } = closed(two, status);
    expect(updated).toEqual({ questions: [DB, CACHE] });
    expect(updated).not.toHaveProperty('answers');
    expect(result).toBe('The user did not answer the questions.');
  });
});

// ---- ExitPlanMode -------------------------------------------------------------------------

describe('plan approval (ExitPlanMode)', () => {
  const plan = { plan: '# Plan\n\n1. Use PostgreSQL\n2. Add migrations\n', planFilePath: '/home/u/.claude/plans/plan.md' };

  it('shows the plan on a human-only approval card', () => {
    expect(planApprovalDraft(plan)).toEqual({
      layout: 'steps',
      tool: 'ExitPlanMode',
      origin: 'native',
      kind: 'approval',
      questions: [
        {
          id: 'plan',
          header: 'Plan',
          text: 'Approve this plan?\n\n# Plan\n\n1. Use PostgreSQL\n2. Add migrations\n',
          options: [
            { label: 'Approve', description: 'Leave plan mode and start working' },
            { label: 'Keep planning', description: 'Stay in plan mode; say what to change in the text box' },
          ],
          multiSelect: false,
          freeText: true,
        },
      ],
    });
  });

  it('says so when there is no plan', () => {
    expect(planApprovalDraft({}).questions[0].text).toBe('Approve this plan?\n\n(the plan file is empty)');
    expect(planApprovalDraft(undefined).questions[0].text).toBe('Approve this plan?\n\n(the plan file is empty)');
    expect(planApprovalDraft({ plan: 42 }).questions[0].text).toBe('Approve this plan?\n\n(the plan file is empty)');
  });

  it('cuts a plan longer than a card can hold and says where the whole plan is', () => {
    const draft = planApprovalDraft({ plan: 'x'.repeat(6000), planFilePath: '/p/plan.md' });
    const [q] = normalizeQuestions(draft.questions, 'steps');
    expect(q.text).toHaveLength(4000);
    expect(q.text.endsWith('x…\n\n[The plan is cut here: it is longer than a card can show. The whole plan is in /p/plan.md.]')).toBe(true);
  });

  const decide = (answer: Answer | undefined, status: CardStatus = 'answered') =>
    planDecision(plan, cardFor(planApprovalDraft(plan), status, answer));

  it('Approve allows with the input unchanged', () => {
    const decision = decide({ plan: { selected: ['Approve'] } });
    expect(decision).toEqual({ behavior: 'allow', updatedInput: plan });
    expect(decision.behavior === 'allow' && decision.updatedInput).toBe(plan);
  });

  it('Keep planning denies, with the typed feedback when there is some', () => {
    expect(decide({ plan: { selected: ['Keep planning'] } })).toEqual({
      behavior: 'deny',
      message: 'The user wants to keep planning.',
    });
    expect(decide({ plan: { selected: ['Keep planning'], text: 'Use SQLite instead' } })).toEqual({
      behavior: 'deny',
      message: 'The user wants to keep planning. Their feedback: Use SQLite instead',
    });
  });

  it('free text alone denies with the requested changes', () => {
    expect(decide({ plan: { selected: [], text: 'Use SQLite instead' } })).toEqual({
      behavior: 'deny',
      message: 'The user wants changes to the plan: Use SQLite instead',
    });
  });

  it.each(['skipped', 'expired', 'cancelled'] as const)('%s denies: not approved', (status) => {
    expect(decide(undefined, status)).toEqual({ behavior: 'deny', message: 'The user did not approve the plan.' });
  });
});
