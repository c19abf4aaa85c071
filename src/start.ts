import { serve, type ServerType } from '@hono/node-server';
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import { MCP_DIALECTS, PROVIDERS } from '../providers/index.js';
import { describeProviders, engineWaitSettings, runnerFactories, type ProviderInfo } from './sessions/providers.js';
import { rememberSecret } from './cards/secrets.js';
import { personalTokenHash } from './store/user-store.js';
import { loadChannels } from './channels/index.js';
import { channelsConfig } from './channels/config.js';
import { Channels } from './channels/service.js';
import type { ServeConfig } from './config.js';
import { sessionFacts } from './relay/access.js';
import { CardAccess } from './relay/card-access.js';
import { loadRoutes, openRouter } from './routing/open-router.js';
import { pushConfigFromEnv } from './push/push-config.js';
import { PushSender } from './push/push-sender.js';
import { loadOrCreateVapidKeys } from './push/vapid-keys.js';
import { RelayEvents } from './relay/events.js';
import { Relay } from './relay/relay.js';
import { createApp } from './server/app.js';
import { Revocations } from './server/revocations.js';
import { keepIdleConnections } from './server/keep-alive.js';
import { mcpSettingsFromEnv } from './server/mcp/route.js';
import { SessionManager } from './sessions/manager.js';
import { existingAuditKey, loadOrCreateAuditKey, loadOrCreateToken, openDataFolder } from './store/data-folder.js';
import { lockDataFolder } from './store/folder-lock.js';
import { sharedSecrets, type RelaySecrets } from './store/shared-secrets.js';
import { sqliteStores, type Stores } from './store/stores.js';
import { defaultNodeId } from './config.js';
import { newNodeLoad } from './cluster/node-load.js';
import { wireNodes } from './cluster/join-nodes.js';
import { VERSION } from './version.js';
import { createLogger } from './ops/log.js';
import { RelayMetrics } from './ops/metrics.js';
import { Ops } from './ops/ops.js';
import { reportRelayEvents } from './ops/relay-ops.js';

// The composition root: the store, the relay core, the session manager with every
// provider, and the HTTP surface, wired together and listening.

export { DB_FILE } from './store/stores.js';

export interface RunningRelay {
  url: string;
  token: string;
  relay: Relay;
  sessions: SessionManager;
  /** Web Push delivery (idle() for tests). */
  push: PushSender;
  /** The chat channels switched on (idle() for tests). */
  channels: Channels;
  recovered: { expired: number; pending: number };
  /** This node's name, and the store it shares with any other nodes. */
  node: string;
  store: Stores['kind'];
  /** What start made or repaired in the data folder, one sentence each, for the operator. */
  notices: string[];
  /** Where the relay reports what an operator should hear of (its log and metrics). */
  ops: Ops;
  /** Every route the HTTP app serves (middleware left out), as Hono lists them: what the OpenAPI document must describe. */
  routes: { method: string; path: string }[];
  close(): Promise<void>;
}

/** The embedded SQLite file with the secrets in the data folder, or a PostgreSQL database every node shares them through. */
async function openStore(config: ServeConfig, notices: (string | undefined)[], warn: (line: string) => void): Promise<{ store: Stores; secrets: RelaySecrets }> {
  if (!config.databaseUrl) {
    // The secrets first: a refused token stops the start before anything opens.
    const token = loadOrCreateToken(config.dataDir, config.token);
    const auditKey = loadOrCreateAuditKey(config.dataDir, config.auditKey);
    notices.push(token.notice, auditKey.notice);
    const secrets = { token: token.value, auditKey: auditKey.value, vapid: loadOrCreateVapidKeys(config.dataDir), notices: [] };
    return { store: sqliteStores(config.dataDir, secrets.auditKey, warn), secrets };
  }
  // The PostgreSQL client loads only for a relay that uses it.
  const { openPostgres } = await import('./store/postgres/postgres-stores.js');
  const db = await openPostgres(config.databaseUrl, warn);
  try {
    // The audit key stays out of the database when the node has one: ASKRELAY_AUDIT_KEY, else <data>/audit.key.
    const auditKey = config.auditKey ?? existingAuditKey(config.dataDir);
    const secrets = await sharedSecrets(db.shared, { token: config.token, ...(auditKey ? { auditKey } : {}) });
    notices.push(...secrets.notices);
    return { store: await db.stores(secrets.auditKey), secrets };
  } catch (err) {
    await db.end().catch(() => {});
    throw err;
  }
}

