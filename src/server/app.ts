import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { Card } from '../cards/model.js';
import type { Principal } from '../relay/access.js';
import type { CardAccess } from '../relay/card-access.js';
import type { RelayEventName } from '../relay/events.js';
import type { Session } from '../sessions/model.js';
import type { AsyncAuditStore } from '../store/audit-store.js';
import type { AsyncCallStore } from '../store/call-store.js';
import type { AsyncLoginStore } from '../store/login-store.js';
import { auditRoutes } from './audit-routes.js';
import type { SessionManager } from '../sessions/manager.js';
import type { ProviderInfo } from '../sessions/providers.js';
import { VERSION } from '../version.js';
import { humanOnly, login, logout, operatorOnly, ownOriginForCookies, requireToken, type AuthEnv } from './auth.js';
import { cardRoutes } from './card-routes.js';
import { eventsRoute } from './events-route.js';
import { sendError } from './http.js';
import type { AskDialect } from '../cards/ask-dialect.js';
import { pushRoutes, type PushRoutesOptions } from './push-routes.js';
import { mcpRoute, type McpRouteOptions } from './mcp/route.js';
import { ConnectionLimit } from './connection-limit.js';
import { Revocations } from './revocations.js';
import { sessionRoutes } from './session-routes.js';
import { webPage } from './web-page.js';
import type { Cluster } from '../cluster/cluster.js';
import { holdsOf, type NodeLoad } from '../cluster/node-load.js';
import { nodeRoutes } from './node-routes.js';
import { userRoutes } from './user-routes.js';
import { routingRoutes } from './routing-routes.js';
import type { Router } from '../routing/router.js';
import { PERSONAL_TOKEN_PREFIX, personalTokenHash, type AsyncUserStore } from '../store/user-store.js';
import { metricsRoute, type MetricsRouteOptions } from './metrics-route.js';
import type { OpsSink } from '../ops/ops.js';
import { NAMED_SCHEMAS, apiRoutes } from './openapi/api-routes.js';
import { openApiDocument, type OpenApiDocument } from './openapi/document.js';
import { RelayError, storeUnavailable } from '../errors.js';

export interface AppOptions {
  /** The cards as each caller may see them (the access rules); its relay is the relay core. */
  access: CardAccess;
  audit: AsyncAuditStore;
  sessions: SessionManager;
  /** The providers sessions run on, as GET /api/providers serves them (the composition root makes them from the registry). */
  providers?: readonly ProviderInfo[];
  token: string;
  /** Which card each MCP tools/call waits on (the store's mcp_calls). */
  calls: AsyncCallStore;
  /** The page's logins (POST /api/login, ended by POST /api/logout). */
  logins: AsyncLoginStore;
  /** The relay's people (GET/POST/DELETE /api/users); their personal tokens sign requests as them. */
  users?: AsyncUserStore;
  /** The routes (GET/PUT /api/routes, docs/routing.md). */
  router?: Router;
  /**
   * Where browsers reach the relay when a proxy sits in front (ASKRELAY_PUBLIC_URL): its
   * origin counts as the relay's own, and an https one makes the page's cookie Secure.
   */
  publicUrl?: string;
  /** /mcp and /mcp/openclaw timings (the composition root reads ASKRELAY_MCP_PROGRESS, ASKRELAY_MCP_GRACE and ASKRELAY_MCP_IDLE); without them, the defaults. */
  mcp?: Omit<McpRouteOptions, 'calls'>;
  /** Long-lived connections one caller may hold (ASKRELAY_MAX_CONNECTIONS; default 1000). */
  maxConnections?: number;
  /** Credentials taken back end what they hold open, on every node (the composition root's listens to the others); default: this node's alone. */
  revocations?: Revocations;
  /** The ask tools to serve over MCP, by path (the composition root passes every provider's). */
  mcpDialects?: Record<string, AskDialect>;
  /** Web Push (key and subscriptions); without it the /api/push routes are absent. */
  push?: PushRoutesOptions;
  /** The nodes on the relay's store (GET /api/nodes, and the node /api/health names). */
  cluster?: Pick<Cluster, 'node' | 'kind' | 'nodes' | 'leases'>;
  /** Counts this node's open streams and MCP calls, for the node list. */
  load?: NodeLoad;
  /** Whether MCP calls cut off by a restart are cancelled after their grace (false while other nodes are alive). */
  recoverMcpCalls?: boolean;
  /** Whether the store answers (GET /api/health is 503 while it does not). */
  ping?: () => Promise<void>;
  /** Where requests refused or failed are reported (the log, the metrics); default: unexpected errors on stderr. */
  ops?: OpsSink;
  /** GET /metrics: the registry, and the scraper's own token (ASKRELAY_METRICS_TOKEN). */
  metrics?: MetricsRouteOptions;
  /** The chat channels: their webhooks (mounted at /channels; each checks its platform's signature) and outbox status. */
  channels?: { webhooks: Hono; status(): Promise<unknown[]> };
}

