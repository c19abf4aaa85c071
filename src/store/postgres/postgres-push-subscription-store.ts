import type pg from 'pg';
import { recordOf, type AsyncPushSubscriptionStore, type PushSubscriptionRecord, type SubscriptionRow } from '../push-subscription-store.js';

// Web Push subscriptions in PostgreSQL, with the SQLite store's semantics
// (src/store/push-subscription-store.ts): one row per endpoint, a browser re-subscribing
// with new keys replaces the keys and keeps its place in the list.
//
// Unlike SQLite's, this store keeps no cache of the list: another node may add or remove a
// subscription at any moment, and every node's push sender must see it at once.

export class PostgresPushSubscriptionStore implements AsyncPushSubscriptionStore {
  /** The pool stays the caller's. */
  constructor(private readonly pool: pg.Pool) {}

  /** Stores a subscription (or its new keys); `created` is false when the endpoint was known. */
  async add(subscription: PushSubscriptionRecord, now = Date.now()): Promise<{ created: boolean }> {
    // One statement, so two nodes adding one endpoint at once see one `created`. A row this
    // statement inserted has no xmax; a row it updated has this transaction's id there.
    const { rows } = await this.pool.query<{ created: boolean }>(
      `INSERT INTO push_subscriptions (endpoint, p256dh, auth, created_at, who) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth, who = excluded.who
       RETURNING (xmax = 0) AS created`,
      [subscription.endpoint, subscription.keys.p256dh, subscription.keys.auth, now, subscription.who ?? null],
    );
    return { created: rows[0].created };
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
