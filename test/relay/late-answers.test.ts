import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { RelayError } from '../../src/errors.js';
import { DELIVERY_GRACE_MS } from '../../src/relay/delivery.js';
import { Relay } from '../../src/relay/relay.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { codeOfAsync } from '../support/refusal.js';
import { waitUntil } from '../support/wait-until.js';

// Late answers and delivery states in the relay core, on a real SQLite file and a fake clock.

const HOUR = 3_600_000;
const question = { questions: [{ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }] };
const pick = (label: string) => ({ q1: { selected: [label] } });
const HUMAN = { kind: 'human' as const, id: 'operator', surface: 'web' };

let dir: string;
let clock: FakeClock;
let store: SqliteStore;
let relay: Relay;
let events: { name: string; card: Card }[];

const open = async () => {
  store = new SqliteStore(join(dir, 'askrelay.sqlite'));
  relay = new Relay({ store: asyncCards(store), clock, waits: { default: HOUR } });
  events = [];
  relay.events.subscribe((name, data) => name !== 'session.updated' && events.push({ name, card: data as Card }));
  await relay.start();
};
const restart = async () => {
  relay.stop();
  store.close();
  await open();
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-late-'));
  clock = new FakeClock();
  await open();
});

afterEach(() => {
  relay.stop();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function expiredCard(): Promise<Card> {
  const card = await relay.create(question);
  clock.advance(HOUR);
  await waitUntil(async () => (await relay.get(card.id)).status === 'expired', 'the expiry');
  return relay.get(card.id);
}

describe('late answers', () => {
  it('keeps a late answer on an expired card, which keeps its status; the answer starts out sent', async () => {
    const card = await expiredCard();
    clock.advance(5 * 60_000);
    const late = await relay.answerLate(card.id, pick('sqlite'), { by: HUMAN });
    const at = new Date(clock.now()).toISOString();
    expect(late.status).toBe('expired');
    expect(late.answer).toBeUndefined();
    expect(late.lateAnswer).toEqual({ answer: pick('SQLite'), answeredBy: HUMAN, lateAt: at });
    expect(late.delivery).toEqual({ state: 'sent', at });
    expect(await relay.get(card.id)).toEqual(late);
    expect(events.map((e) => e.name)).toEqual(['card.created', 'card.updated', 'card.late']);
  });

  it('takes one late answer: the same again is the stored card, a different one is 409 with the first', async () => {
    const card = await expiredCard();
    const first = await relay.answerLate(card.id, pick('SQLite'), { by: HUMAN });
    expect(await relay.answerLate(card.id, pick('SQLite'), { by: HUMAN })).toEqual(first);
    const err = await relay.answerLate(card.id, pick('PostgreSQL'), { by: HUMAN }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RelayError);
    expect((err as RelayError).code).toBe('already_answered');
    expect((err as RelayError).extra.card).toEqual(first);
    expect(events.filter((e) => e.name === 'card.late')).toHaveLength(1);
  });

  it('a cancelled card takes one too; a skipped card refuses (410); an open card takes it as its answer; a bad answer is 422', async () => {
    const cancelled = await relay.cancel((await relay.create(question)).id);
    expect((await relay.answerLate(cancelled.id, pick('SQLite'), { by: HUMAN })).lateAnswer?.answer).toEqual(pick('SQLite'));
    const skipped = await relay.skip((await relay.create(question)).id);
    expect(await codeOfAsync(() => relay.answerLate(skipped.id, pick('SQLite'), { by: HUMAN }))).toBe('card_closed');
    const open = await relay.create(question);
    const answered = await relay.answerLate(open.id, pick('SQLite'), { by: HUMAN });
    expect(answered).toMatchObject({ status: 'answered', answer: pick('SQLite') });
    expect(answered.lateAnswer).toBeUndefined();
    const expired = await expiredCard();
    expect(await codeOfAsync(() => relay.answerLate(expired.id, pick('MySQL'), { by: HUMAN }))).toBe('unknown_option');
    expect((await relay.get(expired.id)).lateAnswer).toBeUndefined();
  });

  it('a wait for late answers goes on past the expiry and ends with the late answer; an ordinary wait ends at the expiry', async () => {
    const card = await relay.create(question);
    const ordinary = relay.wait(card.id, 2 * HOUR);
    const late = relay.wait(card.id, 2 * HOUR, { late: true });
    let lateDone = false;
    void late.then(() => (lateDone = true));
    clock.advance(HOUR);
    expect((await ordinary)?.status).toBe('expired');
    // The late waiter was handed the expired card too (the same release), and kept waiting.
    await new Promise((r) => setImmediate(r));
    expect(lateDone).toBe(false);
    await relay.answerLate(card.id, pick('SQLite'), { by: HUMAN });
    expect((await late)?.lateAnswer?.answer).toEqual(pick('SQLite'));
  });
});

describe('delivery', () => {
  it('an answer is sent when committed and delivered when its waiter takes it, saying to whom, once', async () => {
    const card = await relay.create(question);
    const answered = await relay.answer(card.id, pick('SQLite'));
    expect(answered.delivery).toEqual({ state: 'sent', at: answered.closedAt });
    clock.advance(1000);
    const delivered = await relay.delivered(answered, 'long-poll');
    expect(delivered.delivery).toEqual({ state: 'delivered', at: new Date(clock.now()).toISOString(), to: 'long-poll' });
    expect(await relay.delivered(answered, 'session')).toEqual(delivered);
    expect(events.filter((e) => e.name === 'card.delivery').map((e) => e.card.delivery?.to)).toEqual(['long-poll']);
  });

  it('an expiry, a cancellation or an open card has no delivery, and nothing marks one', async () => {
    const expired = await expiredCard();
    const cancelled = await relay.cancel((await relay.create(question)).id);
    for (const card of [expired, cancelled]) {
      expect(card.delivery).toBeUndefined();
      expect((await relay.delivered(card, 'mcp')).delivery).toBeUndefined();
    }
    expect((await relay.skip((await relay.create(question)).id)).delivery?.state).toBe('sent');
  });

  it('an answer nobody took by the end of the card\'s wait is undelivered, and still delivered to a caller that comes back', async () => {
    const card = await relay.create(question);
    clock.advance(10 * 60_000);
    const answered = await relay.answer(card.id, pick('SQLite'));
    clock.advance(HOUR - 10 * 60_000 - 1);
    expect((await relay.get(card.id)).delivery?.state).toBe('sent');
    clock.advance(1);
    await waitUntil(() => events.some((e) => e.name === 'card.delivery'), 'the delivery event');
    expect((await relay.get(card.id)).delivery).toEqual({ state: 'undelivered', at: new Date(clock.now()).toISOString() });
    expect((await relay.delivered(answered, 'mcp')).delivery?.state).toBe('delivered');
  });

  it('an answer given just before the deadline still has the grace to be taken', async () => {
    const card = await relay.create(question);
    clock.advance(HOUR - 1000);
    await relay.answer(card.id, pick('SQLite'));
    clock.advance(DELIVERY_GRACE_MS - 1);
    expect((await relay.get(card.id)).delivery?.state).toBe('sent');
    clock.advance(1);
    await waitUntil(async () => (await relay.get(card.id)).delivery?.state === 'undelivered', 'undelivered');
  });

  it('after a restart (the timer was in memory) the first read of an overdue delivery says undelivered', async () => {
    const card = await relay.create(question);
    await relay.answer(card.id, pick('SQLite'));
    await restart();
    clock.advance(HOUR);
    expect(events).toEqual([]);
    expect((await relay.list())[0].delivery?.state).toBe('undelivered');
    expect(events.map((e) => `${e.name} ${e.card.delivery?.state}`)).toEqual(['card.delivery undelivered']);
  });

  it('a late answer nobody takes within the grace is undelivered; one to a session the relay runs waits for that session', async () => {
    const plain = await expiredCard();
    await relay.answerLate(plain.id, pick('SQLite'), { by: HUMAN });
    const ofSession = await relay.create({ ...question, sessionId: 's_1', toolCallId: 't1', engine: 'messages', provider: 'claude' });
    clock.advance(HOUR);
    await waitUntil(async () => (await relay.get(ofSession.id)).status === 'expired', 'the expiry');
    await relay.answerLate(ofSession.id, pick('SQLite'), { by: HUMAN });
    clock.advance(DELIVERY_GRACE_MS);
    await waitUntil(async () => (await relay.get(plain.id)).delivery?.state === 'undelivered', 'undelivered');
    expect((await relay.get(ofSession.id)).delivery?.state).toBe('sent');
  });
});
