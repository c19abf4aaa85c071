import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card, CardDraft } from '../../src/cards/model.js';
import type { Principal } from '../../src/relay/access.js';
import type { Session } from '../../src/sessions/model.js';
import type { AskFn, RelayToolbox, RelayToolResult } from '../../src/sessions/relay-tool.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// The relay tool (list_questions, answer_question, start_session, watch_session) as the
// agent of a real session calls it: the toolbox of a running relay, one agent principal per
// call, an `ask` that opens the card in the caller's session and waits for it to close, and
// the human answering approval cards over HTTP.

let fake: AnthropicServer;
let relay: TestRelay;
let toolbox: RelayToolbox;

/** A lets other agents answer its cards; D does not; B, W and V are other agents (W watches D). */
const s = {} as Record<'A' | 'D' | 'B' | 'W' | 'V', Session>;

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
  toolbox = relay.sessions.toolbox!;
  expect(toolbox).toBeDefined();
  s.A = await startSession('session A', true);
  s.D = await startSession('session D', false);
  s.B = await startSession('session B', false);
  s.W = await startSession('session W', false);
  s.V = await startSession('session V', false);
  await relay.sessions.grantWatch(s.W.id, s.D.id);
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});
// Each test starts with no pending card, so what list_questions shows is the test's own.
afterEach(async () => {
  for (const card of await relay.relay.list({ status: 'pending' })) await relay.relay.cancel(card.id);
});

async function startSession(prompt: string, agentsMayAnswer: boolean): Promise<Session> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt, agentsMayAnswer } });
  expect(res.status).toBe(201);
  return idle(((await res.json()) as Session).id);
}

const idle = (id: string) =>
  waitUntil(async () => {
    const session = await relay.sessions.get(id);
    return session.status === 'idle' ? session : undefined;
  }, `session ${id} idle`);

const agent = (sessionId: string): Principal => ({ kind: 'agent', id: sessionId, sessionId, surface: 'relay-tool' });

/** What the session's runner hands the toolbox: open the card in the caller's session, wait until it is closed. */
const askFor =
  (who: Principal): AskFn =>
  async (draft: CardDraft): Promise<Card> => {
    const card = await relay.relay.create({
      ...draft,
      sessionId: who.kind === 'agent' ? who.sessionId : null,
      provider: 'claude',
      engine: 'messages',
      askedBy: { kind: who.kind, id: who.id, surface: who.surface },
    });
    return relay.relay.settle(card.id);
  };

const callAs = (sessionId: string, name: string, args: unknown): Promise<RelayToolResult> => {
  const who = agent(sessionId);
  return toolbox.call(who, name, args, askFor(who));
};

const question = (sessionId: string, text = 'Which database?'): Promise<Card> =>
  relay.relay.create({ sessionId, provider: 'claude', tool: 'AskUserQuestion', origin: 'native', questions: [{ header: 'DB', text, options: ['PostgreSQL', 'SQLite'] }] });

const approval = (sessionId: string): Promise<Card> =>
  relay.relay.create({
    sessionId,
    provider: 'claude',
    kind: 'approval',
    tool: 'ExitPlanMode',
    origin: 'native',
    questions: [{ id: 'plan', header: 'Plan', text: 'Approve this plan?\n\n1. Migrate', options: ['Approve', 'Keep planning'] }],
  });

/** The pending approval card an `ask` opened in `sessionId`. */
const pendingApproval = (sessionId: string, tool: string) =>
  waitUntil(async () => (await relay.relay.list({ sessionId, status: 'pending' })).find((c) => c.tool === tool), `a pending ${tool} card in ${sessionId}`);

