import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migratedSecrets, sharedSecrets } from '../../src/store/shared-secrets.js';
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

describe('the relay secrets nodes share', () => {
  const shared = (i: number) => (name: string, make: () => string) => sharedSetting(pools[i], name, make);

  it('without variables: the first node makes the token, audit key and VAPID pair, and the others use them', async () => {
    const [first, ...others] = await Promise.all(pools.map((_, i) => sharedSecrets(shared(i), {})));
    for (const other of others) {
      expect(other.token).toBe(first.token);
      expect(other.auditKey.equals(first.auditKey)).toBe(true);
      expect(other.vapid).toEqual(first.vapid);
    }
    expect(first.token.length).toBeGreaterThanOrEqual(24);
    // Exactly one node said it made them.
    const all = [first, ...others].flatMap((s) => s.notices);
    expect(all.filter((n) => n.startsWith('Made the relay token'))).toHaveLength(1);
    expect(all.filter((n) => n.startsWith('Made the audit key'))).toHaveLength(1);
  });

  it('a node given another ASKRELAY_TOKEN or audit key than its peers refuses to start', async () => {
    const given = { token: 'the-shared-token-0123456789abcdef', auditKey: 'the-shared-audit-key-0123456789ab' };
    await sharedSecrets(shared(0), given);
    await expect(sharedSecrets(shared(1), given)).resolves.toMatchObject({ token: given.token });
    await expect(sharedSecrets(shared(2), { ...given, token: 'another-token-0123456789abcdefgh' })).rejects.toThrow(
      'ASKRELAY_TOKEN is not the token the other nodes on this database use; give every node the same one.',
    );
    await expect(sharedSecrets(shared(3), { token: given.token })).rejects.toThrow(
      'The other nodes on this database were started with ASKRELAY_AUDIT_KEY (or <data>/audit.key); start this node with the same key.',
    );
    await expect(sharedSecrets(shared(4), { auditKey: given.auditKey })).rejects.toThrow('The other nodes on this database were started with ASKRELAY_TOKEN; start this node with the same token.');
    await expect(sharedSecrets(shared(4), { token: 'short' })).rejects.toThrow(/ASKRELAY_TOKEN is 5 characters long/);
  });

  it('what askrelay migrate writes is what the nodes then use', async () => {
    const vapid = { publicKey: Buffer.alloc(65, 4).toString('base64url'), privateKey: Buffer.alloc(32, 7).toString('base64url') };
    const rows = migratedSecrets({ token: 'the-embedded-token-0123456789abc', auditKey: Buffer.from('the-embedded-audit-key-012345678'), vapid });
    for (const [name, value] of Object.entries(rows)) await sharedSetting(pools[0], name, () => value);
    expect(Object.keys(rows).sort()).toEqual(['audit_key_fingerprint', 'token', 'token_fingerprint', 'vapid']);
    const node = await sharedSecrets(shared(1), { auditKey: 'the-embedded-audit-key-012345678' });
    expect(node).toMatchObject({ token: 'the-embedded-token-0123456789abc', vapid, notices: [] });
    await expect(sharedSecrets(shared(2), {})).rejects.toThrow(/started with ASKRELAY_AUDIT_KEY/);
  });
});
