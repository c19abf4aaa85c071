import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS, type Card, type CardInput } from '../../src/cards/model.js';
import { Inbox } from '../../src/channels/inbox.js';
import { HUMAN_OPERATOR, sessionFacts } from '../../src/relay/access.js';
import { CardAccess } from '../../src/relay/card-access.js';
import { Relay } from '../../src/relay/relay.js';
import { asyncChannels } from '../../src/store/channel-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { asyncCards } from '../../src/store/store.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Issue 13, item 1: a plain-text reply costs time in proportion to its length, and one over
// the answer limit is refused before any of it is read, on every way a reply comes in: the
// HTTP route, the relay tool's string answers and chat replies.

const TOO_LONG = 'x,'.repeat(LIMITS.answerTextChars / 2) + 'x';
const COLORS: CardInput = { questions: [{ text: 'Colors?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] };

let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterAll(() => relay.stop());

async function create(input: CardInput = COLORS): Promise<Card> {
  const res = await relay.api('/api/cards', { method: 'POST', json: input });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

const reply = (id: string, text: string) => relay.api(`/api/cards/${id}/reply`, { method: 'POST', json: { text } });

describe('POST /api/cards/:id/reply with long replies', () => {
  // The parser that tried every run of parts took 68 s here; a linear one takes milliseconds.
  // The bound sits far from both, so a loaded machine cannot decide the test (the parser's
  // growth with the reply's length is pinned by reply-parser-cost.test.ts).
  it('answers a 16 KB list without holding up the relay: /api/health answers meanwhile', { timeout: 60_000 }, async () => {
    const card = await create();
    const text = 'x,'.repeat(8 * 1024);
    const started = performance.now();
    const replied = reply(card.id, text).then(async (res) => ({ status: res.status, body: (await res.json()) as Card, ms: performance.now() - started }));
    const health = fetch(new URL('/api/health', relay.url)).then(async (res) => ({ status: res.status, body: await res.json(), ms: performance.now() - started }));
    const [answered, healthy] = await Promise.all([replied, health]);
    expect(answered.status).toBe(200);
    expect(answered.body.answer).toEqual({ q1: { selected: [], text } });
    expect(answered.ms).toBeLessThan(10_000);
    expect(healthy).toMatchObject({ status: 200, body: { ok: true } });
    expect(healthy.ms).toBeLessThan(10_000);
  });

  it('refuses a reply over the answer limit with 422 before reading it, and the card stays open', async () => {
    const card = await create();
    const res = await reply(card.id, TOO_LONG);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: { code: 'invalid_answer', message: `The reply is ${TOO_LONG.length} characters long; at most ${LIMITS.answerTextChars} are read. Shorten it.` },
    });
    expect(((await (await relay.api(`/api/cards/${card.id}`)).json()) as Card).status).toBe('pending');
    // Exactly at the limit it is read.
    const limit = 'x'.repeat(LIMITS.answerTextChars);
    expect((await reply(card.id, limit)).status).toBe(200);
  });

  it('refuses it through the relay tool (answer_question with a string) as a tool error', async () => {
    const card = await create();
    const toolbox = relay.sessions.toolbox!;
    const result = await toolbox.call(HUMAN_OPERATOR('relay-tool'), 'answer_question', { cardId: card.id, answers: TOO_LONG }, () => {
      throw new Error('answer_question never asks');
    });
    expect(result).toEqual({ isError: true, text: `The reply is ${TOO_LONG.length} characters long; at most ${LIMITS.answerTextChars} are read. Shorten it.` });
    expect((await relay.relay.get(card.id)).status).toBe('pending');
  });
});

describe('a chat reply over the answer limit', () => {
  it('is refused with a notice and changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-reply-'));
    const store = new SqliteStore(join(dir, 'askrelay.sqlite'));
    try {
      const core = new Relay({ store: asyncCards(store), waits: { default: 3_600_000 } });
      const access = new CardAccess(core, sessionFacts(asyncSessions(store.sessions)), store.audit);
      const inbox = new Inbox({ channel: 'slack', access, audit: store.audit, store: asyncChannels(store.channels), answerers: ['*'], now: () => Date.now() });
      const card = await core.create(COLORS);
      const outcome = await inbox.reply({ user: 'U1', cardId: card.id, text: TOO_LONG });
      expect(outcome).toEqual({ kind: 'invalid', notice: expect.stringContaining(`at most ${LIMITS.answerTextChars} are read`) });
      expect((await core.get(card.id)).status).toBe('pending');
      core.stop();
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
