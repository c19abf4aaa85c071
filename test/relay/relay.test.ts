import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { RelayError } from '../../src/errors.js';
import { cardIdFor, EXPIRY_RETRY_MS, Relay } from '../../src/relay/relay.js';
import { SqliteStore, type SqliteOptions } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { codeOfAsync } from '../support/refusal.js';
import { lockSqliteFile } from '../support/sqlite-locker.js';
import { waitUntil } from '../support/wait-until.js';

const HOUR = 3_600_000;
const question = { questions: [{ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }] };
const pick = (label: string) => ({ q1: { selected: [label] } });
/** Lets pending promise continuations run (a wait registers its timer after its first read). */
const settled = () => new Promise((r) => setImmediate(r));

let dir: string;
let clock: FakeClock;
let store: SqliteStore;
let relay: Relay;

const open = (options: SqliteOptions = {}) => {
  store = new SqliteStore(join(dir, 'askrelay.sqlite'), options);
  relay = new Relay({ store: asyncCards(store), clock, waits: { default: 8 * HOUR } });
  return relay.start();
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-relay-'));
  clock = new FakeClock();
  await open();
});

afterEach(() => {
  relay.stop();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});


describe('creating', () => {
  it('stores a pending card that expires after the default wait, or after the wait its draft gives (an engine\'s own)', async () => {
    const card = await relay.create(question);
    expect(card.status).toBe('pending');
    expect(Date.parse(card.expiresAt) - Date.parse(card.createdAt)).toBe(8 * HOUR);
    const ext = await relay.create({ ...question, engine: 'extension', provider: 'copilot', waitSeconds: 2 * 3600 });
    expect(Date.parse(ext.expiresAt) - Date.parse(ext.createdAt)).toBe(2 * HOUR);
    expect(await relay.get(card.id)).toEqual(card);
  });

  it('re-attaches a re-sent tool call to the same card instead of making a second one', async () => {
    const events: string[] = [];
    relay.events.subscribe((name) => events.push(name));
    const a = await relay.create({ ...question, sessionId: 's1', toolCallId: 'call_1' });
    clock.advance(1000);
    const b = await relay.create({ ...question, sessionId: 's1', toolCallId: 'call_1' });
    expect(b).toEqual(a);
    expect(a.id).toBe(cardIdFor('s1', 'call_1'));
    expect(cardIdFor('s2', 'call_1')).not.toBe(a.id);
    expect(await relay.list()).toHaveLength(1);
    expect(events).toEqual(['card.created']);
  });

  it('refuses a wait beyond 7 days', async () => {
    expect(await codeOfAsync(() => relay.create({ ...question, waitSeconds: 8 * 24 * 3600 }))).toBe('invalid_card');
  });
});