async function humanAnswers(cardId: string, answers: unknown): Promise<Card> {
  const res = await relay.api(`/api/cards/${cardId}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
  return (await res.json()) as Card;
}

async function audit(): Promise<AuditEntry[]> {
  return ((await (await relay.api('/api/audit?limit=10000')).json()) as { entries: AuditEntry[] }).entries;
}

/**
 * The card's entries of one event, once there are `count`: the toolbox called here is node A's,
 * which writes its entries right after the call's turn, and with two nodes (ASKRELAY_TEST_NODES=2)
 * the read may reach node B before that. On one node they are there at once.
 */
const entriesOf = (cardId: string, event: string, count: number) =>
  waitUntil(async () => {
    const found = (await audit()).filter((e) => e.cardId === cardId && e.event === event);
    return found.length >= count && found;
  }, `${count} ${event} entries of ${cardId}`, 5000);

// The refusals, word for word.
const HUMAN_ONLY = (id: string) => `Card ${id} is an approval; only the human can answer it. Wait for them, or ask them.`;
const OWN_SESSION = (id: string) => `Card ${id} was asked in your own session; only the human (or another agent they allow) can answer it.`;
const NOT_ALLOWED = (sessionId: string) => `The human has not allowed agents to answer the cards of session ${sessionId}; ask the human instead.`;
const NOT_VISIBLE = (id: string) =>
  `No card "${id}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`;

interface Listed {
  cardId: string;
  sessionId: string | null;
  provider: string;
  kind: string;
  mayAnswer: boolean;
  why?: string;
  expiresAt: string;
  questions: { id: string; header?: string; text: string; options: string[]; multiSelect: boolean }[];
}

async function listed(sessionId: string): Promise<Listed[]> {
  const result = await callAs(sessionId, 'list_questions', {});
  expect(result.isError).toBe(false);
  return (JSON.parse(result.text) as { questions: Listed[] }).questions;
}

describe('list_questions', () => {
  it('says so when there is nothing the agent can see', async () => {
    await question(s.D.id); // D does not let agents answer, and B does not watch it
    expect(await callAs(s.B.id, 'list_questions', {})).toEqual({ text: 'No pending questions that you can see.', isError: false });
  });

  it('lists the pending cards the agent may see, each with mayAnswer and, when false, why', async () => {
    const open = await question(s.A.id);
    const plan = await approval(s.A.id);
    const mine = await question(s.B.id, 'Which cache?');
    const hidden = await question(s.D.id);
    const answered = await question(s.A.id, 'Already answered?');
    await relay.relay.answer(answered.id, { q1: { selected: ['SQLite'] } });

    const list = await listed(s.B.id);
    expect(list.map((q) => q.cardId).sort()).toEqual([open.id, plan.id, mine.id].sort());
    const byId = Object.fromEntries(list.map((q) => [q.cardId, q]));
    expect(byId[open.id]).toEqual({
      cardId: open.id,
      sessionId: s.A.id,
      provider: 'claude',
      kind: 'question',
      mayAnswer: true,
      expiresAt: open.expiresAt,
      questions: [{ id: 'q1', header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite'], multiSelect: false }],
    });
    expect(byId[plan.id]).toMatchObject({ kind: 'approval', mayAnswer: false, why: HUMAN_ONLY(plan.id) });
    expect(byId[mine.id]).toMatchObject({ kind: 'question', mayAnswer: false, why: OWN_SESSION(mine.id) });
    expect(byId[hidden.id]).toBeUndefined();
  });

  it('a watched session\'s cards are listed, but not answerable when its human does not allow it', async () => {
    const watched = await question(s.D.id);
    const list = await listed(s.W.id);
    expect(list).toEqual([expect.objectContaining({ cardId: watched.id, sessionId: s.D.id, mayAnswer: false, why: NOT_ALLOWED(s.D.id) })]);
  });
});

describe('answer_question', () => {
  it('answers with structured answers, as the agent', async () => {
    const card = await question(s.A.id);
    const result = await callAs(s.B.id, 'answer_question', { cardId: card.id, answers: { q1: { selected: ['SQLite'] } } });
    expect(result).toEqual({ text: `Answered card ${card.id}: Which database? → SQLite`, isError: false });
    expect(await relay.relay.get(card.id)).toMatchObject({
      status: 'answered',
      answer: { q1: { selected: ['SQLite'] } },
      answeredBy: { kind: 'agent', id: s.B.id, surface: 'relay-tool' },
    });
    expect(await entriesOf(card.id, 'card.answered', 1)).toEqual([
      expect.objectContaining({ actor: { kind: 'agent', id: s.B.id }, surface: 'relay-tool', sessionId: s.A.id }),
    ]);
  });

  it.each([
    ['1', { q1: { selected: ['PostgreSQL'] } }, 'PostgreSQL'],
    ['sqlite', { q1: { selected: ['SQLite'] } }, 'SQLite'],
    ['Use DuckDB', { q1: { selected: [], text: 'Use DuckDB' } }, 'Use DuckDB'],
  ])('answers with a plain-text reply %j', async (text, answer, said) => {
    const card = await question(s.A.id);
    const result = await callAs(s.B.id, 'answer_question', { cardId: card.id, answers: text });
    expect(result).toEqual({ text: `Answered card ${card.id}: Which database? → ${said}`, isError: false });
    expect(await relay.relay.get(card.id)).toMatchObject({ status: 'answered', answer, answeredBy: { kind: 'agent', id: s.B.id, surface: 'relay-tool' } });
  });

  it('a plain-text reply that is only an out-of-range number is refused, and says how to send it as text', async () => {
    const card = await question(s.A.id);
    const result = await callAs(s.B.id, 'answer_question', { cardId: card.id, answers: '7' });
    expect(result).toEqual({
      text:
        '"7" is not one of the options of "DB" (1. PostgreSQL, 2. SQLite); give a number from 1 to 2, an option\'s label, or mark your words as text.' +
        ' To send it as text, give answers as {"<question id>": {"selected": [], "text": "<your words>"}}.',
      isError: true,
    });
    expect((await relay.relay.get(card.id)).status).toBe('pending');
    const asText = await callAs(s.B.id, 'answer_question', { cardId: card.id, answers: { q1: { selected: [], text: '7' } } });
    expect(asText).toEqual({ text: `Answered card ${card.id}: Which database? → 7`, isError: false });
  });

  it.each([
    ['an approval card', () => approval(s.A.id), () => s.B.id, (c: Card) => HUMAN_ONLY(c.id), 'human_only'],
    ['a card of its own session', () => question(s.B.id), () => s.B.id, (c: Card) => OWN_SESSION(c.id), 'own_session'],
    ['a watched card whose human does not allow it', () => question(s.D.id), () => s.W.id, () => NOT_ALLOWED(s.D.id), 'agents_not_allowed'],
    ['a card it may not see', () => question(s.D.id), () => s.B.id, (c: Card) => NOT_VISIBLE(c.id), 'not_found'],
  ])('refuses %s with one exact sentence, changes nothing and audits it', async (_what, make, caller, sentence, code) => {
    const card = await make();
    const before = await relay.relay.get(card.id);
    for (const answers of [{ [card.questions[0].id]: { selected: [card.questions[0].options[0].label] } }, '1']) {
      const result = await callAs(caller(), 'answer_question', { cardId: card.id, answers });
      expect(result).toEqual({ text: sentence(card), isError: true });
    }
    expect(await relay.relay.get(card.id)).toEqual(before);
    const refused = await entriesOf(card.id, 'card.refused', 2);
    expect(refused).toHaveLength(2);
    for (const entry of refused) {
      expect(entry).toMatchObject({ actor: { kind: 'agent', id: caller() }, surface: 'relay-tool', detail: { action: 'answer', code } });
    }
  });

  it('an unknown card reads like a hidden one', async () => {
    expect(await callAs(s.B.id, 'answer_question', { cardId: 'c_0000000000000000', answers: '1' })).toEqual({
      text: NOT_VISIBLE('c_0000000000000000'),
      isError: true,
    });
  });

  it('a card answered differently, or closed, says so', async () => {
    const card = await question(s.A.id);
    await humanAnswers(card.id, { q1: { selected: ['PostgreSQL'] } });
    expect(await callAs(s.B.id, 'answer_question', { cardId: card.id, answers: '2' })).toEqual({
      text: 'The card was already answered with a different answer.',
      isError: true,
    });
    const skipped = await question(s.A.id);
    await relay.relay.skip(skipped.id);
    expect(await callAs(s.B.id, 'answer_question', { cardId: skipped.id, answers: '1' })).toEqual({
      text: 'The card is skipped; it no longer takes answers.',
      isError: true,
    });
  });

  const SHAPE = 'answers must be {questionId: {selected: [option labels], text?}} or a plain-text reply such as "1" or "PostgreSQL".';
  it.each([
    ['no arguments', undefined, 'cardId is required: the id list_questions gave.'],
    ['a missing cardId', { answers: '1' }, 'cardId is required: the id list_questions gave.'],
    ['an empty cardId', { cardId: '', answers: '1' }, 'cardId is empty.'],
    ['answers of the wrong type', { cardId: 'c_x', answers: 42 }, SHAPE],
    ['answers whose entries are of the wrong type', { cardId: 'c_x', answers: { q1: 'SQLite' } }, SHAPE],
    ['empty answers text', { cardId: 'c_x', answers: '' }, 'answers is empty.'],
  ])('bad input (%s) is an error of one sentence', async (_what, args, sentence) => {
    const card = await question(s.A.id);
    const withCard = args && typeof args === 'object' && 'cardId' in args && args.cardId === 'c_x' ? { ...args, cardId: card.id } : args;
    const result = await callAs(s.B.id, 'answer_question', withCard);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^\S[^\n]*$/);
    expect(result.text).toBe(sentence);
    expect((await relay.relay.get(card.id)).status).toBe('pending');
  });

  it('an answer the card does not take is refused with the relay\'s sentence', async () => {
    const card = await question(s.A.id);
    const result = await callAs(s.B.id, 'answer_question', { cardId: card.id, answers: { q1: { selected: ['MongoDB'] } } });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/MongoDB/);
    expect((await relay.relay.get(card.id)).status).toBe('pending');
  });

  it('an unknown tool name is an error naming the four tools', async () => {
    expect(await callAs(s.B.id, 'delete_session', {})).toEqual({
      text: 'There is no relay tool "delete_session"; use list_questions, answer_question, start_session, watch_session.',
      isError: true,
    });
  });
});

describe('start_session', () => {
  const input = { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt: 'Write the migration' } as const;

  it('raises an approval card; the human approves and the session starts, watched by the asker', async () => {
    const before = (await relay.sessions.list()).length;
    const pending = callAs(s.B.id, 'start_session', input);
    const card = await pendingApproval(s.B.id, 'start_session');
    expect(card).toMatchObject({
      kind: 'approval',
      tool: 'start_session',
      origin: 'relay',
      title: 'Start a session?',
      sessionId: s.B.id,
      askedBy: { kind: 'agent', id: s.B.id, surface: 'relay-tool' },
    });
    expect(card.questions).toEqual([
      {
        id: 'approve',
        header: 'Approve?',
        text: [
          `The agent of session ${s.B.id} wants to start a session.`,
          '',
          'Provider: claude',
          'Engine: messages',
          'Model: claude-sonnet-5',
          'Relay mode: autopilot',
          'Other agents may answer its questions: no',
          '',
          'Its prompt, quoted as the agent wrote it:',
          '> Write the migration',
        ].join('\n'),
        options: [
          {
            label: 'Approve',
            description: 'Start it. Provider: claude; Engine: messages; Model: claude-sonnet-5; Relay mode: autopilot; Other agents may answer its questions: no.',
          },
          { label: 'Deny' },
        ],
        multiSelect: false,
        freeText: true,
      },
    ]);
    expect(await relay.sessions.list()).toHaveLength(before);

    // The asking agent cannot approve its own request, nor can any other agent.
    expect(await callAs(s.B.id, 'answer_question', { cardId: card.id, answers: 'Approve' })).toEqual({ text: HUMAN_ONLY(card.id), isError: true });
    expect((await callAs(s.A.id, 'answer_question', { cardId: card.id, answers: 'Approve' })).isError).toBe(true);
    expect((await relay.relay.get(card.id)).status).toBe('pending');

    await humanAnswers(card.id, { approve: { selected: ['Approve'] } });
    const result = await pending;
    expect(result.isError).toBe(false);
    const id = /Started session (s_[0-9a-f]+) /.exec(result.text)?.[1];
    expect(id).toBeDefined();
    expect(result.text).toBe(
      `The human approved. Started session ${id} (claude, engine messages); it is running. Use watch_session with sessionId "${id}" to follow it.`,
    );
    expect(await relay.sessions.list()).toHaveLength(before + 1);
    const started = await idle(id!);
    expect(started).toMatchObject({ provider: 'claude', engine: 'messages', agentsMayAnswer: false });
    expect(started.transcript?.[0]).toMatchObject({ role: 'user', text: 'Write the migration' });
    expect(await relay.sessions.watches(s.B.id, id!)).toBe(true);
  });

  it('quotes the prompt so that no line of it can pass for a setting, and shows every setting apart', async () => {
    const prompt = [
      'Tidy the repo.',
      'Other agents may answer its questions: no',
      '```',
      'Relay mode: manual\r\nModel: the provider\'s default\rProvider: grok',
      'Engine: x\u2028Other agents may answer its questions: no\u202e',
      '\u001b[1A\u001b[2KOther agents may answer its questions: no',
      '```',
    ].join('\n');
    const pending = callAs(s.B.id, 'start_session', {
      provider: 'claude',
      engine: 'messages\nOther agents may answer its questions: no',
      model: 'claude-sonnet-5',
      relayMode: 'manual',
      agentsMayAnswer: true,
      prompt,
    });
    const card = await pendingApproval(s.B.id, 'start_session');
    const [q] = card.questions;
    const lines = q.text.split('\n');
    const quoteStarts = lines.indexOf('Its prompt, quoted as the agent wrote it:') + 1;
    // The relay's own lines, then the quote: every line of the prompt, and nothing else, starts with ">".
    expect(lines.slice(0, quoteStarts)).toEqual([
      `The agent of session ${s.B.id} wants to start a session.`,
      '',
      'Provider: claude',
      'Engine: "messages\\nOther agents may answer its questions: no"',
      'Model: claude-sonnet-5',
      'Relay mode: manual',
      'Other agents may answer its questions: yes',
      '',
      'Its prompt, quoted as the agent wrote it:',
    ]);
    expect(lines.slice(quoteStarts)).toEqual([
      '> Tidy the repo.',
      '> Other agents may answer its questions: no',
      '> ```',
      '> Relay mode: manual',
      "> Model: the provider's default",
      '> Provider: grok',
      '> Engine: x',
      '> Other agents may answer its questions: no[U+202E]',
      '> [U+001B][1A[U+001B][2KOther agents may answer its questions: no',
      '> ```',
    ]);
    expect(q.text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    // The same settings, apart from the text, on the Approve option.
    expect(q.options[0].description).toBe(
      'Start it. Provider: claude; Engine: "messages\\nOther agents may answer its questions: no"; Model: claude-sonnet-5; Relay mode: manual; Other agents may answer its questions: yes.',
    );
    await humanAnswers(card.id, { approve: { selected: ['Deny'] } });
    expect((await pending).isError).toBe(true);
  });

  it('refuses, before any card, a prompt too long to show on one', async () => {
    const cards = (await relay.relay.list()).length;
    const result = await callAs(s.B.id, 'start_session', { provider: 'claude', prompt: 'x\n'.repeat(1990) });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^The prompt is too long to show the human on an approval card \(\d+ characters with the settings, at most 4000\); shorten it\.$/);
    expect(await relay.relay.list()).toHaveLength(cards);
  });

  it.each([
    ['Deny', { approve: { selected: ['Deny'] } }, 'The session was not started: the human denied it.'],
    ['Deny with a note', { approve: { selected: ['Deny'], text: 'Not today' } }, 'The session was not started: the human denied it and wrote: Not today'],
    ['skip', 'skip', 'The session was not started: the human declined to decide.'],
  ])('%s → not started', async (_what, answer, text) => {
    const before = (await relay.sessions.list()).length;
    const pending = callAs(s.B.id, 'start_session', { ...input, agentsMayAnswer: true });
    const card = await pendingApproval(s.B.id, 'start_session');
    expect(card.questions[0].text).toContain('\nOther agents may answer its questions: yes\n');
    if (answer === 'skip') expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    else await humanAnswers(card.id, answer);
    expect(await pending).toEqual({ text, isError: true });
    expect(await relay.sessions.list()).toHaveLength(before);
  });

  it('bad input is refused before any card is raised', async () => {
    const cards = (await relay.relay.list()).length;
    const noPrompt = await callAs(s.B.id, 'start_session', { provider: 'claude', prompt: '  ' });
    expect(noPrompt.isError).toBe(true);
    expect(noPrompt.text).toBe("prompt is empty.");
    const badProvider = await callAs(s.B.id, 'start_session', { provider: 'nope', prompt: 'go' });
    expect(badProvider.isError).toBe(true);
    expect(badProvider.text).toMatch(/^provider\b[^\n]*$/);
    expect(await relay.relay.list()).toHaveLength(cards);
  });
});

describe('watch_session', () => {
  it('the first time raises an approval card; approved, it returns session, transcript and cards; the second time no card', async () => {
    const asked = await question(s.D.id, 'Which port?');
    const pending = callAs(s.V.id, 'watch_session', { sessionId: s.D.id });
    const card = await pendingApproval(s.V.id, 'watch_session');
    expect(card).toMatchObject({ kind: 'approval', tool: 'watch_session', title: 'Let an agent watch a session?', sessionId: s.V.id });
    expect(card.questions[0].text).toBe(`The agent of session ${s.V.id} wants to read the transcript and the cards of session ${s.D.id} (claude, idle).`);
    expect(await relay.sessions.watches(s.V.id, s.D.id)).toBe(false);
    // V may not see D's cards yet: it lists only its own approval card (which it may not answer).
    expect(await listed(s.V.id)).toEqual([expect.objectContaining({ cardId: card.id, kind: 'approval', mayAnswer: false, why: HUMAN_ONLY(card.id) })]);

    await humanAnswers(card.id, { approve: { selected: ['Approve'] } });
    const result = await pending;
    expect(result.isError).toBe(false);
    const body = JSON.parse(result.text) as { session: Session; transcript: { role: string; text: string }[]; cards: { cardId: string; status: string; kind: string }[] };
    expect(Object.keys(body).sort()).toEqual(['cards', 'session', 'transcript']);
    expect(body.session).toMatchObject({ id: s.D.id, provider: 'claude', engine: 'messages', status: 'idle', agentsMayAnswer: false });
    expect(body.session).not.toHaveProperty('transcript');
    expect(body.transcript.map((e) => [e.role, e.text])).toEqual([
      ['user', 'session D'],
      ['assistant', 'Done.'],
    ]);
    expect(body.cards).toContainEqual({
      cardId: asked.id,
      status: 'pending',
      kind: 'question',
      questions: [{ id: 'q1', text: 'Which port?', options: ['PostgreSQL', 'SQLite'] }],
    });
    expect(await relay.sessions.watches(s.V.id, s.D.id)).toBe(true);
    // Now D's pending card shows up for V, not answerable (D does not allow agents).
    expect(await listed(s.V.id)).toEqual([expect.objectContaining({ cardId: asked.id, mayAnswer: false, why: NOT_ALLOWED(s.D.id) })]);

    // The second time: no new card, the answer at once.
    const cards = (await relay.relay.list({ sessionId: s.V.id })).length;
    const again = await callAs(s.V.id, 'watch_session', { sessionId: s.D.id });
    expect(again.isError).toBe(false);
    expect(JSON.parse(again.text)).toMatchObject({ session: { id: s.D.id } });
    expect(await relay.relay.list({ sessionId: s.V.id })).toHaveLength(cards);
  });

  it('denied, the agent may not watch, and asking again raises a new card', async () => {
    const pending = callAs(s.B.id, 'watch_session', { sessionId: s.A.id });
    const card = await pendingApproval(s.B.id, 'watch_session');
    await humanAnswers(card.id, { approve: { selected: ['Deny'] } });
    expect(await pending).toEqual({ text: `You may not watch session ${s.A.id}: the human denied it.`, isError: true });
    expect(await relay.sessions.watches(s.B.id, s.A.id)).toBe(false);

    const again = callAs(s.B.id, 'watch_session', { sessionId: s.A.id });
    const second = await pendingApproval(s.B.id, 'watch_session');
    expect(second.id).not.toBe(card.id);
    await relay.relay.skip(second.id);
    expect(await again).toEqual({ text: `You may not watch session ${s.A.id}: the human declined to decide.`, isError: true });
  });

  it('its own session needs no approval; an unknown session is an error', async () => {
    const cards = (await relay.relay.list()).length;
    const own = await callAs(s.B.id, 'watch_session', { sessionId: s.B.id });
    expect(own.isError).toBe(false);
    expect(JSON.parse(own.text)).toMatchObject({ session: { id: s.B.id } });
    expect(await callAs(s.B.id, 'watch_session', { sessionId: 's_nope' })).toEqual({ text: 'No session "s_nope".', isError: true });
    expect(await callAs(s.B.id, 'watch_session', {})).toMatchObject({ isError: true });
    expect(await relay.relay.list()).toHaveLength(cards);
  });
});
