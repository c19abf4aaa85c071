import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostgresEventBus, type BusEvent } from '../../src/store/postgres/event-bus.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';
import { waitUntil } from '../support/wait-until.js';

// Relay events between nodes over LISTEN/NOTIFY on a real PostgreSQL: every other node hears
// each event once, in the order it was published; big events travel by reference; a node
// whose listening connection is cut listens again and is told to resync.

let db: FreshDatabase;
let pool: pg.Pool;
const buses: PostgresEventBus[] = [];
const logs: string[] = [];

function bus(node: string, extra: { resync?: () => void } = {}): PostgresEventBus {
  const b = new PostgresEventBus(pool, db.url, { node, load: async (name, ref) => ({ loaded: name, ref }), log: (l) => logs.push(l), ...extra });
  buses.push(b);
  return b;
}

beforeEach(async () => {
  db = await freshDatabase();
  pool = testPool(db.url);
  logs.length = 0;
});
afterEach(async () => {
  await Promise.all(buses.splice(0).map((b) => b.stop()));
  await pool.end();
  await db.drop();
});

describe('event bus', () => {
  it('every other node hears each event once, in order; the publisher does not hear its own', async () => {
    const [a, b, c] = [bus('a'), bus('b'), bus('c')];
    await Promise.all([a.start(), b.start(), c.start()]);
    const heard: Record<string, BusEvent[]> = { a: [], b: [], c: [] };
    a.subscribe((e) => heard.a.push(e));
    b.subscribe((e) => heard.b.push(e));
    c.subscribe((e) => heard.c.push(e));
    for (let i = 0; i < 100; i++) await a.publish(i % 2 ? 'card.updated' : 'card.created', { id: `c_${i}`, n: i }, `c_${i}`);
    await waitUntil(() => heard.b.length === 100 && heard.c.length === 100, 'b and c to hear 100 events');
    expect(heard.b.map((e) => (e.data as { n: number }).n)).toEqual([...Array(100).keys()]);
    expect(heard.c).toEqual(heard.b);
    expect(heard.b[1]).toEqual({ name: 'card.updated', data: { id: 'c_1', n: 1 } });
    expect(heard.a).toEqual([]);
  });

  it('an event too big for NOTIFY travels by reference and is loaded, still in order', async () => {
    const [a, b] = [bus('a'), bus('b')];
    await Promise.all([a.start(), b.start()]);
    const heard: BusEvent[] = [];
    b.subscribe((e) => heard.push(e));
    await a.publish('card.created', { id: 'c_small' }, 'c_small');
    await a.publish('card.created', { id: 'c_big', text: 'x'.repeat(20_000) }, 'c_big');
    await a.publish('card.updated', { id: 'c_after' }, 'c_after');
    await waitUntil(() => heard.length === 3, 'three events');
    expect(heard).toEqual([
      { name: 'card.created', data: { id: 'c_small' } },
      { name: 'card.created', data: { loaded: 'card.created', ref: 'c_big' } },
      { name: 'card.updated', data: { id: 'c_after' } },
    ]);
  });

  it('a cut listening connection is listened again, and the node is told to resync', async () => {
    let resyncs = 0;
    const [a, b] = [bus('a'), bus('b', { resync: () => resyncs++ })];
    await Promise.all([a.start(), b.start()]);
    const heard: BusEvent[] = [];
    b.subscribe((e) => heard.push(e));
    // What a database restart or a dropped connection does to the listener.
    await pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN askrelay_events'`);
    await waitUntil(() => resyncs === 1, 'b to listen again');
    expect(logs.some((l) => /lost the listening connection/.test(l))).toBe(true);
    await a.publish('card.created', { id: 'c_later' }, 'c_later');
    await waitUntil(() => heard.length === 1, 'the event after the reconnect');
    expect(heard[0].data).toEqual({ id: 'c_later' });
  });
});
