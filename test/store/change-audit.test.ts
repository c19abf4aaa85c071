import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { asyncAudit, type AsyncAuditStore, type AuditEntry } from '../../src/store/audit-store.js';
import { CHANNEL } from '../../src/store/postgres/event-bus.js';
import { PostgresAuditStore } from '../../src/store/postgres/postgres-audit-store.js';
import { PostgresCardStore } from '../../src/store/postgres/postgres-card-store.js';
import { asyncCards, type AsyncCardStore } from '../../src/store/store.js';
import { cardOf } from '../support/card-fixture.js';
import { bothStores, type StoreHarness } from '../support/store-harness.js';
import { waitUntil } from '../support/wait-until.js';

// Every change of a card commits with its audit entry, on both stores: each kind of change
// records exactly its entry, a change that does not happen (a lost compare-and-set, a card
// already there) records none, and a change whose entry cannot be written is not made. On
// PostgreSQL the NOTIFY telling the other nodes is part of the same transaction.

interface Pair {
  cards: AsyncCardStore;
  audit: AsyncAuditStore;
  /** PostgreSQL's card store, to name the node its events come from. */
  pgCards?: PostgresCardStore;
}

const STORES = bothStores<Pair>({
  sqlite: (s) => ({ cards: asyncCards(s), audit: asyncAudit(s.audit) }),
  postgres: async (pool) => {
    const audit = await PostgresAuditStore.create(pool);
    const pgCards = new PostgresCardStore(pool, audit);
    return { cards: pgCards, audit, pgCards };
  },
});

