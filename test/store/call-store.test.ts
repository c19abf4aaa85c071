import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { asyncCalls, KEEP_MS, type AsyncCallStore } from '../../src/store/call-store.js';
import { PostgresCallStore } from '../../src/store/postgres/postgres-call-store.js';
import { PostgresAuditStore } from '../../src/store/postgres/postgres-audit-store.js';
import { PostgresCardStore } from '../../src/store/postgres/postgres-card-store.js';
import { asyncCards, type AsyncCardStore } from '../../src/store/store.js';
import { cardOf } from '../support/card-fixture.js';
import { bothStores, type StoreHarness } from '../support/store-harness.js';

// The MCP call store's contract (which card each tools/call waits on), run against the
// embedded SQLite file and a real PostgreSQL database (fresh per test, dropped afterwards).
// The cards live beside the calls: orphans() reads their status.

interface Handle {
  calls: AsyncCallStore;
  cards: AsyncCardStore;
}

const STORES = bothStores<Handle>({
  sqlite: (s) => ({ calls: asyncCalls(s.calls), cards: asyncCards(s) }),
  postgres: async (pool) => ({ calls: new PostgresCallStore(pool), cards: new PostgresCardStore(pool, await PostgresAuditStore.create(pool)) }),
});

// Real epoch milliseconds: they need 64-bit columns.
const NOW = Date.parse('2026-11-30T12:00:00.000Z');
const card = (id: string, extra: Partial<Card> = {}): Card => cardOf([{ id: 'q', text: 'Go on?', options: ['Yes', 'No'] }], { id, ...extra });
const call = (cardId: string, extra: { dialect?: string; argsHash?: string; clientKey?: string } = {}) => ({
  cardId,
  dialect: extra.dialect ?? 'cursor',
  argsHash: extra.argsHash ?? 'h1',
  ...(extra.clientKey !== undefined ? { clientKey: extra.clientKey } : {}),
});
const ids = (rows: { cardId: string }[]) => rows.map((r) => r.cardId);

