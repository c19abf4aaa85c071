import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolRequest,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { AskDialect } from '../../cards/ask-dialect.js';
import type { NodeLoad } from '../../cluster/node-load.js';
import { CALL_KEY, MAX_CALL_KEY } from '../../mcp-call-key.js';
import { answeredBy } from '../../relay/access.js';
import type { Clock } from '../../relay/clock.js';
import { isRelayTool, type RelayToolbox } from '../../sessions/relay-tool.js';
import { askCall, relayToolFamily, type CallWaits, type ToolCall } from './call-waits.js';
import { NON_OBJECT } from './request.js';
import { requestKey, type McpSession } from './sessions.js';
import { listedTools, toolNames } from './tools.js';

// tools/list and tools/call on one MCP session. Every call that may wait on a card goes the
// one way of call-waits.ts: the dialect's ask_user (its card made by the dialect's adapter)
// and the relay tool's approval cards alike, so both re-attach after a disconnect, send
// progress, are cancelled by notifications/cancelled and get the grace when the client goes.

export interface ToolDeps {
  dialect: AskDialect;
  toolbox?: RelayToolbox;
  waits: CallWaits;
  /** Counts the calls running here, for the node list. */
  load?: NodeLoad;
  clock: Clock;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;


/**
 * A JSON-RPC error whose message reaches the client as written. (The SDK's McpError puts
 * "MCP error -32602:" into the message itself, and the client's McpError adds it again.)
 */
class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export function serveTools(session: McpSession, deps: ToolDeps): void {
  session.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools(deps.dialect, deps.toolbox) }));
  session.server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(session, deps, request, extra));
}

async function callTool(session: McpSession, deps: ToolDeps, request: CallToolRequest, extra: Extra): Promise<CallToolResult> {
  const { dialect, toolbox, waits, load } = deps;
  const { name } = request.params;
  const relayTool = toolbox && isRelayTool(name) ? toolbox : undefined;
  if (!relayTool && name !== dialect.tool.name) {
    throw new ProtocolError(ErrorCode.InvalidParams, `There is no tool "${name}"; this server offers ${toolNames(dialect, toolbox).join(', ')}.`);
  }
  const key = requestKey(extra.requestId);
  const call = toolCall(session, request, extra);
  session.active += 1;
  if (load) load.mcpCalls += 1;
  try {
    if (!relayTool) return (await askCall(waits, dialect, call)) as CallToolResult;
    // The relay tool reads its arguments as sent (one that is not an object fails its schema).
    const args = request.params.arguments ?? {};
    // Its approval cards wait like ask_user's; a re-sent call is the same tool with the same arguments.
    const ask = { ...call, arguments: { tool: name, arguments: args } };
    const result = await relayTool.call(session.caller, name, args, (draft) => waits.wait(ask, relayToolFamily(dialect), draft));
    return { content: [{ type: 'text', text: result.text }], ...(result.isError ? { isError: true } : {}) };
  } finally {
    if (load) load.mcpCalls -= 1;
    session.active -= 1;
    session.lastSeen = deps.clock.now();
    session.requests.delete(key);
  }
}

/**
 * The session's question slot for an ask_user call with these arguments: free, or held by the
 * same call sent again (a re-sent call re-attaches to its card). Refused while another waits.
 */
function holdSlot(session: McpSession, args: unknown): (() => void) | undefined {
  const key = JSON.stringify(args) ?? '';
  if ([...session.asking.keys()].some((k) => k !== key)) return undefined;
  session.asking.set(key, (session.asking.get(key) ?? 0) + 1);
  return () => {
    const left = (session.asking.get(key) ?? 1) - 1;
    if (left > 0) session.asking.set(key, left);
    else session.asking.delete(key);
  };
}

/** One tools/call as the call waits see it: who asks, its keys, its signals and its progress. */
function toolCall(session: McpSession, request: CallToolRequest, extra: Extra): ToolCall {
  const { caller } = session;
  const { gone, delivered } = session.requests.get(requestKey(extra.requestId)) ?? { gone: new AbortController() };
  const cancelled = new AbortController();
  // The SDK aborts a call both for notifications/cancelled and when the session closes;
  // the session is marked closed (onclose) right after its aborts, before this runs.
  extra.signal.addEventListener('abort', () => queueMicrotask(() => (session.closed ? gone : cancelled).abort()), { once: true });
  const raw = request.params.arguments;
  const args = raw && NON_OBJECT in raw ? raw[NON_OBJECT] : raw;
  const clientKey = request.params._meta?.[CALL_KEY];
  return {
    arguments: args,
    mcpSessionId: extra.sessionId,
    requestId: extra.requestId,
    sessionId: caller.kind === 'agent' ? caller.sessionId : null,
    askedBy: answeredBy(caller),
    ...(typeof clientKey === 'string' && clientKey.length <= MAX_CALL_KEY ? { clientKey } : {}),
    progressToken: extra._meta?.progressToken,
    cancelled: cancelled.signal,
    gone: gone.signal,
    ...(delivered ? { delivered } : {}),
    holdSlot: () => holdSlot(session, args),
    progress: (progress, message) =>
      extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: extra._meta!.progressToken!, progress, message },
      }),
  };
}
