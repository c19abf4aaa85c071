import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import type { Handler } from 'hono';
import { namedDuration } from '../config.js';
import { RelayError } from '../errors.js';
import { CALL_KEY, DEFAULT_TIMING, type CallTiming, type McpDialect, type ToolCall } from '../relay/call-waits.js';
import { answeredBy, type Principal } from '../relay/access.js';
import type { CardAccess } from '../relay/card-access.js';
import type { AsyncCallStore } from '../store/call-store.js';
import { isRelayTool, type RelayToolbox } from '../sessions/relay-tool.js';
import type { AuthEnv } from './auth.js';
import type { ConnectionLimit } from './connection-limit.js';
import { readLimitedOr } from './http.js';
import type { CardDraft } from '../cards/model.js';
import { VERSION } from '../version.js';
import type { NodeLoad } from '../cluster/node-load.js';

// /mcp: askrelay's MCP server over Streamable HTTP (behind the bearer token, see app.ts).
// Sessions are stateful (Mcp-Session-Id) so that notifications/cancelled reaches the call
// it cancels; each session is one SDK Server on one transport, kept in memory and closed
// after an hour without requests or running calls (ASKRELAY_MCP_IDLE). Its streams (a GET
// stream, and each tools/call answered as a stream) count against the caller's long-lived
// connections (ASKRELAY_MAX_CONNECTIONS). The only tool is ask_user, in the dialect the
// route is made for: Cursor's at /mcp, OpenClaw's at /mcp/openclaw; and the relay tool
// (list_questions, answer_question, start_session, watch_session).
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
/**
 * A tools/call is rarely more than a few KB, but the card limits allow an ask_user of ten
 * long questions with twenty described options each (some 300 KB): 1 MB leaves room for it.
 */
const MAX_BODY = 1024 * 1024;
/** Tool arguments that are not an object are carried under this key to the handler, which refuses them. */
const NON_OBJECT = '__askrelay_non_object_arguments';

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

interface McpSession {
  id?: string;
  /** Who opened the session; every later request must come from the same caller. */
  caller: Principal;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  active: number;
  closed: boolean;
  /**
   * Per running tools/call: `gone` is aborted when the HTTP request carrying it goes away;
   * `delivered`, whether the HTTP response carrying its result was written in full.
   */
  requests: Map<string, { gone: AbortController; delivered?: Promise<boolean> }>;
}

const requestKey = (id: string | number) => `${typeof id}:${id}`;

