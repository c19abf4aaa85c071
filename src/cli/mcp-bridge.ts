import { randomUUID } from 'node:crypto';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { CALL_KEY } from '../mcp-call-key.js';
import { tokenRefusedText, unreachableText, type RelayTarget } from './client.js';

// The pipe behind `askrelay mcp`: every JSON-RPC message read from stdin is POSTed to the
// relay's Streamable HTTP endpoint, and every message the relay sends back is written to
// stdout. Nothing else ever goes to stdout; all diagnostics go to stderr.
//
// The bridge outlives the relay: when the relay restarts (or a call's stream breaks) while
// requests are unanswered, it opens a new MCP session, replays the client's initialize and
// re-sends those requests. Each tools/call carries a key of the bridge's own
// (`_meta["askrelay/callKey"]`), so the relay hands the re-sent call the card it already
// showed instead of asking the human again. The client never notices.

/** JSON-RPC error code for "the relay could not be reached or refused us" (implementation-defined range). */
const RELAY_ERROR = -32000;
/** How long the bridge keeps trying to get the relay back before it gives up. */
export const RECONNECT_FOR_MS = 10 * 60_000;

/** The transport's own reports of a stream coming and going, which the bridge handles itself. */
const QUIET_ERRORS = /^(fetch failed|SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts)/;

const keyOf = (id: string | number) => `${typeof id}:${id}`;
const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number } =>
  isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m);

