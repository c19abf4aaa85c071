import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostgresLeases } from '../../src/store/postgres/leases.js';
import { PostgresNodes } from '../../src/store/postgres/nodes.js';
import { migrate } from '../../src/store/postgres/migrations.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';

// Leases and node heartbeats on a real PostgreSQL, with explicit times (no waiting): one holder at a time,
// renewed by its holder, taken over once it runs out, the fence raised on each change.

let db: FreshDatabase;
let pools: pg.Pool[];
let a: PostgresLeases;
let b: PostgresLeases;
const T = 1_000_000;

beforeEach(async () => {
  db = await freshDatabase();
  pools = [testPool(db.url), testPool(db.url)];
  await migrate(pools[0]);
  [a, b] = pools.map((p) => new PostgresLeases(p));
});
afterEach(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

describe('leases', () => {
  it('one holder at a time; the holder renews; another takes over only once it ran out', async () => {
    expect(await a.acquire('session:s_1', 'node-a', 15_000, T)).toEqual({ name: 'session:s_1', holder: 'node-a', expiresAt: T + 15_000, fence: 1 });
    expect(await b.acquire('session:s_1', 'node-b', 15_000, T + 1000)).toBeUndefined();
    expect(await a.acquire('session:s_1', 'node-a', 15_000, T + 5000)).toMatchObject({ expiresAt: T + 20_000, fence: 1 });
    expect(await b.acquire('session:s_1', 'node-b', 15_000, T + 19_999)).toBeUndefined();
    expect(await b.holder('session:s_1', T + 19_999)).toBe('node-a');
    expect(await b.holder('session:s_1', T + 20_000)).toBeUndefined();
    // node-a stopped renewing: at its expiry node-b takes it (told whose it was), and the fence moves on.
    expect(await b.acquire('session:s_1', 'node-b', 15_000, T + 20_000)).toEqual({ name: 'session:s_1', holder: 'node-b', expiresAt: T + 35_000, fence: 2, previous: 'node-a' });
    expect(await b.acquire('session:s_1', 'node-b', 15_000, T + 21_000)).not.toHaveProperty('previous');
    // node-a comes back late: it no longer holds it.
    expect(await a.acquire('session:s_1', 'node-a', 15_000, T + 21_000)).toBeUndefined();
  });

  it('nodes racing for a free lease: exactly one gets it', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).acquire('outbox:telegram', `node-${i}`, 15_000, T)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a released lease is free at once; the database clock is used when no time is given', async () => {
    await a.acquire('push', 'node-a', 60_000);
    expect(await b.acquire('push', 'node-b', 60_000)).toBeUndefined();
    await b.release('push', 'node-b'); // not the holder: changes nothing
    expect(await b.acquire('push', 'node-b', 60_000)).toBeUndefined();
    await a.release('push', 'node-a');
    expect(await b.acquire('push', 'node-b', 60_000)).toMatchObject({ holder: 'node-b', fence: 2 });
    expect((await a.list()).map((l) => [l.name, l.holder])).toEqual([['push', 'node-b']]);
    await b.acquire('channels', 'node-b', 60_000);
    await b.releaseAll('node-b');
    expect(await a.holder('push')).toBeUndefined();
    expect(await a.holder('channels')).toBeUndefined();
  });
});

describe('nodes', () => {
  it('lists the nodes heard from lately, with what they hold; a silent or departed node drops out', async () => {
    const [na, nb] = pools.map((p) => new PostgresNodes(p));
    await na.heartbeat('node-a', 'http://10.0.0.1:7070/', { sessions: 1 }, T);
    await nb.heartbeat('node-b', undefined, { sessions: 0, mcpCalls: 2 }, T + 1000);
    await na.heartbeat('node-a', 'http://10.0.0.1:7070/', { sessions: 2 }, T + 5000);
    expect(await na.live(15_000, T + 6000)).toEqual([
      { id: 'node-a', url: 'http://10.0.0.1:7070/', startedAt: T, heartbeatAt: T + 5000, holds: { sessions: 2 } },
      { id: 'node-b', startedAt: T + 1000, heartbeatAt: T + 1000, holds: { sessions: 0, mcpCalls: 2 } },
    ]);
    expect((await na.live(15_000, T + 16_500)).map((n) => n.id)).toEqual(['node-a']); // node-b silent for 15.5 s
    await na.leave('node-a');
    expect(await na.live(15_000, T + 6000)).toHaveLength(1);
  });
});