/** An HTTP-level refusal in JSON-RPC's shape; `data.code` carries the relay's error code when there is one. */
function jsonRpcError(status: number, code: number, message: string, relayCode?: string): Response {
  const error = { code, message, ...(relayCode ? { data: { code: relayCode } } : {}) };
  return new Response(JSON.stringify({ jsonrpc: '2.0', error, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** True once Node's response was flushed in full ('finish'), false if its connection closed first. */
function responseWritten(outgoing: ServerResponse | undefined): Promise<boolean> {
  if (!outgoing) return Promise.resolve(true);
  return new Promise((resolve) => {
    outgoing.once('finish', () => resolve(true));
    outgoing.once('close', () => resolve(outgoing.writableFinished));
  });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The MCP caller behind an HTTP caller: always an agent. */
function mcpCaller(who: Principal): Principal {
  return who.kind === 'human' ? { kind: 'agent', id: 'mcp', sessionId: null, surface: 'mcp' } : { ...who, surface: 'mcp' };
}

export function mcpRoute(access: CardAccess, dialect: McpDialect, options: McpRouteOptions): Handler<AuthEnv & { Bindings: HttpBindings }> {
  const { tool } = dialect;
  const { relay } = access;
  const { toolbox } = options;
  const waits = dialect.waits(relay, options.calls, { ...DEFAULT_TIMING, ...options.timing }, options.recoverOrphans ?? true);
  const idleMs = options.sessionIdleMs ?? DEFAULT_IDLE_MS;
  const sessions = new Map<string, McpSession>();

  // On the relay's clock, so that tests move it by hand; the sweep runs as long as the process.
  const { clock } = relay;
  const sweep = () => {
    const now = clock.now();
    for (const session of sessions.values()) {
      if (session.active === 0 && now - session.lastSeen > idleMs) void session.server.close();
    }
    clock.setTimer(sweep, Math.min(idleMs, 10 * 60 * 1000));
  };
  clock.setTimer(sweep, Math.min(idleMs, 10 * 60 * 1000));

  async function openSession(caller: Principal): Promise<McpSession> {
    const server = new Server({ name: 'askrelay', version: VERSION }, { capabilities: { tools: {} } });
    const session: McpSession = {
      caller,
      server,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          sessions.set(id, session);
        },
      }),
      lastSeen: clock.now(),
      active: 0,
      closed: false,
      requests: new Map(),
    };
    server.onclose = () => {
      session.closed = true;
      if (session.id) sessions.delete(session.id);
    };

    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { ...tool, annotations: { readOnlyHint: true, openWorldHint: false } },
        ...(toolbox ? toolbox.definitions.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })) : []),
      ],
    }));

    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name } = request.params;
      if (toolbox && isRelayTool(name)) {
        // An approval card nobody waits on any more (the client cancelled or left) is cancelled.
        const ask = async (draft: CardDraft) => {
          const card = await relay.settle((await access.create(caller, draft)).id, extra.signal);
          return card.status === 'pending' ? relay.cancel(card.id) : card;
        };
        const result = await toolbox.call(caller, name, request.params.arguments ?? {}, ask);
        return { content: [{ type: 'text', text: result.text }], ...(result.isError ? { isError: true } : {}) };
      }
      if (name !== tool.name) {
        const names = [tool.name, ...(toolbox ? toolbox.definitions.map((t) => t.name) : [])].join(', ');
        throw new McpError(ErrorCode.InvalidParams, `There is no tool "${name}"; this server offers ${names}.`);
      }
      const key = requestKey(extra.requestId);
      const { gone, delivered } = session.requests.get(key) ?? { gone: new AbortController() };
      const cancelled = new AbortController();
      // The SDK aborts a call both for notifications/cancelled and when the session closes;
      // the session is marked closed (onclose) right after its aborts, before this runs.
      extra.signal.addEventListener('abort', () => queueMicrotask(() => (session.closed ? gone : cancelled).abort()), { once: true });
      const raw = request.params.arguments;
      const args = raw && NON_OBJECT in raw ? raw[NON_OBJECT] : raw;
      const clientKey = request.params._meta?.[CALL_KEY];
      session.active += 1;
      if (options.load) options.load.mcpCalls += 1;
      try {
        const result = await waits.call({
          arguments: args,
          mcpSessionId: extra.sessionId,
          requestId: extra.requestId,
          sessionId: caller.kind === 'agent' ? caller.sessionId : null,
          askedBy: answeredBy(caller),
          ...(typeof clientKey === 'string' && clientKey.length <= 200 ? { clientKey } : {}),
          progressToken: extra._meta?.progressToken,
          cancelled: cancelled.signal,
          gone: gone.signal,
          ...(delivered ? { delivered } : {}),
          progress: (progress, message) =>
            extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: extra._meta!.progressToken!, progress, message },
            }),
        });
        return result as CallToolResult;
      } finally {
        if (options.load) options.load.mcpCalls -= 1;
        session.active -= 1;
        session.lastSeen = clock.now();
        session.requests.delete(key);
      }
    });

    await server.connect(session.transport);
    return session;
  }

  return async (c) => {
    const req = c.req.raw;
    const caller = mcpCaller(c.get('principal'));

    // The body is read (and refused past 1 MB) before a session is opened or found.
    let parsedBody: unknown;
    if (req.method === 'POST') {
      const body = await readLimitedOr(req, MAX_BODY, (err) => jsonRpcError(err.status, -32600, err.message, err.code));
      if (!Buffer.isBuffer(body)) return body;
      const text = body.toString('utf8');
      try {
        parsedBody = JSON.parse(text);
      } catch {
        return jsonRpcError(400, -32700, 'Parse error: the body is not valid JSON.');
      }
    }

    const sessionId = req.headers.get('mcp-session-id');
    let session: McpSession;
    if (sessionId) {
      const known = sessions.get(sessionId);
      // Another caller's session does not exist for this one.
      if (!known || known.caller.id !== caller.id) return jsonRpcError(404, -32001, 'Session not found (the relay may have restarted); start a new session.');
      session = known;
    } else {
      // Only an initialize request may come without a session; the transport refuses the rest.
      session = await openSession(caller);
    }
    session.lastSeen = clock.now();

    const messages = parsedBody === undefined ? [] : Array.isArray(parsedBody) ? parsedBody : [parsedBody];
    // A GET stream, and a POST carrying a tools/call (answered as a stream that stays open
    // until the call ends, possibly hours), each hold one of the caller's connections.
    const longLived = (req.method === 'GET' && sessionId !== null) || messages.some((m) => isObject(m) && m.method === 'tools/call');
    if (longLived && options.connections) {
      try {
        options.connections.hold(c.env?.outgoing, caller);
      } catch (err) {
        if (!session.id && !session.closed) await session.server.close();
        if (err instanceof RelayError) return jsonRpcError(err.status, -32000, err.message, err.code);
        throw err;
      }
    }

    const calls: string[] = [];
    for (const message of messages) {
      if (!isObject(message) || message.method !== 'tools/call' || !isObject(message.params)) continue;
      const args = message.params.arguments;
      if (args !== undefined && !isObject(args)) message.params.arguments = { [NON_OBJECT]: args };
      if (typeof message.id === 'string' || typeof message.id === 'number') {
        const key = requestKey(message.id);
        calls.push(key);
        session.requests.set(key, { gone: new AbortController() });
      }
    }
    if (calls.length) {
      req.signal.addEventListener('abort', () => calls.forEach((key) => session.requests.get(key)?.gone.abort()), { once: true });
      const written = responseWritten(c.env?.outgoing);
      calls.forEach((key) => (session.requests.get(key)!.delivered = written));
    }

    const response = await session.transport.handleRequest(req, parsedBody !== undefined ? { parsedBody } : undefined);
    if (response.status !== 200) {
      calls.forEach((key) => session.requests.delete(key));
    }
    if (!session.id && !session.closed) await session.server.close();
    return response;
  };
}