describe('expiry', () => {
  it('expires a card exactly at its deadline and tells its waiters', async () => {
    const card = await relay.create({ ...question, waitSeconds: 60 });
    const waiting = relay.wait(card.id, 10 * HOUR);
    await settled();
    clock.advance(59_999);
    expect((await relay.get(card.id)).status).toBe('pending');
    clock.advance(1);
    const closed = await waiting;
    expect(closed?.status).toBe('expired');
    expect(closed?.closedAt).toBe(card.expiresAt);
    expect(await codeOfAsync(() => relay.answer(card.id, pick('SQLite')))).toBe('card_closed');
  });

  it('keeps one timer for any number of pending cards', async () => {
    for (let i = 0; i < 50; i++) await relay.create({ ...question, waitSeconds: 60 + i });
    expect(clock.timerCount).toBe(1);
    expect(relay.pendingCount).toBe(50);
    clock.advance(60_000 + 24_500);
    await settled(); // the timer's expiries commit asynchronously
    expect(await relay.list({ status: 'expired' })).toHaveLength(25);
    expect(await relay.list({ status: 'pending' })).toHaveLength(25);
  });

  it('re-arms stored deadlines after a restart and expires what ran out while down', async () => {
    const short = await relay.create({ ...question, waitSeconds: 60 });
    const long = await relay.create({ ...question, waitSeconds: 3600 });
    relay.stop();
    store.close();
    clock.advance(120_000); // the relay is down while the short card's deadline passes
    const recovered = await open();
    expect(recovered.expired.map((c) => c.id)).toEqual([short.id]);
    expect(recovered.pending).toBe(1);
    expect((await relay.get(short.id)).status).toBe('expired');
    expect(await relay.get(long.id)).toEqual(long);
    clock.advance(3600_000);
    expect((await relay.get(long.id)).status).toBe('expired');
  });

  it('an expiry the store does not take (its file locked by another program) is tried again until it does', async () => {
    relay.stop();
    store.close();
    // A short wait for the lock: the relay's 5 s would only make the test slower.
    await open({ busyTimeoutMs: 50 });
    const card = await relay.create({ ...question, waitSeconds: 60 });
    const closed: Card[] = [];
    relay.events.subscribe((name, data) => void (name === 'card.updated' && closed.push(data as Card)));
    const lock = await lockSqliteFile(join(dir, 'askrelay.sqlite'));
    try {
      clock.advance(60_000);
      // The timer took the deadline; the failed expiry puts it back, a second later.
      expect(relay.pendingCount).toBe(0);
      await waitUntil(() => relay.pendingCount === 1, 'the failed expiry to be armed again');
      clock.advance(EXPIRY_RETRY_MS);
      expect(relay.pendingCount).toBe(0);
      await waitUntil(() => relay.pendingCount === 1, 'the second failed expiry to be armed again');
      expect(closed).toEqual([]);
    } finally {
      await lock.release();
    }
    clock.advance(EXPIRY_RETRY_MS);
    await waitUntil(() => closed[0], 'the card to expire');
    expect(closed).toEqual([{ ...card, status: 'expired', closedAt: card.expiresAt }]);
    expect(relay.pendingCount).toBe(0);
  });

  it('a read that notices a passed deadline expires the card even before the timer fires', async () => {
    const card = await relay.create({ ...question, waitSeconds: 10 });
    const other = await relay.create({ ...question, waitSeconds: 10 });
    relay.stop(); // no timer any more
    clock.advance(11_000);
    expect((await relay.get(card.id)).status).toBe('expired');
    expect(await relay.list({ status: 'pending' })).toEqual([]);
    expect((await relay.list({ status: 'expired' })).map((c) => c.id)).toEqual([card.id, other.id]);
  });
});