export function createApp({ access, audit, sessions, providers = [], token, calls, logins, users, router, publicUrl, mcp, mcpDialects = {}, push, channels, maxConnections, revocations = new Revocations(), cluster, load, ping, recoverMcpCalls, ops, metrics }: AppOptions) {
  const { relay } = access;
  const tokens = {
    operator: token,
    agentSession: (text: string) => sessions.sessionOfToken(text),
    logins,
    // Only a token shaped like a personal one is looked up: an agent's request (every MCP call)
    // costs no extra store read, which on PostgreSQL is a round trip.
    ...(users ? { person: async (text: string) => (text.startsWith(PERSONAL_TOKEN_PREFIX) ? users.nameOfToken(personalTokenHash(text)) : undefined) } : {}),
  };
  const cookie = { secure: publicUrl?.trim().toLowerCase().startsWith('https:') ?? false };
  const app = new Hono();
  app.onError((err, c) => {
    reportError(ops, c, err);
    return sendError(c, err);
  });
  app.notFound((c) => c.json({ error: { code: 'not_found', message: `No route ${c.req.method} ${c.req.path}.` } }, 404));
  app.use('*', securityHeaders);
  // Before every route that takes the cookie, /api/login and /api/logout included.
  const ownOrigin = ownOriginForCookies(publicUrl);
  app.use('/api/*', ownOrigin);
  app.use('/mcp', ownOrigin);
  app.use('/mcp/*', ownOrigin);

  const where = cluster ? { store: cluster.kind, node: cluster.node } : {};
  app.get('/api/health', async (c) => {
    try {
      await ping?.();
    } catch {
      // A load balancer's health check: this node cannot serve while its database is away.
      const err = new RelayError('store_unavailable', 'The database does not answer; the relay serves again once it is back.');
      return c.json({ ok: false, version: VERSION, ...where, ...err.toJSON() }, 503);
    }
    return c.json({ ok: true, version: VERSION, ...where });
  });
  // For generated clients, without a token: it says what the routes are, not what they hold.
  let openApi: OpenApiDocument | undefined;
  app.get('/api/openapi.json', (c) => c.json((openApi ??= openApiDocument(apiRoutes({ startSession: sessions.startSchema }), { version: VERSION, named: NAMED_SCHEMAS }))));
  app.post('/api/login', (c) => login(c, tokens, cookie));
  if (metrics) app.get('/metrics', metricsRoute(metrics, token));
  app.post('/api/logout', (c) => logout(c, tokens, cookie, revocations));
  // Chat platforms cannot send the relay's token: each webhook checks its platform's signature instead.
  if (channels) app.route('/channels', channels.webhooks);
  app.use('/api/*', requireToken(tokens, revocations));
  // Before the routes they guard: a refused stream or long poll never starts.
  // Several nodes: the client's next request may reach another node, which cannot see what
  // this one still has queued for the audit log; a request is answered once its entries
  // (a change's, a refusal's) are in the shared log. SQLite keeps batching them per turn.
  if (cluster?.kind === 'postgres') app.use('/api/*', auditWrittenFirst(audit));
  const connections = new ConnectionLimit(maxConnections, revocations);
  app.use('/api/events', connections.middleware());
  app.use('/api/cards/:id/wait', connections.middleware());
  if (load) app.use('/api/cards/:id/wait', countWaits(load));
  app.route('/api/cards', cardRoutes(access));
  app.route('/api/sessions', sessionRoutes(sessions, access));
  app.get('/api/providers', (c) => c.json({ providers }));
  // Who the request is signed in as: the page shows it.
  app.get('/api/me', (c) => c.json(whoOf((c as unknown as Context<AuthEnv>).get('principal'))));
  if (users) app.route('/api/users', userRoutes(users, logins, revocations, push?.subscriptions));
  if (router) app.route('/api/routes', routingRoutes(router));
  app.route('/api/audit', auditRoutes(audit));
  if (cluster) app.route('/api/nodes', nodeRoutes(cluster, () => holdsOf(sessions, load)));
  if (push) app.route('/api/push', pushRoutes(push));
  if (channels) app.get('/api/channels', operatorOnly, async (c) => c.json({ channels: await channels.status() }));
  app.get('/api/events', eventsRoute(relay.events, (who, name, data) => shows(access, who, name, data), load));
  const mcpOptions = mcp ?? {};
  app.use('/mcp', requireToken(tokens, revocations));
  app.use('/mcp/*', requireToken(tokens, revocations));
  for (const [path, dialect] of Object.entries(mcpDialects)) {
    app.all(path, mcpRoute(access, dialect, { ...mcpOptions, calls, connections, ...(load ? { load } : {}), ...(recoverMcpCalls === false ? { recoverOrphans: false } : {}), ...(sessions.toolbox ? { toolbox: sessions.toolbox } : {}) }));
  }

  webPage(app);
  return app;
}

