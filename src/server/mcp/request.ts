import type { ServerResponse } from 'node:http';
import { readLimitedOr } from '../http.js';
import { requestKey, type McpSession } from './sessions.js';

// One HTTP request to /mcp before the SDK's transport takes it: the body read (and refused
// past 1 MB) and parsed, and the tools/calls it carries noted on their session, so that a
// call learns when its connection goes away and whether its result was written in full.

/**
 * A tools/call is rarely more than a few KB, but the card limits allow an ask_user of ten
 * long questions with twenty described options each (some 300 KB): 1 MB leaves room for it.
 */
const MAX_BODY = 1024 * 1024;
/** Tool arguments that are not an object are carried under this key to the handler, which refuses them. */
export const NON_OBJECT = '__askrelay_non_object_arguments';

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An HTTP-level refusal in JSON-RPC's shape; `data.code` carries the relay's error code when there is one. */
export function jsonRpcError(status: number, code: number, message: string, relayCode?: string): Response {
  const error = { code, message, ...(relayCode ? { data: { code: relayCode } } : {}) };
  return new Response(JSON.stringify({ jsonrpc: '2.0', error, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** A POST's body as JSON (undefined for GET and DELETE), or the refusal to answer with. */
export async function readBody(req: Request): Promise<{ parsed: unknown } | Response> {
  if (req.method !== 'POST') return { parsed: undefined };
  const body = await readLimitedOr(req, MAX_BODY, (err) => jsonRpcError(err.status, -32600, err.message, err.code));
  if (!Buffer.isBuffer(body)) return body;
  try {
    return { parsed: JSON.parse(body.toString('utf8')) };
  } catch {
    return jsonRpcError(400, -32700, 'Parse error: the body is not valid JSON.');
  }
}

/** The JSON-RPC messages of a body: one, a batch, or none. */
export const messagesOf = (parsed: unknown): unknown[] => (parsed === undefined ? [] : Array.isArray(parsed) ? parsed : [parsed]);

export const isToolCall = (message: unknown): message is { id?: unknown; params: Record<string, unknown> } =>
  isObject(message) && message.method === 'tools/call' && isObject(message.params);

/**
 * Notes the tools/calls among `messages` on `session` (their arguments that are not an object
 * wrapped under NON_OBJECT, for the handler to refuse) and ties them to this HTTP request:
 * each call's `gone` aborts when the request goes away, and `delivered` settles once the
 * response was written. Returns the calls' request keys.
 */
export function noteCalls(session: McpSession, messages: unknown[], req: Request, outgoing: ServerResponse | undefined): string[] {
  const calls: string[] = [];
  for (const message of messages) {
    if (!isToolCall(message)) continue;
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
    const written = responseWritten(outgoing);
    calls.forEach((key) => (session.requests.get(key)!.delivered = written));
  }
  return calls;
}

/** True once Node's response was flushed in full ('finish'), false if its connection closed first. */
function responseWritten(outgoing: ServerResponse | undefined): Promise<boolean> {
  if (!outgoing) return Promise.resolve(true);
  return new Promise((resolve) => {
    outgoing.once('finish', () => resolve(true));
    outgoing.once('close', () => resolve(outgoing.writableFinished));
  });
}
