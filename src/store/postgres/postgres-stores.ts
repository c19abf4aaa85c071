import pg from 'pg';
import type { Stores } from '../stores.js';
import { migrate } from './migrations.js';
import { PostgresAuditStore } from './postgres-audit-store.js';
import { PostgresCallStore } from './postgres-call-store.js';
import { PostgresCardStore } from './postgres-card-store.js';
import { PostgresChannelStore } from './postgres-channel-store.js';
import { PostgresLoginStore } from './postgres-login-store.js';
import { PostgresPushSubscriptionStore } from './postgres-push-subscription-store.js';
import { PostgresSessionStore } from './postgres-session-store.js';

/**
 * Every store on one PostgreSQL database through one pool: the schema migrated first (safe
 * when nodes start together), the audit log keyed with `auditKey`.
 */
export async function postgresStores(url: string, auditKey: Buffer, log: (line: string) => void = (l) => console.warn(l)): Promise<Stores> {
  const pool = new pg.Pool({ connectionString: url });
  // An idle connection the server ends (a restart, a failover) is replaced on next use; its
  // error must not bring the relay down.
  pool.on('error', (err) => log(`database: an idle connection failed (${err.message}); it will be replaced`));
  try {
    await migrate(pool);
    const audit = await PostgresAuditStore.create(pool, { key: auditKey, onError: (err: Error) => log(`audit log: ${err.message}`) });
    return {
      kind: 'postgres',
      cards: new PostgresCardStore(pool),
      sessions: new PostgresSessionStore(pool),
      calls: new PostgresCallStore(pool),
      audit,
      push: new PostgresPushSubscriptionStore(pool),
      channels: new PostgresChannelStore(pool),
      logins: new PostgresLoginStore(pool),
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
