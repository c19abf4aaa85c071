import type Database from 'better-sqlite3';
import type { Async } from './store.js';

// Web Push subscriptions live in the same SQLite file as the cards, one row per endpoint
// (the endpoint URL is the subscription's identity; a browser re-subscribing with new keys
// replaces the row). `who`: the person who subscribed (docs/routing.md), none for the operator.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_subscriptions (
  endpoint    TEXT PRIMARY KEY,
  p256dh      TEXT NOT NULL,
  auth        TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  who         TEXT
);
`;

export interface PushSubscriptionRecord {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** The person whose browser it is; absent: the operator's. */
  who?: string;
}

/** What add() did: stored (`created` when the endpoint was new), or refused because its principal had `cap` already. */
export type PushAdded = { created: boolean; full?: undefined } | { created: false; full: true };

export class PushSubscriptionStore {
  private readonly stmt;
  private readonly addWithin: (subscription: PushSubscriptionRecord, now: number, cap: number) => PushAdded;
  /** list() runs for every card event; subscriptions change only through this store. */
  private cached?: PushSubscriptionRecord[];

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    // A file from before people (docs/routing.md) gains the column.
    const columns = db.prepare('PRAGMA table_info(push_subscriptions)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'who')) db.exec('ALTER TABLE push_subscriptions ADD COLUMN who TEXT');
    this.stmt = {
      exists: db.prepare('SELECT 1 FROM push_subscriptions WHERE endpoint = ?').pluck(),
      // The principal's other subscriptions: re-subscribing a known endpoint does not count twice.
      others: db.prepare('SELECT COUNT(*) FROM push_subscriptions WHERE who IS ? AND endpoint <> ?').pluck(),
      upsert: db.prepare(
        `INSERT INTO push_subscriptions (endpoint, p256dh, auth, created_at, who) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth, who = excluded.who`,
      ),
      remove: db.prepare('DELETE FROM push_subscriptions WHERE endpoint = ?'),
      removeWho: db.prepare('DELETE FROM push_subscriptions WHERE who = ?'),
      list: db.prepare('SELECT endpoint, p256dh, auth, who FROM push_subscriptions ORDER BY created_at, rowid'),
    };
    this.addWithin = db.transaction((subscription: PushSubscriptionRecord, now: number, cap: number): PushAdded => {
      if ((this.stmt.others.get(subscription.who ?? null, subscription.endpoint) as number) >= cap) return { created: false, full: true };
      const known = this.stmt.exists.get(subscription.endpoint) !== undefined;
      this.stmt.upsert.run(subscription.endpoint, subscription.keys.p256dh, subscription.keys.auth, now, subscription.who ?? null);
      this.cached = undefined;
      return { created: !known };
    });
  }

  /**
   * Stores a subscription (or its new keys); `created` is false when the endpoint was known.
   * Refused (`full`) when its principal (`who`, none: the operator) has `cap` other subscriptions.
   */
  add(subscription: PushSubscriptionRecord, now = Date.now(), cap = Infinity): PushAdded {
    return this.addWithin(subscription, now, cap);
  }

  /** Whether a subscription with this endpoint was there to remove. */
  remove(endpoint: string): boolean {
    this.cached = undefined;
    return this.stmt.remove.run(endpoint).changes > 0;
  }

  /** A person removed: their browsers get no more pushes (how many subscriptions went). */
  removeWho(name: string): number {
    this.cached = undefined;
    return this.stmt.removeWho.run(name).changes;
  }

  has(endpoint: string): boolean {
    return this.stmt.exists.get(endpoint) !== undefined;
  }

  list(): PushSubscriptionRecord[] {
    if (this.cached) return this.cached;
    const rows = this.stmt.list.all() as SubscriptionRow[];
    return (this.cached = rows.map(recordOf));
  }
}

export interface SubscriptionRow {
  endpoint: string;
  p256dh: string;
  auth: string;
  who: string | null;
}

export const recordOf = ({ endpoint, p256dh, auth, who }: SubscriptionRow): PushSubscriptionRecord => ({ endpoint, keys: { p256dh, auth }, ...(who ? { who } : {}) });

/**
 * The subscriptions as a networked database serves them: every call a promise. PostgreSQL
 * (src/store/postgres/postgres-push-subscription-store.ts) implements it.
 */
export type AsyncPushSubscriptionStore = Async<PushSubscriptionStore>;

/** The SQLite subscriptions behind the asynchronous interface (the same semantics, resolved at once). */
export function asyncPush(store: PushSubscriptionStore): AsyncPushSubscriptionStore {
  return {
    add: async (subscription, now, cap) => store.add(subscription, now, cap),
    remove: async (endpoint) => store.remove(endpoint),
    removeWho: async (name) => store.removeWho(name),
    has: async (endpoint) => store.has(endpoint),
    list: async () => store.list(),
  };
}
