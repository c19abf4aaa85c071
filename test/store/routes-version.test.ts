import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { migrate } from '../../src/store/postgres/migrations.js';
import { PostgresAuditStore } from '../../src/store/postgres/postgres-audit-store.js';
import { PostgresCardStore } from '../../src/store/postgres/postgres-card-store.js';
import { sharedRoutes } from '../../src/store/postgres/shared-settings.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';

// Routes on a database several nodes share (docs/routing.md, "Several nodes"): each write
// gives them a higher version, and a card routed by a version that is no longer the
// database's is not stored (the relay core routes it again), in the insert's own statement.

let db: FreshDatabase;
beforeEach(async () => {
  db = await freshDatabase();
});
afterEach(() => db.drop());

const card = (id: string): Card => ({
  id, sessionId: null, provider: 'api', tool: 'cards', origin: 'relay', kind: 'question', layout: 'steps',
  questions: [{ id: 'q1', text: 'Go?', options: [], multiSelect: false, freeText: true }],
  selectSeveral: false, relayMode: 'autopilot', status: 'pending', createdAt: '2026-12-02T10:00:00.000Z', expiresAt: '2026-12-02T18:00:00.000Z',
});

it('a card routed by replaced routes is not stored; by the current ones, or unchecked, it is', async () => {
  const pool = testPool(db.url);
  try {
    await migrate(pool);
    const routes = sharedRoutes(pool);
    const cards = new PostgresCardStore(pool, await PostgresAuditStore.create(pool));
    expect(await routes.read()).toEqual({ routes: [], at: null });
    // No routes written yet: a card routed by "none" goes in.
    expect(await cards.insertCard(card('c_1'), null)).toMatchObject({ created: true });

    const first = await routes.write([{ name: 'a', match: {}, to: ['everyone'] }]);
    const second = await routes.write([{ name: 'b', match: {}, to: ['slack'] }]);
    expect(second).toBeGreaterThan(first); // written in the same millisecond or not
    expect(await routes.read()).toEqual({ routes: [{ name: 'b', match: {}, to: ['slack'] }], at: second });

    expect(await cards.insertCard(card('c_2'), null)).toEqual({ card: card('c_2'), created: false, stale: true });
    expect(await cards.insertCard(card('c_2'), first)).toMatchObject({ created: false, stale: true });
    expect(await cards.getCard('c_2')).toBeUndefined();
    expect(await cards.insertCard(card('c_2'), second)).toEqual({ card: card('c_2'), created: true });
    // The same card again: the stored one, whatever the routes.
    expect(await cards.insertCard({ ...card('c_2'), title: 'other' }, second)).toEqual({ card: card('c_2'), created: false });
    expect(await cards.insertCard(card('c_3'))).toEqual({ card: card('c_3'), created: true });
  } finally {
    await pool.end();
  }
});
