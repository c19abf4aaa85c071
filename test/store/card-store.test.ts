import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { migrate, MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresAuditStore } from '../../src/store/postgres/postgres-audit-store.js';
import { PostgresCardStore } from '../../src/store/postgres/postgres-card-store.js';
import { asyncCards, type AsyncCardStore } from '../../src/store/store.js';
import { cardOf } from '../support/card-fixture.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';
import { bothStores, type StoreHarness } from '../support/store-harness.js';

// The card store's contract, run against both stores: the embedded SQLite file and a real
// PostgreSQL database (a fresh one per test, dropped afterwards). Whatever holds on one
// holds on the other.

const STORES = bothStores<AsyncCardStore>({ sqlite: (s) => asyncCards(s), postgres: async (pool) => new PostgresCardStore(pool, await PostgresAuditStore.create(pool)) });

const at = (iso: string) => Date.parse(iso);
const card = (id: string, extra: Partial<Card> = {}): Card =>
  cardOf([{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], { id, ...extra });

for (const [name, open] of Object.entries(STORES)) {
  describe(`card store: ${name}`, () => {
    let h: StoreHarness<AsyncCardStore>;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it('stores a card once: the same id again returns the stored one untouched', async () => {
      const first = card('c_1', { title: 'first' });
      expect(await h.store.insertCard(first)).toEqual({ card: first, created: true });
      expect(await h.store.insertCard(card('c_1', { title: 'second' }))).toEqual({ card: first, created: false });
      expect(await h.store.getCard('c_1')).toEqual(first);
      expect(await h.store.getCard('c_none')).toBeUndefined();
      // The JSON comes back as it went in, key order included (surfaces show it as stored).
      expect(JSON.stringify(await h.store.getCard('c_1'))).toBe(JSON.stringify(first));
    });

    it('lists by status and session, oldest or newest first, with a limit', async () => {
      const a = card('c_a', { createdAt: '2026-11-30T12:00:00.000Z', sessionId: 's_1' });
      const b = card('c_b', { createdAt: '2026-11-30T12:00:01.000Z' });
      const c = card('c_c', { createdAt: '2026-11-30T12:00:01.000Z', sessionId: 's_1' }); // same time as b: insertion order
      for (const x of [a, b, c]) await h.store.insertCard(x);
      await h.store.closeCard('c_b', { status: 'skipped', closedAt: '2026-11-30T12:01:00.000Z' });
      const ids = (cards: Card[]) => cards.map((x) => x.id);
      expect(ids(await h.store.listCards())).toEqual(['c_a', 'c_b', 'c_c']);
      expect(ids(await h.store.listCards({ order: 'newest' }))).toEqual(['c_c', 'c_b', 'c_a']);
      expect(ids(await h.store.listCards({ status: 'pending' }))).toEqual(['c_a', 'c_c']);
      expect(ids(await h.store.listCards({ sessionId: 's_1', order: 'newest', limit: 1 }))).toEqual(['c_c']);
      expect(ids(await h.store.listCards({ status: 'skipped' }))).toEqual(['c_b']);
    });

    it('closes a pending card once; a later close sees the first and changes nothing', async () => {
      await h.store.insertCard(card('c_1'));
      const answer = { db: { selected: ['SQLite'] } };
      const by = { kind: 'human' as const, id: 'operator', surface: 'api' };
      const won = await h.store.closeCard('c_1', { status: 'answered', closedAt: '2026-11-30T12:05:00.000Z', answer, answeredBy: by, idempotencyKey: 'k1' });
      expect(won).toMatchObject({ changed: true, card: { status: 'answered', answer, answeredBy: by, closedAt: '2026-11-30T12:05:00.000Z' } });
      const late = await h.store.closeCard('c_1', { status: 'skipped', closedAt: '2026-11-30T12:06:00.000Z' });
      expect(late).toEqual({ changed: false, card: won!.card });
      expect(await h.store.answerKey('c_1')).toBe('k1');
      expect(await h.store.closeCard('c_none', { status: 'skipped', closedAt: '2026-11-30T12:06:00.000Z' })).toBeUndefined();
    });

    it('first answer wins exactly once when 20 handles answer one card at once', async () => {
      await h.store.insertCard(card('c_race'));
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 3 }, () => h.other())))];
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          handles[i % handles.length].closeCard('c_race', { status: 'answered', closedAt: '2026-11-30T12:05:00.000Z', answer: { db: { selected: [], text: `answer ${i}` } } }),
        ),
      );
      const winners = results.filter((r) => r!.changed);
      expect(winners).toHaveLength(1);
      // Every loser was handed the winner's card.
      for (const r of results) expect(r!.card.answer).toEqual(winners[0]!.card.answer);
      expect((await h.store.getCard('c_race'))!.answer).toEqual(winners[0]!.card.answer);
    });

    it('closes from the caller\'s read of the pending card; a read gone stale meanwhile still loses to the first close', async () => {
      const pending = card('c_1');
      await h.store.insertCard(pending);
      const [a, b] = [await h.store.getCard('c_1'), await h.store.getCard('c_1')];
      const won = await h.store.closeCard('c_1', { status: 'skipped', closedAt: '2026-11-30T12:05:00.000Z', idempotencyKey: 'k1' }, a);
      expect(won).toEqual({ changed: true, card: { ...pending, status: 'skipped', closedAt: '2026-11-30T12:05:00.000Z' } });
      expect(await h.store.answerKey('c_1')).toBe('k1');
      // b was read while the card was still pending: the compare-and-set on its status refuses it.
      const late = await h.store.closeCard('c_1', { status: 'answered', closedAt: '2026-11-30T12:06:00.000Z', answer: { db: { selected: ['SQLite'] } } }, b);
      expect(late).toEqual({ changed: false, card: won!.card });
      expect(await h.store.getCard('c_1')).toEqual(won!.card);
      // A read of another card, or of a closed one, is not taken for this card's.
      await h.store.insertCard(card('c_2'));
      const other = await h.store.closeCard('c_2', { status: 'cancelled', closedAt: '2026-11-30T12:07:00.000Z' }, won!.card);
      expect(other).toMatchObject({ changed: true, card: { id: 'c_2', status: 'cancelled' } });
    });

    it('amends a card as it is stored; a change that returns nothing leaves it; an unknown card is undefined', async () => {
      await h.store.insertCard(card('c_1'));
      await h.store.closeCard('c_1', { status: 'expired', closedAt: '2026-11-30T12:05:00.000Z' });
      const seen: Card[] = [];
      const amended = await h.store.amendCard('c_1', (c) => (seen.push(c), { ...c, title: 'amended' }), 'delivery');
      expect(seen[0]).toMatchObject({ id: 'c_1', status: 'expired' });
      expect(amended).toMatchObject({ changed: true, card: { status: 'expired', title: 'amended' } });
      expect(await h.store.getCard('c_1')).toEqual(amended!.card);
      expect(await h.store.amendCard('c_1', () => undefined, 'delivery')).toEqual({ changed: false, card: amended!.card });
      expect(await h.store.amendCard('c_none', (c) => c, 'delivery')).toBeUndefined();
    });

    it('loses no change when 20 handles amend one card at once: each is made again from what the others stored', async () => {
      await h.store.insertCard(card('c_race'));
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 3 }, () => h.other())))];
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => handles[i % handles.length].amendCard('c_race', (c) => ({ ...c, title: `${c.title ?? ''}[${i}]` }), 'delivery')),
      );
      const title = (await h.store.getCard('c_race'))!.title!;
      expect(title.match(/\[\d+\]/g)!.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `[${i}]`).sort());
    });

    it('expires the overdue pending cards once, at their deadline, and leaves the rest', async () => {
      await h.store.insertCard(card('c_due', { expiresAt: '2026-11-30T12:10:00.000Z' }));
      await h.store.insertCard(card('c_later', { expiresAt: '2026-11-30T13:00:00.000Z' }));
      await h.store.insertCard(card('c_done', { expiresAt: '2026-11-30T12:10:00.000Z' }));
      await h.store.closeCard('c_done', { status: 'skipped', closedAt: '2026-11-30T12:01:00.000Z' });
      expect((await h.store.pendingDeadlines()).sort((x, y) => x.expiresAt - y.expiresAt)).toEqual([
        { id: 'c_due', expiresAt: at('2026-11-30T12:10:00.000Z') },
        { id: 'c_later', expiresAt: at('2026-11-30T13:00:00.000Z') },
      ]);
      const other = await h.other();
      const [mine, theirs] = await Promise.all([h.store.expireOverdue(at('2026-11-30T12:30:00.000Z')), other.expireOverdue(at('2026-11-30T12:30:00.000Z'))]);
      // Two nodes expiring at once: each overdue card expired by exactly one of them.
      const expired = [...mine, ...theirs];
      expect(expired.map((c) => [c.id, c.status, c.closedAt])).toEqual([['c_due', 'expired', '2026-11-30T12:10:00.000Z']]);
      expect((await h.store.getCard('c_due'))!.status).toBe('expired');
      expect((await h.store.getCard('c_done'))!.status).toBe('skipped');
      expect(await h.store.expireOverdue(at('2026-11-30T12:30:00.000Z'))).toEqual([]);
    });
  });
}