for (const [name, open] of Object.entries(STORES)) {
  describe(`call store: ${name}`, () => {
    let h: StoreHarness<Handle>;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it('records a call once: the first record for a card stays', async () => {
      await h.store.calls.record(call('c_1', { clientKey: 'k1' }), NOW);
      await h.store.calls.record(call('c_1', { argsHash: 'h2', clientKey: 'k2' }), NOW + 1000);
      expect(await h.store.calls.open('cursor', 'h1')).toEqual([{ cardId: 'c_1', clientKey: 'k1' }]);
      expect(await h.store.calls.open('cursor', 'h2')).toEqual([]);
      // A keyless call reads back as null, not undefined.
      await h.store.calls.record(call('c_2'), NOW);
      expect(await h.store.calls.open('cursor', 'h1', 'k1')).toEqual([
        { cardId: 'c_1', clientKey: 'k1' },
        { cardId: 'c_2', clientKey: null },
      ]);
    });

    it('finds open calls by dialect and arguments, newest first, insertion order breaking ties', async () => {
      await h.store.calls.record(call('c_old'), NOW);
      await h.store.calls.record(call('c_tie_a'), NOW + 1000);
      await h.store.calls.record(call('c_tie_b'), NOW + 1000);
      await h.store.calls.record(call('c_other_args', { argsHash: 'h2' }), NOW + 2000);
      await h.store.calls.record(call('c_other_dialect', { dialect: 'openclaw' }), NOW + 2000);
      expect(ids(await h.store.calls.open('cursor', 'h1'))).toEqual(['c_tie_b', 'c_tie_a', 'c_old']);
      expect(ids(await h.store.calls.open('openclaw', 'h1'))).toEqual(['c_other_dialect']);
      expect(ids(await h.store.calls.open('cursor', 'h3'))).toEqual([]);
    });

    it('puts the call with the same client key first, then other keys, then keyless calls', async () => {
      await h.store.calls.record(call('c_mine', { clientKey: 'me' }), NOW);
      await h.store.calls.record(call('c_theirs_old', { clientKey: 'them' }), NOW + 1000);
      await h.store.calls.record(call('c_keyless', {}), NOW + 2000);
      await h.store.calls.record(call('c_theirs_new', { clientKey: 'them' }), NOW + 3000);
      // The order SQLite gives today: a keyless record compares as NULL and sorts after
      // every keyed one, even a newer keyless one after an older keyed one.
      expect(ids(await h.store.calls.open('cursor', 'h1', 'me'))).toEqual(['c_mine', 'c_theirs_new', 'c_theirs_old', 'c_keyless']);
      // Without a key: newest first, whatever the records' keys.
      expect(ids(await h.store.calls.open('cursor', 'h1'))).toEqual(['c_theirs_new', 'c_keyless', 'c_theirs_old', 'c_mine']);
    });

    it('hides a delivered call from everyone but the client that made it', async () => {
      await h.store.calls.record(call('c_keyed', { clientKey: 'me' }), NOW);
      await h.store.calls.record(call('c_keyless'), NOW + 1000);
      await h.store.calls.delivered('c_keyed', NOW + 5000);
      await h.store.calls.delivered('c_keyless', NOW + 5000);
      await h.store.calls.delivered('c_none', NOW + 5000); // unknown: nothing happens
      expect(await h.store.calls.open('cursor', 'h1')).toEqual([]);
      expect(await h.store.calls.open('cursor', 'h1', 'someone else')).toEqual([]);
      // Its result may have been lost on the way: the same client may take it again.
      expect(await h.store.calls.open('cursor', 'h1', 'me')).toEqual([{ cardId: 'c_keyed', clientKey: 'me' }]);
    });

    it('lists as orphans the pending cards of undelivered calls of one dialect', async () => {
      for (const id of ['c_orphan', 'c_second', 'c_delivered', 'c_answered', 'c_openclaw']) await h.store.cards.insertCard(card(id));
      await h.store.cards.closeCard('c_answered', { status: 'answered', closedAt: '2026-11-30T12:05:00.000Z', answer: { q: { selected: ['Yes'] } } });
      await h.store.calls.record(call('c_orphan'), NOW);
      await h.store.calls.record(call('c_second', { clientKey: 'k' }), NOW);
      await h.store.calls.record(call('c_delivered'), NOW);
      await h.store.calls.record(call('c_answered'), NOW);
      await h.store.calls.record(call('c_openclaw', { dialect: 'openclaw' }), NOW);
      await h.store.calls.record(call('c_no_card'), NOW); // its card is gone (or never made it)
      await h.store.calls.delivered('c_delivered', NOW + 1000);
      expect((await h.store.calls.orphans('cursor')).sort()).toEqual(['c_orphan', 'c_second']);
      expect(await h.store.calls.orphans('openclaw')).toEqual(['c_openclaw']);
      expect(await h.store.calls.orphans('copilot')).toEqual([]);
    });

    it('prunes records older than the longest wait and a day, keeping the rest', async () => {
      await h.store.calls.record(call('c_stale'), NOW - KEEP_MS - 1);
      await h.store.calls.record(call('c_edge'), NOW - KEEP_MS);
      await h.store.calls.record(call('c_fresh'), NOW);
      await h.store.calls.prune(NOW);
      expect(ids(await h.store.calls.open('cursor', 'h1'))).toEqual(['c_fresh', 'c_edge']);
      // A pruned card's call may be recorded again.
      await h.store.calls.record(call('c_stale', { argsHash: 'h2' }), NOW);
      expect(ids(await h.store.calls.open('cursor', 'h2'))).toEqual(['c_stale']);
    });

    it('several handles recording and delivering one call at once: one record, no error', async () => {
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 3 }, () => h.other())))];
      await Promise.all(handles.flatMap((x, i) => [x.calls.record(call('c_race', { clientKey: `k${i}` }), NOW), x.calls.record(call('c_race', { clientKey: `k${i}` }), NOW)]));
      const seen = await h.store.calls.open('cursor', 'h1');
      expect(seen).toHaveLength(1);
      expect(seen[0]!.clientKey).toMatch(/^k[0-3]$/);
      // Every handle sees the one record.
      for (const x of handles) expect(await x.calls.open('cursor', 'h1')).toEqual(seen);
      await Promise.all(handles.map((x, i) => x.calls.delivered('c_race', NOW + i)));
      expect(await h.store.calls.open('cursor', 'h1')).toEqual([]);
      expect(await h.store.calls.open('cursor', 'h1', seen[0]!.clientKey!)).toEqual(seen);
    });
  });
}
