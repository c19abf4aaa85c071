import { Hono } from 'hono';
import type { Relay } from '../relay/relay.js';
import type { SessionManager } from '../sessions/manager.js';
import { VERSION } from '../version.js';
import { login, logout, requireToken } from './auth.js';
import { cardRoutes } from './card-routes.js';
import { eventsRoute } from './events-route.js';
import { sendError } from './http.js';
import type { McpDialect } from '../relay/call-waits.js';
import { mcpRoute, mcpTimingFromEnv, type McpRouteOptions } from './mcp-route.js';
import { sessionRoutes } from './session-routes.js';
import { webPage } from './web-page.js';

export interface AppOptions {
  relay: Relay;
  sessions: SessionManager;
  token: string;
  /** /mcp and /mcp/openclaw timings; by default from ASKRELAY_MCP_PROGRESS and ASKRELAY_MCP_GRACE. */
  mcp?: McpRouteOptions;
  /** The ask tools to serve over MCP, by path (the composition root passes every provider's). */
  mcpDialects?: Record<string, McpDialect>;
}

export function createApp({ relay, sessions, token, mcp, mcpDialects = {} }: AppOptions) {
  const app = new Hono();
  app.onError((err, c) => sendError(c, err));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: `No route ${c.req.method} ${c.req.path}.` } }, 404));

  app.get('/api/health', (c) => c.json({ ok: true, version: VERSION }));
  app.post('/api/login', (c) => login(c, token));
  app.post('/api/logout', (c) => logout(c));
  app.use('/api/*', requireToken(token));
  app.route('/api/cards', cardRoutes(relay));
  app.route('/api/sessions', sessionRoutes(sessions));
  app.get('/api/events', eventsRoute(relay.events));
  const mcpOptions = mcp ?? { timing: mcpTimingFromEnv(process.env) };
  app.use('/mcp', requireToken(token));
  app.use('/mcp/*', requireToken(token));
  for (const [path, dialect] of Object.entries(mcpDialects)) app.all(path, mcpRoute(relay, dialect, mcpOptions));

  webPage(app);
  return app;
}