describe('PostgreSQL migrations', () => {
  it('are numbered once each, in the order they are applied', () => {
    const versions = MIGRATIONS.map((m) => m.version);
    expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
  });

  let db: FreshDatabase;
  beforeEach(async () => {
    db = await freshDatabase();
  });
  afterEach(() => db.drop());

  it('nodes starting together on a fresh database apply each migration exactly once', async () => {
    const pools = Array.from({ length: 4 }, () => testPool(db.url));
    try {
      const applied = await Promise.all(pools.map((p) => migrate(p)));
      expect(applied.flat().sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
      const { rows } = await pools[0].query('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await migrate(pools[0])).toEqual([]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('a migration that fails leaves nothing half-applied and names itself', async () => {
    const pool = testPool(db.url);
    try {
      const broken = [...MIGRATIONS, { version: 999, name: 'broken', sql: 'CREATE TABLE half (x INT); SELECT no_such_function();' }];
      await expect(migrate(pool, broken)).rejects.toThrow(/migration 999 \(broken\) failed: .*no_such_function/);
      const { rows } = await pool.query(`SELECT to_regclass('half') AS half, (SELECT count(*) FROM schema_migrations WHERE version = 999)::int AS recorded`);
      expect(rows[0]).toEqual({ half: null, recorded: 0 });
    } finally {
      await pool.end();
    }
  });
});
