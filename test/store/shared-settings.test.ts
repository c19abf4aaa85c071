import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { migrate } from '../../src/store/postgres/migrations.js';
import { sharedSetting } from '../../src/store/postgres/shared-settings.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';

// Nodes starting at once on one database agree on one token: the first writer's.

let db: FreshDatabase;
let pools: pg.Pool[];

beforeEach(async () => {
  db = await freshDatabase();
  pools = Array.from({ length: 5 }, () => testPool(db.url));
  await migrate(pools[0]);
});
afterEach(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

it('five nodes asking at once for the token all get the one the first of them made', async () => {
  const results = await Promise.all(pools.map((p, i) => sharedSetting(p, 'token', () => `token-of-node-${i}-0123456789abcdef`)));
  expect(results.filter((r) => r.made)).toHaveLength(1);
  const winner = results.find((r) => r.made)!.value;
  expect(results.map((r) => r.value)).toEqual(Array(5).fill(winner));
  // A node started later finds it too, and its own candidate is never kept.
  expect(await sharedSetting(pools[0], 'token', () => 'late-candidate-0123456789abcdef')).toEqual({ value: winner, made: false });
  expect(await sharedSetting(pools[1], 'vapid', () => '{"publicKey":"p"}')).toEqual({ value: '{"publicKey":"p"}', made: true });
});
