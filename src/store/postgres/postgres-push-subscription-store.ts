import type pg from 'pg';
import { recordOf, type AsyncPushSubscriptionStore, type PushAdded, type PushSubscriptionRecord, type SubscriptionRow } from '../push-subscription-store.js';
import { transaction } from './transaction.js';

// Web Push subscriptions in PostgreSQL, with the SQLite store's semantics
// (src/store/push-subscription-store.ts): one row per endpoint, a browser re-subscribing
// with new keys replaces the keys and keeps its place in the list.
//
// Unlike SQLite's, this store keeps no cache of the list: another node may add or remove a
// subscription at any moment, and every node's push sender must see it at once.

/** The first key of the per-principal advisory lock add() counts under (the second: the principal's hash). */
const PUSH_CAP_LOCK = 7_070_004;

export class PostgresPushSubscriptionStore implements AsyncPushSubscriptionStore {
  /** The pool stays the caller's. */
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Stores a subscription (or its new keys); `created` is false when the endpoint was known.
   * Refused (`full`) when its principal has `cap` other subscriptions: counted in the database
   * under the principal's advisory lock, so nodes adding at once cannot pass the cap together.
   */
  async add(subscription: PushSubscriptionRecord, now = Date.now(), cap = Infinity): Promise<PushAdded> {
    const who = subscription.who ?? null;
    return transaction(this.pool, async (client) => {
      if (Number.isFinite(cap)) {
        await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [PUSH_CAP_LOCK, who ?? '']);
        const { rows } = await client.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM push_subscriptions WHERE who IS NOT DISTINCT FROM $1 AND endpoint <> $2', [who, subscription.endpoint]);
        if (rows[0].n >= cap) return { created: false, full: true } as const;
      }
      // One statement, so two nodes adding one endpoint at once see one `created`. A row this
      // statement inserted has no xmax; a row it updated has this transaction's id there.
      const { rows } = await client.query<{ created: boolean }>(
        `INSERT INTO push_subscriptions (endpoint, p256dh, auth, created_at, who) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth, who = excluded.who
         RETURNING (xmax = 0) AS created`,
        [subscription.endpoint, subscription.keys.p256dh, subscription.keys.auth, now, who],
      );
      return { created: rows[0].created };
    });
  }

  /** Whether a subscription with this endpoint was there to remove. */
  async remove(endpoint: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM push_subscriptions WHERE endpoint = $1', [endpoint]);
    return (rowCount ?? 0) > 0;
  }

  /** A person removed: their browsers get no more pushes (how many subscriptions went). */
  async removeWho(name: string): Promise<number> {
    const { rowCount } = await this.pool.query('DELETE FROM push_subscriptions WHERE who = $1', [name]);
    return rowCount ?? 0;
  }

  async has(endpoint: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM push_subscriptions WHERE endpoint = $1', [endpoint]);
    return (rowCount ?? 0) > 0;
  }

  async list(): Promise<PushSubscriptionRecord[]> {
    const { rows } = await this.pool.query<SubscriptionRow>('SELECT endpoint, p256dh, auth, who FROM push_subscriptions ORDER BY created_at, seq');
    return rows.map(recordOf);
  }
}