export function runBridge(target: RelayTarget, endpoint: URL, reconnectForMs = RECONNECT_FOR_MS): Promise<number> {
  const stdio = new StdioServerTransport();
  const bridgeId = randomUUID();
  /** Requests sent to the relay and not answered yet: re-sent after a reconnect. */
  const outstanding = new Map<string, JSONRPCRequest>();
  /** Notifications that arrived while reconnecting. */
  const queued: JSONRPCNotification[] = [];
  /** Answers the bridge waits for itself (its replayed initialize). */
  const internal = new Map<string, (message: JSONRPCMessage) => void>();
  /** Errors send() rejected with, which the transport also passes to onerror. */
  const handled = new WeakSet<Error>();
  /** send()s still on their way to the relay: stdin may end right behind a message. */
  const sending = new Set<Promise<void>>();
  let initialize: JSONRPCRequest | undefined;
  let initialized: JSONRPCNotification | undefined;
  let established = false;
  let reconnecting: Promise<void> | undefined;
  let generation = 0;
  let done = false;
  let http = connect();

  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (resolveExit = resolve));

  // A send() resolves once the relay accepted the message (a long call's answer streams on
  // afterwards), so this waits only long enough to report a relay that is down or refuses us.
  const onEnd = () => void Promise.allSettled([...sending]).then(() => reconnecting).then(() => exits(0));
  process.stdin.on('end', onEnd);

  stdio.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message)) {
      if (message.method === 'initialize') initialize = message;
      if (message.method === 'tools/call' && message.params) {
        const meta = (message.params._meta ?? {}) as Record<string, unknown>;
        message.params._meta = { ...meta, [CALL_KEY]: meta[CALL_KEY] ?? `${bridgeId}:${keyOf(message.id)}` };
      }
      outstanding.set(keyOf(message.id), message);
    } else if (isJSONRPCNotification(message)) {
      if (message.method === 'notifications/initialized') initialized = message;
      const cancelled = message.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
      if (typeof cancelled === 'string' || typeof cancelled === 'number') outstanding.delete(keyOf(cancelled));
      if (reconnecting) return void queued.push(message);
    }
    if (!reconnecting) send(message);
  };
  stdio.onerror = (err) => process.stderr.write(`askrelay mcp: stdin: ${err.message}\n`);
  stdio.onclose = () => void exits(0);

  void (async () => {
    await http.start();
    await stdio.start();
  })();
  return exited;

  /** Every way out of the bridge. */
  async function exits(code: number, message?: string): Promise<void> {
    if (done) return;
    done = true;
    if (message) process.stderr.write(`askrelay mcp: ${message}\n`);
    process.stdin.off('end', onEnd);
    await stdio.close().catch(() => {});
    // Ends the MCP session at the relay (a waiting call's card is then cancelled after the grace).
    if (code === 0) await http.terminateSession().catch(() => {});
    await http.close().catch(() => {});
    resolveExit(code);
  }

  function connect(): StreamableHTTPClientTransport {
    const gen = ++generation;
    const transport = new StreamableHTTPClientTransport(endpoint, {
      requestInit: { headers: { Authorization: `Bearer ${target.token}` } },
      fetch: watchedFetch(gen),
    });
    transport.onmessage = (message) => {
      if (gen === generation) fromRelay(message);
    };
    // The transport reports send() failures here too, just before send() rejects; those are
    // handled in send(). A broken call stream is noticed by watchedFetch, and the relay's
    // optional GET stream (which askrelay sends nothing on) may come and go, so only the
    // rest is logged.
    transport.onerror = (err) => {
      setTimeout(() => {
        if (gen !== generation || done || handled.has(err) || QUIET_ERRORS.test(err.message)) return;
        if (err instanceof StreamableHTTPError && err.code === 405) return;
        process.stderr.write(`askrelay mcp: ${err.message}\n`);
      });
    };
    transport.onclose = () => {
      if (gen === generation && !reconnecting) void exits(0);
    };
    return transport;
  }

  function fromRelay(message: JSONRPCMessage): void {
    if (isResponse(message)) {
      const own = internal.get(keyOf(message.id));
      if (own) return own(message);
      const request = outstanding.get(keyOf(message.id));
      outstanding.delete(keyOf(message.id));
      if (request?.method === 'initialize' && isJSONRPCResultResponse(message)) {
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === 'string') http.setProtocolVersion(version);
        established = true;
      }
    }
    void stdio.send(message);
  }

  function send(message: JSONRPCMessage): void {
    const transport = http;
    const sent = transport.send(message).catch(async (err: unknown) => {
      if (err instanceof Error) handled.add(err);
      if (done || transport !== http) return;
      const { text, fatal, lost } = describe(err, target, endpoint);
      if (established && lost) {
        if (isJSONRPCNotification(message)) queued.push(message);
        return void reconnect();
      }
      if (isJSONRPCRequest(message)) {
        outstanding.delete(keyOf(message.id));
        await stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: RELAY_ERROR, message: text } }).catch(() => {});
      }
      if (fatal) await exits(1, text);
      else process.stderr.write(`askrelay mcp: ${text}\n`);
    });
    sending.add(sent);
    void sent.finally(() => sending.delete(sent));
  }

  /** A POST whose response stream ends before its request was answered means the call was cut off. */
  function watchedFetch(gen: number) {
    return async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const response = await fetch(url, init);
      const ids = init?.method === 'POST' && typeof init.body === 'string' ? requestIds(init.body) : [];
      if (!ids.length || !response.body || response.status !== 200) return response;
      const cutOff = () =>
        // The parser downstream sees the stream's last event before this runs.
        setTimeout(() => {
          if (gen === generation && !done && ids.some((id) => outstanding.has(keyOf(id)))) void reconnect();
        }, 50);
      const reader = response.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const { done: ended, value } = await reader.read();
            if (ended) {
              controller.close();
              cutOff();
            } else controller.enqueue(value);
          } catch (err) {
            controller.error(err);
            cutOff();
          }
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    };
  }

  function reconnect(): Promise<void> {
    if (reconnecting || done) return reconnecting ?? Promise.resolve();
    reconnecting = (async () => {
      process.stderr.write(`askrelay mcp: lost the relay at ${target.url}; reconnecting (${outstanding.size} unanswered).\n`);
      const old = http;
      generation += 1; // whatever the old session still says is ignored
      await old.close().catch(() => {});
      const until = Date.now() + reconnectForMs;
      for (let delay = 100; !done; delay = Math.min(delay * 2, 2000)) {
        try {
          http = connect();
          await http.start();
          await handshake();
          break;
        } catch (err) {
          const { text, lost } = describe(err, target, endpoint);
          if (!lost) return void (await giveUp(text));
          if (Date.now() + delay > until) return void (await giveUp(`gave up reconnecting after ${Math.round(reconnectForMs / 1000)} s: ${text}`));
          await new Promise((r) => setTimeout(r, delay));
        }
      }
      reconnecting = undefined;
      process.stderr.write(`askrelay mcp: reconnected; re-sent ${outstanding.size} unanswered request(s).\n`);
      for (const message of outstanding.values()) send(message);
      for (const message of queued.splice(0)) send(message);
    })();
    return reconnecting;
  }

  /** A new MCP session at the relay, opened with the client's own initialize. */
  async function handshake(): Promise<void> {
    if (!initialize) throw new Error('the client never initialized');
    const id = `askrelay-bridge-${randomUUID()}`;
    const reply = new Promise<JSONRPCMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the relay did not answer initialize')), 30_000);
      internal.set(keyOf(id), (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    }).finally(() => internal.delete(keyOf(id)));
    await http.send({ ...initialize, id });
    const message = await reply;
    if (!isJSONRPCResultResponse(message)) throw new Error('the relay refused initialize');
    const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === 'string') http.setProtocolVersion(version);
    if (initialized) await http.send(initialized);
  }

  async function giveUp(text: string): Promise<void> {
    for (const request of outstanding.values()) {
      await stdio.send({ jsonrpc: '2.0', id: request.id, error: { code: RELAY_ERROR, message: text } }).catch(() => {});
    }
    outstanding.clear();
    reconnecting = undefined;
    await exits(1, text);
  }
}

function requestIds(body: string): (string | number)[] {
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).filter((m) => isJSONRPCRequest(m)).map((m) => (m as JSONRPCRequest).id);
  } catch {
    return [];
  }
}

/** One sentence for stderr and for the JSON-RPC error; fatal when the bridge cannot go on, lost when the relay is away. */
export function describe(err: unknown, target: RelayTarget, endpoint: URL): { text: string; fatal: boolean; lost: boolean } {
  if (err instanceof StreamableHTTPError) {
    if (err.code === 401 || err.code === 403) {
      return { text: tokenRefusedText(target.tokenSource, target.url), fatal: true, lost: false };
    }
    if (err.code === 404) {
      return { text: `the relay has no MCP endpoint or session at ${endpoint.href}: ${err.message}`, fatal: true, lost: true };
    }
    return { text: `the relay refused the message: ${err.message}`, fatal: false, lost: false };
  }
  const e = err as Error & { cause?: Error };
  const reason = e?.cause?.message || e?.message || String(err);
  return { text: unreachableText(target.url, reason), fatal: true, lost: true };
}
