import type { HttpBindings } from '@hono/node-server';
import type { Context, Handler } from 'hono';
import type { AskDialect } from '../../cards/ask-dialect.js';
import type { NodeLoad } from '../../cluster/node-load.js';
import { namedDuration } from '../../config.js';
import { RelayError } from '../../errors.js';
import type { Principal } from '../../relay/access.js';
import type { CardAccess } from '../../relay/card-access.js';
import type { RelayToolbox } from '../../sessions/relay-tool.js';
import type { AsyncCallStore } from '../../store/call-store.js';
import type { AuthEnv } from '../auth.js';
import type { ConnectionLimit } from '../connection-limit.js';
import { callFamilies, CallWaits, DEFAULT_TIMING, type CallTiming } from './call-waits.js';
import { isToolCall, jsonRpcError, messagesOf, noteCalls, readBody } from './request.js';
import { McpSessions, type McpSession } from './sessions.js';

// /mcp: askrelay's MCP server over Streamable HTTP (behind the bearer token, see app.ts).
// Sessions are stateful (Mcp-Session-Id, sessions.ts) and closed after an hour without
// requests or running calls (ASKRELAY_MCP_IDLE). Their streams (a GET stream, and each
// tools/call answered as a stream) count against the caller's long-lived connections
// (ASKRELAY_MAX_CONNECTIONS). The tools (tools.ts, tool-calls.ts) are ask_user in the dialect
// the route is made for (Cursor's at /mcp, OpenClaw's at /mcp/openclaw; the dialects are the
// providers', handed over by src/start.ts) and the relay tool; every call that waits on a
// card goes through call-waits.ts.
//
// Who calls: an MCP client is an agent. With a session's agent token it is that session's
// agent; with the operator's token it is an agent of no session ("mcp"), which may answer
// what agents may answer but never an approval card.

export interface McpRouteOptions {
  /** Which card each tools/call waits on (the store's mcp_calls). */
  calls: AsyncCallStore;
  timing?: Partial<CallTiming>;
  /** A session with no request and no running call for this long is closed. */
  sessionIdleMs?: number;
  /** The relay tool; without it the route serves only the ask tool. */
  toolbox?: RelayToolbox;
  /** The callers' long-lived connections; without it MCP streams are not counted. */
  connections?: ConnectionLimit;
  /** Counts the calls waiting on a card here, for the node list. */
  load?: NodeLoad;
  /** Whether calls cut off by a restart get the grace and are then cancelled (not with other nodes alive: theirs are live). */
  recoverOrphans?: boolean;
}

const DEFAULT_IDLE_MS = 3600 * 1000;

/** ASKRELAY_MCP_PROGRESS (default 30s), ASKRELAY_MCP_GRACE (default 60s) and ASKRELAY_MCP_IDLE (default 1h). */
export function mcpSettingsFromEnv(env: NodeJS.ProcessEnv): Pick<McpRouteOptions, 'timing' | 'sessionIdleMs'> {
  return {
    timing: {
      progressIntervalMs: env.ASKRELAY_MCP_PROGRESS ? namedDuration('ASKRELAY_MCP_PROGRESS', env.ASKRELAY_MCP_PROGRESS) : DEFAULT_TIMING.progressIntervalMs,
      reattachGraceMs: env.ASKRELAY_MCP_GRACE ? namedDuration('ASKRELAY_MCP_GRACE', env.ASKRELAY_MCP_GRACE) : DEFAULT_TIMING.reattachGraceMs,
    },
    sessionIdleMs: env.ASKRELAY_MCP_IDLE ? namedDuration('ASKRELAY_MCP_IDLE', env.ASKRELAY_MCP_IDLE) : DEFAULT_IDLE_MS,
  };
}

/** The MCP caller behind an HTTP caller: always an agent. */
function mcpCaller(who: Principal): Principal {
  return who.kind === 'human' ? { kind: 'agent', id: 'mcp', sessionId: null, surface: 'mcp' } : { ...who, surface: 'mcp' };
}

type McpContext = Context<AuthEnv & { Bindings: HttpBindings }>;

export function mcpRoute(access: CardAccess, dialect: AskDialect, options: McpRouteOptions): Handler<AuthEnv & { Bindings: HttpBindings }> {
  const { relay } = access;
  const { toolbox, load } = options;
  const recover = options.recoverOrphans === false ? [] : callFamilies(dialect);
  const waits = new CallWaits(relay, options.calls, { ...DEFAULT_TIMING, ...options.timing }, recover);
  // The MCP SDK loads with the first MCP session (sessions.ts, tool-calls.ts), not at start.
  const sessions = new McpSessions(relay.clock, options.sessionIdleMs ?? DEFAULT_IDLE_MS, async (session) =>
    (await import('./tool-calls.js')).serveTools(session, { dialect, waits, clock: relay.clock, ...(toolbox ? { toolbox } : {}), ...(load ? { load } : {}) }),
  );

  /** The caller's session of the request, or a new one (only an initialize may come without: the transport refuses the rest). */
  async function sessionOf(sessionId: string | null, caller: Principal): Promise<McpSession | Response> {
    if (!sessionId) return sessions.open(caller);
    const known = sessions.find(sessionId, caller);
    return known ?? jsonRpcError(404, -32001, 'Session not found (the relay may have restarted); start a new session.');
  }

  /**
   * A GET stream, and a POST carrying a tools/call (answered as a stream that stays open until
   * the call ends, possibly hours), each hold one of the caller's connections; the refusal, if any.
   */
  async function holdConnection(c: McpContext, session: McpSession, messages: unknown[], caller: Principal): Promise<Response | undefined> {
    const longLived = (c.req.method === 'GET' && session.id !== undefined) || messages.some(isToolCall);
    if (!longLived || !options.connections) return undefined;
    try {
      options.connections.hold(c.env?.outgoing, caller, c.get('credential'));
      return undefined;
    } catch (err) {
      if (!session.id && !session.closed) await session.server.close();
      if (err instanceof RelayError) return jsonRpcError(err.status, -32000, err.message, err.code);
      throw err;
    }
  }

  return async (c) => {
    const req = c.req.raw;
    const caller = mcpCaller(c.get('principal'));
    // The body is read (and refused past 1 MB) before a session is opened or found.
    const body = await readBody(req);
    if (body instanceof Response) return body;
    const session = await sessionOf(req.headers.get('mcp-session-id'), caller);
    if (session instanceof Response) return session;
    session.lastSeen = relay.clock.now();

    const messages = messagesOf(body.parsed);
    const refused = await holdConnection(c, session, messages, caller);
    if (refused) return refused;
    const calls = noteCalls(session, messages, req, c.env?.outgoing);
    const response = await session.transport.handleRequest(req, body.parsed !== undefined ? { parsedBody: body.parsed } : undefined);
    if (response.status !== 200) calls.forEach((key) => session.requests.delete(key));
    // A request that opened no session (anything but a successful initialize) leaves nothing open.
    if (!session.id && !session.closed) await session.server.close();
    return response;
  };
}
