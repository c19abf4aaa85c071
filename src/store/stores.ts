import { join } from 'node:path';
import { soloCluster, type Cluster } from '../cluster/cluster.js';
import { asyncAudit, type AsyncAuditStore } from './audit-store.js';
import { asyncCalls, type AsyncCallStore } from './call-store.js';
import { asyncChannels, type AsyncChannelStore } from './channel-store.js';
import { asyncLogins, type AsyncLoginStore } from './login-store.js';
import { asyncUsers, type AsyncUserStore } from './user-store.js';
import { asyncPush, type AsyncPushSubscriptionStore } from './push-subscription-store.js';
import { asyncSessions, type AsyncSessionStore } from './session-store.js';
import { SqliteStore } from './sqlite-store.js';
import type { SharedRoutes } from '../routing/router.js';
import { asyncCards, type AsyncCardStore } from './store.js';

// Every store the relay uses, as its parts use them: each call a promise. The embedded
// SQLite file serves them (the default), or a PostgreSQL database (src/store/postgres/).

export interface Stores {
  kind: 'sqlite' | 'postgres';
  cards: AsyncCardStore;
  sessions: AsyncSessionStore;
  calls: AsyncCallStore;
  audit: AsyncAuditStore;
  push: AsyncPushSubscriptionStore;
  channels: AsyncChannelStore;
  logins: AsyncLoginStore;
  users: AsyncUserStore;
  /** The routes every node shares (PostgreSQL); the embedded store keeps them in routes.json only. */
  routes?: SharedRoutes;
  /** Resolves when the store answers (GET /api/health). */
  ping(): Promise<void>;
  /** Joins the nodes on this store as `node` (the embedded file has only this one). */
  joinCluster(node: string, leaseMs: number, log?: (line: string) => void): Promise<Cluster>;
  /** Writes what is queued (the audit log's last turn) and lets go of the database. */
  close(): Promise<void>;
}

export const DB_FILE = 'askrelay.sqlite';

/** The embedded store: one SQLite file in the data folder. */
export function sqliteStores(dataDir: string, auditKey: Buffer, log?: (line: string) => void): Stores {
  const store = new SqliteStore(join(dataDir, DB_FILE), { auditKey, ...(log ? { onAuditError: (err: Error) => log(`audit log: ${err.message}; its entries wait for the next write`) } : {}) });
  return {
    kind: 'sqlite',
    cards: asyncCards(store),
    sessions: asyncSessions(store.sessions),
    calls: asyncCalls(store.calls),
    audit: asyncAudit(store.audit),
    push: asyncPush(store.push),
    channels: asyncChannels(store.channels),
    logins: asyncLogins(store.logins),
    users: asyncUsers(store.users),
    joinCluster: async (node, leaseMs) => soloCluster(node, leaseMs),
    ping: async () => {},
    close: async () => store.close(),
  };
}