/** The registry as plain data before any relay runs, for the CLI (askrelay demo, serve --help), which never imports providers/. */
export const registry = { describe: (env: NodeJS.ProcessEnv, waitMs: number) => describeProviders(PROVIDERS, env, waitMs), waits: engineWaitSettings(PROVIDERS) };

export async function startRelay(config: ServeConfig): Promise<RunningRelay> {
  // First: a bad wait setting (ASKRELAY_WAIT_EXTENSION, ASKRELAY_MCP_*) stops the start before anything opens.
  const settings = { providers: describeProviders(PROVIDERS, config.env, config.waitMs), mcp: mcpSettingsFromEnv(config.env) };
  const notices = [openDataFolder(config.dataDir)];
  // Before the store opens: a second relay on this folder stops here, having touched nothing.
  const lock = lockDataFolder(config.dataDir);
  notices.push(lock.notice);
  let running: RunningRelay;
  try {
    running = await startLocked(config, notices, settings);
  } catch (err) {
    lock.release();
    throw err;
  }
  let closed: Promise<void> | undefined;
  const close = running.close;
  return { ...running, close: () => (closed ??= close().finally(() => lock.release())) };
}

/** What startRelay read from the environment before it opened anything. */
interface Settings {
  providers: ProviderInfo[];
  mcp: ReturnType<typeof mcpSettingsFromEnv>;
}