const card = (id: string, extra: Partial<Card> = {}): Card => cardOf([{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], { id, expiresAt: '2026-11-30T13:00:00.000Z', ...extra });
const by = { kind: 'human' as const, id: 'ada', surface: 'page' };
const events = (entries: AuditEntry[]) => entries.map((e) => `${e.event} ${e.cardId}`);

for (const [name, open] of Object.entries(STORES)) {
  describe(`one transaction per change: ${name}`, () => {
    let h: StoreHarness<Pair>;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    /** A statement through a connection of the test's own, behind the store's back. */
    const behind = async (sql: string) => {
      if (h.backend.kind === 'postgres') return void (await h.backend.pool.query(sql));
      const conn = new Database(h.backend.file);
      try {
        conn.exec(sql);
      } finally {
        conn.close();
      }
    };
    const refuseAudit = () =>
      h.backend.kind === 'postgres'
        ? behind(`CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$ LANGUAGE plpgsql;
                  CREATE TRIGGER no_audit BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION refuse()`)
        : behind(`CREATE TRIGGER no_audit BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'audit refused'); END`);

    it('each change records exactly its entry; a change that does not happen records none', async () => {
      const { cards, audit } = h.store;
      await cards.insertCard(card('c_1'));
      await cards.insertCard(card('c_1', { title: 'again' }));
      await cards.insertCard(card('c_2', { route: 'pay', routedTo: ['ada'], escalations: [{ at: '2026-11-30T12:30:00.000Z', to: ['bea'] }] }));
      await cards.insertCard(card('c_3', { expiresAt: '2026-11-30T12:10:00.000Z' }));
      const answer = { db: { selected: ['SQLite'] } };
      expect((await cards.closeCard('c_1', { status: 'answered', closedAt: '2026-11-30T12:05:00.000Z', answer, answeredBy: by }))?.changed).toBe(true);
      expect((await cards.closeCard('c_1', { status: 'skipped', closedAt: '2026-11-30T12:06:00.000Z' }))?.changed).toBe(false);
      await cards.amendCard('c_1', (c) => ({ ...c, delivery: { state: 'delivered', at: '2026-11-30T12:05:01.000Z' } }), 'delivery');
      await cards.amendCard('c_2', (c) => ({ ...c, routedTo: ['ada', 'bea'], escalations: [{ at: '2026-11-30T12:30:00.000Z', to: ['bea'], done: '2026-11-30T12:30:00.000Z' }] }), 'escalated');
      await cards.amendCard('c_2', () => undefined, 'escalated');
      expect((await cards.expireOverdue(Date.parse('2026-11-30T12:20:00.000Z'))).map((c) => c.id)).toEqual(['c_3']);
      await cards.amendCard('c_3', (c) => ({ ...c, lateAnswer: { answer, answeredBy: by, lateAt: '2026-11-30T12:21:00.000Z' } }), 'late');

      const entries = await audit.list();
      expect(events(entries)).toEqual(['card.created c_1', 'card.created c_2', 'card.created c_3', 'card.answered c_1', 'card.escalated c_2', 'card.expired c_3', 'card.late_answer c_3']);
      expect(entries[3]).toMatchObject({ actor: { kind: 'human', id: 'ada' }, surface: 'page', at: '2026-11-30T12:05:00.000Z' });
      expect(entries[4]).toMatchObject({ actor: { kind: 'system', id: 'route:pay' }, detail: { added: ['bea'], routedTo: ['ada', 'bea'] } });
      expect(entries[5]).toMatchObject({ actor: { kind: 'system', id: 'relay' }, at: '2026-11-30T12:10:00.000Z' });
      expect(await audit.verify()).toEqual({ ok: true, entries: 7, problems: [] });
    });

    it('a change whose entry cannot be written is not made, and the relay may try it again', async () => {
      const { cards, audit } = h.store;
      await cards.insertCard(card('c_1'));
      await refuseAudit();
      await expect(cards.insertCard(card('c_2'))).rejects.toThrow(/audit refused/);
      expect(await cards.getCard('c_2')).toBeUndefined();
      await expect(cards.closeCard('c_1', { status: 'skipped', closedAt: '2026-11-30T12:05:00.000Z' })).rejects.toThrow(/audit refused/);
      expect((await cards.getCard('c_1'))?.status).toBe('pending');
      await expect(cards.expireOverdue(Date.parse('2026-11-30T14:00:00.000Z'))).rejects.toThrow(/audit refused/);
      expect((await cards.getCard('c_1'))?.status).toBe('pending');

      await behind('DROP TRIGGER no_audit' + (h.backend.kind === 'postgres' ? ' ON audit' : ''));
      expect((await cards.closeCard('c_1', { status: 'skipped', closedAt: '2026-11-30T12:05:00.000Z' }))?.changed).toBe(true);
      expect(events(await audit.list())).toEqual(['card.created c_1', 'card.skipped c_1']);
      expect((await audit.verify()).ok).toBe(true);
    });

    if (name === 'postgres') {
      it('the other nodes hear each change from its own transaction: only what committed, in order, naming the node', async () => {
        const { pgCards } = h.store;
        if (h.backend.kind !== 'postgres') throw new Error('postgres only');
        const listener = new pg.Client({ connectionString: (h.backend.pool as unknown as { options: { connectionString: string } }).options.connectionString });
        await listener.connect();
        const heard: { node: string; name: string; data?: Card }[] = [];
        listener.on('notification', (m) => m.channel === CHANNEL && heard.push(JSON.parse(m.payload!)));
        try {
          await listener.query(`LISTEN ${CHANNEL}`);
          await pgCards!.insertCard(card('c_quiet'));
          pgCards!.announceAs('node-a');
          await refuseAudit();
          await expect(pgCards!.insertCard(card('c_refused'))).rejects.toThrow(/audit refused/);
          await behind('DROP TRIGGER no_audit ON audit');
          await pgCards!.insertCard(card('c_1'));
          await pgCards!.closeCard('c_1', { status: 'skipped', closedAt: '2026-11-30T12:05:00.000Z' });
          await pgCards!.closeCard('c_1', { status: 'cancelled', closedAt: '2026-11-30T12:06:00.000Z' });
          await pgCards!.amendCard('c_1', (c) => ({ ...c, delivery: { state: 'delivered', at: '2026-11-30T12:05:01.000Z' } }), 'delivery');
          await waitUntil(() => heard.length >= 3, 'the three events');
          expect(heard.map((e) => [e.node, e.name, e.data?.id, e.data?.status])).toEqual([
            ['node-a', 'card.created', 'c_1', 'pending'],
            ['node-a', 'card.updated', 'c_1', 'skipped'],
            ['node-a', 'card.delivery', 'c_1', 'skipped'],
          ]);
        } finally {
          await listener.end();
        }
      });

      it('two changes that commit one after the other return in that order, the order the other nodes hear them, even when the first is answered late', async () => {
        if (h.backend.kind !== 'postgres') throw new Error('postgres only');
        const pool = h.backend.pool;
        const listener = new pg.Client({ connectionString: (pool as unknown as { options: { connectionString: string } }).options.connectionString });
        await listener.connect();
        const heard: string[] = [];
        let secondHeard!: () => void;
        const secondCommitted = new Promise<void>((resolve) => (secondHeard = resolve));
        listener.on('notification', (m) => {
          if (m.channel !== CHANNEL) return;
          heard.push((JSON.parse(m.payload!) as { data: Card }).data.id);
          if (heard.length === 2) secondHeard();
        });
        // The first connection the store checks out commits, then its answer is held back until
        // the second change committed: as when the server wakes the next lock holder before it
        // answers (what a loaded machine shows now and then).
        let firstInserting!: () => void;
        const inserting = new Promise<void>((resolve) => (firstInserting = resolve));
        let checkouts = 0;
        const slowFirst = {
          query: pool.query.bind(pool),
          connect: async () => {
            const client = await pool.connect();
            if (checkouts++ > 0) return client;
            const query = client.query.bind(client) as (sql: string, values?: unknown[]) => Promise<unknown>;
            Object.assign(client, {
              query: async (sql: string, values?: unknown[]) => {
                if (sql.startsWith('INSERT INTO cards')) firstInserting();
                const result = await query(sql, values);
                if (sql !== 'COMMIT') return result;
                await secondCommitted;
                delete (client as { query?: unknown }).query;
                return result;
              },
            });
            return client;
          },
        } as unknown as pg.Pool;
        const cards = new PostgresCardStore(slowFirst, h.store.audit as PostgresAuditStore);
        cards.announceAs('node-a');
        try {
          await listener.query(`LISTEN ${CHANNEL}`);
          const returned: string[] = [];
          const first = cards.insertCard(card('c_first')).then(() => returned.push('c_first'));
          await inserting;
          const second = cards.insertCard(card('c_second')).then(() => returned.push('c_second'));
          await Promise.all([first, second]);
          expect(heard).toEqual(['c_first', 'c_second']);
          expect(returned).toEqual(heard);
        } finally {
          await listener.end();
        }
      });
    }
  });
}