const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * On every response, errors and 404s included. Set on Node's response before the route runs
 * as well, since the event stream (and anything else that writes there itself) bypasses
 * Hono's headers; Node merges them with what the route writes, without repeating any.
 */
const securityHeaders: MiddlewareHandler<{ Bindings: Partial<HttpBindings> }> = async (c, next) => {
  const outgoing = c.env?.outgoing;
  if (outgoing && !outgoing.headersSent) for (const [name, value] of Object.entries(SECURITY_HEADERS)) outgoing.setHeader(name, value);
  await next();
  if (outgoing?.headersSent) return; // written by the route itself, with the headers above
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
};

/** Refusals an operator should hear of (a wrong token, a limit) and unexpected errors, with no token or body in them. */
function reportError(ops: OpsSink | undefined, c: Context, err: unknown): void {
  const where = { method: c.req.method, path: c.req.path, ip: (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket.remoteAddress };
  if (err instanceof RelayError) {
    if (err.code === 'unauthorized' || err.code === 'cross_origin') ops?.emit('auth.refused', { ...where, code: err.code });
    else if (err.code === 'too_many_connections' || err.code === 'body_too_large') ops?.emit('limit.reached', { ...where, code: err.code });
    return;
  }
  if (storeUnavailable(err)) return ops?.emit('store.unavailable', { ...where, error: (err as Error).message });
  if (ops) ops.emit('relay.error', { ...where, error: (err as Error)?.message, stack: (err as Error)?.stack });
  else console.error(err);
}

/** A principal as GET /api/me names it: the operator, a person, or a session's agent. */
function whoOf(who: Principal) {
  if (who.kind === 'agent') return { kind: 'agent' as const, id: who.id, sessionId: who.sessionId };
  return { kind: 'human' as const, id: who.id, operator: who.id === 'operator' };
}

/** Long polls waiting here, for the node list. */
function countWaits(load: NodeLoad): MiddlewareHandler {
  return async (_c, next) => {
    load.waits += 1;
    try {
      await next();
    } finally {
      load.waits -= 1;
    }
  };
}

function auditWrittenFirst(audit: AsyncAuditStore): MiddlewareHandler {
  return async (_c, next) => {
    await next();
    // A database away keeps the entries queued for the next write; the answer goes out as it is.
    await audit.flush().catch(() => {});
  };
}

/** Whether an agent's event stream carries this event: cards it may see, its own and watched sessions. */
function shows(access: CardAccess, who: Principal, name: RelayEventName, data: unknown): Promise<boolean> {
  return name === 'session.updated' ? access.canSeeSession(who, (data as Session).id) : access.canSee(who, data as Card);
}