async function startLocked(config: ServeConfig, notices: (string | undefined)[], { providers, mcp }: Settings): Promise<RunningRelay> {
  const node = config.nodeId ?? defaultNodeId(config.port || `pid${process.pid}`);
  const ops = new Ops(await createLogger({ level: config.logLevel, base: { node } }));
  const routeFile = loadRoutes(config.env, config.dataDir);
  const { store, secrets } = await openStore(config, notices, ops.warn);
  const { token, vapid } = secrets;
  // An answer holding the relay's own token is refused (src/cards/secrets.ts).
  const forgetToken = rememberSecret(token);
  const pushConfig = pushConfigFromEnv(config.env);
  const channelConfig = channelsConfig(config.env, config.dataDir);
  notices.push(store.audit.keyedNotice);
  const cluster = await store.joinCluster(node, config.leaseMs, ops.warn);
  // Other nodes alive now may have MCP calls waiting: theirs are not this node's to cancel.
  const alone = (await cluster.nodes()).every((n) => n.id === node);
  const { clock } = config;
  const load = newNodeLoad();
  // Where agents reach the relay (ASKRELAY_URL in their environment), known once it listens.
  let agentUrl: string | undefined;
  // Read when scraped: the sessions and channels exist by then.
  const events = new RelayEvents();
  const metrics: RelayMetrics = new RelayMetrics({ events, ops, pending: (): number => relay.pendingCount, load, sessions: () => sessions.list(), outboxes: () => channels.status() });
  const router = await openRouter({ loaded: routeFile, ...(store.routes ? { shared: store.routes } : {}), sessions: store.sessions, users: store.users, log: ops.warn });
  const isPersonalToken = async (candidate: string) => (await store.users.nameOfToken(personalTokenHash(candidate))) !== undefined;
  const relay = new Relay({ store: metrics.timed(store.cards), events, router, isPersonalToken, waits: { default: config.waitMs }, ...(clock ? { clock } : {}) });
  const nodes = await wireNodes(cluster, relay, ops.warn);
  // Listening before start: cards that expired while the relay was down close their
  // notifications, and cards that resumed sessions ask are notified.
  const push = new PushSender({ events: relay.events, subscriptions: store.push, vapid, config: pushConfig, sends: nodes.sends, log: ops.warn, ops });
  const access = new CardAccess(relay, sessionFacts(store.sessions), store.audit);
  const channels = new Channels({
    config: channelConfig,
    channels: await loadChannels(channelConfig),
    access,
    audit: store.audit,
    store: store.channels,
    queued: nodes.queued,
    people: store.users,
    log: ops.warn,
    ops,
    // Asked only once the relay listens (delivery starts at channels.start()).
    ...(clock ? { clock } : {}),
    context: { publicUrl: () => channelConfig.publicUrl ?? agentUrl ?? '', secret: createHash('sha256').update(`askrelay channels\0${token}`).digest('hex') },
  });
  channels.listen();
  reportRelayEvents(relay.events, ops);
  const { expired, pending } = await relay.start();
  const sessions = new SessionManager({
    relay,
    access,
    audit: store.audit,
    store: store.sessions,
    providers: runnerFactories(PROVIDERS, providers),
    env: config.env,
    stuckAfterMs: config.stuckAfterMs,
    // Agent tokens are derived from the relay token: a resumed agent gets the same one, and
    // the database keeps only their hashes.
    agentKey: createHash('sha256').update(`askrelay agents\0${token}`).digest(),
    owners: nodes.owners,
    relayUrl: () => agentUrl,
    log: ops.warn,
    ...(clock ? { clock } : {}),
  });
  await sessions.recover();
  // What a revoked credential holds open ends on every node (src/server/revocations.ts).
  const revocations = new Revocations({ cluster, events: relay.events, log: ops.warn });
  revocations.listen();
  const app = createApp({
    access,
    audit: store.audit,
    sessions,
    providers,
    token,
    calls: store.calls,
    logins: store.logins,
    users: store.users,
    router,
    ...(channelConfig.publicUrl ? { publicUrl: channelConfig.publicUrl } : {}),
    mcp,
    mcpDialects: MCP_DIALECTS,
    recoverMcpCalls: alone,
    cluster,
    load,
    ping: store.ping,
    push: { publicKey: vapid.publicKey, subscriptions: store.push, allowPrivate: pushConfig.allowPrivate },
    channels: { webhooks: channels.routes(), status: () => channels.status() },
    maxConnections: config.maxConnections,
    revocations,
    ops,
    metrics: { registry: metrics, ...(config.metricsToken ? { token: config.metricsToken } : {}) },
  });

  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s));
    keepIdleConnections(s as Server);
    s.once('error', reject);
  }).catch(async (err: unknown) => {
    // The port is taken (or similar): let go of what was opened before saying so.
    revocations.stop();
    await nodes.stop();
    push.stop();
    await channels.stop();
    relay.stop();
    await sessions.close();
    await cluster.close();
    await store.close();
    forgetToken();
    throw err;
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  // A wildcard host is reached on loopback.
  const reach = ['0.0.0.0', '::'].includes(config.host) ? '127.0.0.1' : host;
  agentUrl = `http://${reach}:${port}/`;
  // Posting (and polling) starts once the relay can take the callbacks, on the node holding the channels.
  await nodes.start({ sessions, channels, url: () => `http://${host}:${port}/`, load });

  ops.emit('relay.started', { url: agentUrl, store: store.kind, version: VERSION, pending, expiredWhileStopped: expired.length, channels: channels.describe().length });
  let closing: Promise<void> | undefined;
  const shutdown = async () => {
    ops.emit('relay.stopping');
    revocations.stop();
    await nodes.stop();
    push.stop();
    await channels.stop();
    relay.stop();
    // Agents (Claude Code processes) end before the store and folders they use go away.
    await sessions.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Long polls and event streams would hold close() open; end them.
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    });
    await cluster.close();
    await store.close();
    forgetToken();
  };

  return {
    url: `http://${host}:${port}/`,
    token,
    relay,
    sessions,
    push,
    channels,
    recovered: { expired: expired.length, pending },
    node,
    store: store.kind,
    notices: notices.filter((n): n is string => n !== undefined),
    ops,
    routes: app.routes.filter((r) => r.method !== 'ALL').map(({ method, path }) => ({ method, path })),
    // Once, however often it is called (a test stopping a node, then everything).
    close: () => (closing ??= shutdown()),
  };
}