describe('answering', () => {
  it('commits the first answer and hands it to every waiter', async () => {
    const card = await relay.create(question);
    const waiters = [relay.wait(card.id, HOUR), relay.wait(card.id, HOUR)];
    await settled();
    const answered = await relay.answer(card.id, pick('sqlite'));
    expect(answered.status).toBe('answered');
    expect(answered.answer).toEqual(pick('SQLite'));
    expect(answered.answeredBy).toEqual({ kind: 'human', id: 'operator', surface: 'api' });
    for (const w of await Promise.all(waiters)) expect(w).toEqual(answered);
    expect(relay.pendingCount).toBe(0);
  });

  it('first answer wins exactly once: same answer is accepted again, a different one is 409 with the winner', async () => {
    const card = await relay.create(question);
    const events: Card[] = [];
    relay.events.subscribe((name, data) => name === 'card.updated' && events.push(data as Card));
    const first = await relay.answer(card.id, pick('SQLite'), { idempotencyKey: 'k1' });
    expect(await relay.answer(card.id, pick('SQLite'))).toEqual(first);
    expect(await relay.answer(card.id, pick('SQLite'), { idempotencyKey: 'k1' })).toEqual(first);
    expect(await relay.answer(card.id, pick('SQLite'), { idempotencyKey: 'other' })).toEqual(first);
    try {
      await relay.answer(card.id, pick('PostgreSQL'));
      throw new Error('expected 409');
    } catch (err) {
      expect((err as RelayError).code).toBe('already_answered');
      expect((err as RelayError).extra.card).toEqual(first);
    }
    expect(await codeOfAsync(() => relay.answer(card.id, pick('PostgreSQL'), { idempotencyKey: 'k1' }))).toBe('idempotency_key_reused');
    expect(events).toHaveLength(1);
    expect(await relay.get(card.id)).toEqual(first);
  });

  it('an invalid answer changes nothing', async () => {
    const card = await relay.create(question);
    expect(await codeOfAsync(() => relay.answer(card.id, pick('MySQL')))).toBe('unknown_option');
    expect(await codeOfAsync(() => relay.answer(card.id, { q1: { selected: [], text: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' } }))).toBe(
      'credential_refused',
    );
    expect(await relay.get(card.id)).toEqual(card);
  });

  it('answers survive a restart', async () => {
    const card = await relay.create(question);
    const answered = await relay.answer(card.id, pick('PostgreSQL'));
    relay.stop();
    store.close();
    await open();
    expect(await relay.get(card.id)).toEqual(answered);
  });

  it('an answer committed by another process first is judged against the stored winner', async () => {
    const card = await relay.create(question);
    const other = new SqliteStore(join(dir, 'askrelay.sqlite'));
    const rival = new Relay({ store: asyncCards(other), clock, waits: { default: HOUR } });
    await rival.answer(card.id, pick('PostgreSQL'));
    expect(await codeOfAsync(() => relay.answer(card.id, pick('SQLite')))).toBe('already_answered');
    expect((await relay.answer(card.id, pick('PostgreSQL'))).answer).toEqual(pick('PostgreSQL'));
    other.close();
  });
});

describe('skip, cancel and wait', () => {
  it('skip is idempotent, refused after an answer, gone after expiry', async () => {
    const a = await relay.create(question);
    expect((await relay.skip(a.id)).status).toBe('skipped');
    expect((await relay.skip(a.id)).status).toBe('skipped');
    expect(await codeOfAsync(() => relay.answer(a.id, pick('SQLite')))).toBe('card_closed');
    const b = await relay.create(question);
    await relay.answer(b.id, pick('SQLite'));
    expect(await codeOfAsync(() => relay.skip(b.id))).toBe('already_answered');
    const c = await relay.create({ ...question, waitSeconds: 1 });
    clock.advance(1000);
    expect(await codeOfAsync(() => relay.skip(c.id))).toBe('card_closed');
  });

  it('cancel closes a pending card and leaves a closed one as it is', async () => {
    const a = await relay.create(question);
    expect((await relay.cancel(a.id)).status).toBe('cancelled');
    const b = await relay.create(question);
    await relay.answer(b.id, pick('SQLite'));
    expect((await relay.cancel(b.id)).status).toBe('answered');
  });

  it('wait resolves at once for a closed card, undefined on timeout, and on abort', async () => {
    const card = await relay.create(question);
    const timedOut = relay.wait(card.id, 5000);
    await settled();
    clock.advance(5000);
    expect(await timedOut).toBeUndefined();
    const controller = new AbortController();
    const aborted = relay.wait(card.id, HOUR, { signal: controller.signal });
    await settled();
    controller.abort();
    expect(await aborted).toBeUndefined();
    await relay.answer(card.id, pick('SQLite'));
    expect((await relay.wait(card.id, 0))?.status).toBe('answered');
    expect(await codeOfAsync(() => relay.wait('c_nope', 1))).toBe('not_found');
  });

  it('a wait whose first read meets the database away keeps waiting, and the change it then hears releases it', async () => {
    const card = await relay.create(question);
    let reads = 0;
    const refused = () => (reads++, Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
    const away = new Relay({ store: { ...asyncCards(store), getCard: refused }, clock, waits: { default: HOUR } });
    const waiting = away.wait(card.id, HOUR);
    let result: unknown = 'still waiting';
    void waiting.then((c) => (result = c), (err: unknown) => (result = err));
    // The read failed, and its failure was handled (a turn later) without settling the wait.
    await waitUntil(() => reads === 1, 'the read');
    await settled();
    expect(result).toBe('still waiting');
    const answered = await relay.answer(card.id, pick('SQLite'));
    away.hear('card.updated', answered);
    expect((await waiting)?.status).toBe('answered');
    away.stop();
  });
});
