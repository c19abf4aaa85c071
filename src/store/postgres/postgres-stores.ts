import pg from 'pg';
import type { Stores } from '../stores.js';
import { migrate } from './migrations.js';
import { postgresCluster } from './postgres-cluster.js';
import { PostgresAuditStore } from './postgres-audit-store.js';
import { PostgresCallStore } from './postgres-call-store.js';
import { PostgresCardStore } from './postgres-card-store.js';
import { PostgresChannelStore } from './postgres-channel-store.js';
import { PostgresLoginStore } from './postgres-login-store.js';
import { PostgresUserStore } from './postgres-user-store.js';
import { PostgresPushSubscriptionStore } from './postgres-push-subscription-store.js';
import { PostgresSessionStore } from './postgres-session-store.js';
import { sharedRoutes, sharedSetting, type SharedSetting } from './shared-settings.js';

const CONNECT_TIMEOUT_MS = 5000;

/** A migrated PostgreSQL database, before its stores open (they need the audit key it may hold). */
export interface PostgresDatabase {
  /** A setting every node on the database shares: the stored one, else `make()`'s, stored. */
  shared(name: string, make: () => string): Promise<SharedSetting>;
  /** Every store on the database, the audit log keyed with `auditKey`. */
  stores(auditKey: Buffer): Promise<Stores>;
  /** Lets go of the database when no stores were opened. */
  end(): Promise<void>;
}

/** Connects one pool to the database at `url` and migrates its schema (safe when nodes start together). */
export async function openPostgres(url: string, log: (line: string) => void = (l) => console.warn(l)): Promise<PostgresDatabase> {
  // A request waits at most this long for a connection while the database is away, then is 503.
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection the server ends (a restart, a failover) is replaced on next use; its
  // error must not bring the relay down.
  pool.on('error', (err) => log(`database: an idle connection failed (${err.message}); it will be replaced`));
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    shared: (name, make) => sharedSetting(pool, name, make),
    stores: (auditKey) => openStores(pool, url, auditKey, log),
    end: () => pool.end(),
  };
}

/** Every store on one PostgreSQL database through one pool (tests; the relay uses openPostgres). */
export async function postgresStores(url: string, auditKey: Buffer, log?: (line: string) => void): Promise<Stores> {
  return (await openPostgres(url, log)).stores(auditKey);
}

async function openStores(pool: pg.Pool, url: string, auditKey: Buffer, log: (line: string) => void): Promise<Stores> {
  try {
    const audit = await PostgresAuditStore.create(pool, { key: auditKey, onError: (err: Error) => log(`audit log: ${err.message}`) });
    const cards = new PostgresCardStore(pool, audit);
    const sessions = new PostgresSessionStore(pool);
    // Events too big for NOTIFY travel as an id: the card or session is read back here.
    const load = (name: string, ref: string) => (name.startsWith('card.') ? cards.getCard(ref) : sessions.get(ref));
    return {
      kind: 'postgres',
      cards,
      sessions,
      calls: new PostgresCallStore(pool),
      audit,
      push: new PostgresPushSubscriptionStore(pool),
      channels: new PostgresChannelStore(pool),
      logins: new PostgresLoginStore(pool),
      users: new PostgresUserStore(pool),
      routes: sharedRoutes(pool),
      ping: async () => void (await pool.query('SELECT 1')),
      joinCluster: (node, leaseMs, clusterLog = log) => {
        // Each card change tells the other nodes in its own transaction (the bridge leaves cards to it).
        cards.announceAs(node);
        return postgresCluster(pool, url, { node, leaseMs, load, log: clusterLog });
      },
      close: async () => {
        await audit.flush().catch(() => {});
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}
