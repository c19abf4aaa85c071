import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { sessionFacts, type Principal } from '../../src/relay/access.js';
import { CardAccess } from '../../src/relay/card-access.js';
import { Relay } from '../../src/relay/relay.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { codeOfAsync } from '../support/refusal.js';
import { waitUntil } from '../support/wait-until.js';

// A long poll's first step is a read of the card to check that the poller may see it. Right
// after PostgreSQL terminated the relay's connections (pg_terminate_backend, a failover) that
// read fails once on a dead pooled connection; docs/api.md says such a poll keeps waiting, so
// the read is tried again instead of answering 503 (the chaos suite, bench/chaos/, saw the 503).

const HOUR = 3_600_000;
const operator: Principal = { kind: 'human', id: 'operator', surface: 'api' };
const question = { questions: [{ text: 'Which DB?', options: ['PostgreSQL', 'SQLite'] }] };
/** What node-postgres rejects with on a connection the server terminated. */
const terminated = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

let dir: string;
let clock: FakeClock;
let store: SqliteStore;
let relay: Relay;
/** How many of the next card reads fail as on a terminated connection. */
let failing = 0;
let reads = 0;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-wait-away-'));
  clock = new FakeClock();
  store = new SqliteStore(join(dir, 'askrelay.sqlite'));
  const cards = asyncCards(store);
  const getCard = (id: string) => {
    reads++;
    return failing-- > 0 ? Promise.reject(terminated()) : cards.getCard(id);
  };
  relay = new Relay({ store: { ...cards, getCard }, clock, waits: { default: HOUR } });
  await relay.start();
  failing = 0;
});

afterEach(() => {
  relay.stop();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const accessOf = () => new CardAccess(relay, sessionFacts(asyncSessions(store.sessions)), store.audit);

it('a poll whose permission read meets a terminated connection keeps waiting, and gets the answer', async () => {
  const card = await relay.create(question);
  failing = 3;
  reads = 0;
  let result = 'waiting' as Card | undefined | Error | 'waiting';
  void accessOf()
    .wait(operator, card.id, 30_000)
    .then((c) => (result = c), (err: Error) => (result = err));
  // Each failed read is tried again a moment later, on the relay's clock, until one passes.
  await waitUntil(() => {
    if (result instanceof Error) throw result;
    clock.advance(500);
    return relay.waitedOn === 1;
  }, 'the poll to wait on the card');
  expect(reads).toBe(5); // three failed reads, the one that passed, and the wait's own
  expect(result).toBe('waiting');
  await relay.answer(card.id, { q1: { selected: ['SQLite'] } });
  await waitUntil(() => result !== 'waiting', 'the poll to end');
  expect((result as Card).status).toBe('answered');
});

it('a poll whose reads keep failing ends at its timeout as a poll with no change (204), not 503', async () => {
  const card = await relay.create(question);
  failing = Infinity;
  let result = 'waiting' as Card | undefined | Error | 'waiting';
  void accessOf()
    .wait(operator, card.id, 5_000)
    .then((c) => (result = c), (err: Error) => (result = err));
  await waitUntil(() => {
    clock.advance(500);
    return result !== 'waiting';
  }, 'the poll to end');
  expect(relay.waitedOn).toBe(0);
  expect(result).toBeUndefined();
});

it('a card that does not exist still ends the poll with 404', async () => {
  expect(await codeOfAsync(() => accessOf().wait(operator, 'c_nope', 5_000))).toBe('not_found');
});
