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
  return new Bridge(target, endpoint, reconnectForMs).run();
}

/** One run of the bridge: the client on stdio, the relay over HTTP, and what is in flight between them. */
class Bridge {
  private readonly stdio = new StdioServerTransport();
  private readonly bridgeId = randomUUID();
  /** Requests sent to the relay and not answered yet: re-sent after a reconnect. */
  private readonly outstanding = new Map<string, JSONRPCRequest>();
  /** Notifications that arrived while reconnecting. */
  private readonly queued: JSONRPCNotification[] = [];
  /** Answers the bridge waits for itself (its replayed initialize). */
  private readonly internal = new Map<string, (message: JSONRPCMessage) => void>();
  /** Errors send() rejected with, which the transport also passes to onerror. */
  private readonly handled = new WeakSet<Error>();
  /** send()s still on their way to the relay: stdin may end right behind a message. */
  private readonly sending = new Set<Promise<void>>();
  private initialize: JSONRPCRequest | undefined;
  private initialized: JSONRPCNotification | undefined;
  private established = false;
  private reconnecting: Promise<void> | undefined;
  private generation = 0;
  private done = false;
  private http: StreamableHTTPClientTransport;
  private resolveExit!: (code: number) => void;
  // A send() resolves once the relay accepted the message (a long call's answer streams on
  // afterwards), so this waits only long enough to report a relay that is down or refuses us.
  private readonly onEnd = () => void Promise.allSettled([...this.sending]).then(() => this.reconnecting).then(() => this.exits(0));

  constructor(
    private readonly target: RelayTarget,
    private readonly endpoint: URL,
    private readonly reconnectForMs: number,
  ) {
    this.http = this.connect();
  }

  run(): Promise<number> {
    const exited = new Promise<number>((resolve) => (this.resolveExit = resolve));
    process.stdin.on('end', this.onEnd);
    this.stdio.onmessage = (message) => this.fromClient(message);
    this.stdio.onerror = (err) => process.stderr.write(`askrelay mcp: stdin: ${err.message}\n`);
    this.stdio.onclose = () => void this.exits(0);
    void (async () => {
      await this.http.start();
      await this.stdio.start();
    })();
    return exited;
  }

  /** A message from the client: noted (initialize, unanswered requests, cancellations) and forwarded. */
  private fromClient(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) {
      if (message.method === 'initialize') this.initialize = message;
      if (message.method === 'tools/call' && message.params) {
        const meta = (message.params._meta ?? {}) as Record<string, unknown>;
        message.params._meta = { ...meta, [CALL_KEY]: meta[CALL_KEY] ?? `${this.bridgeId}:${keyOf(message.id)}` };
      }
      this.outstanding.set(keyOf(message.id), message);
    } else if (isJSONRPCNotification(message)) {
      if (message.method === 'notifications/initialized') this.initialized = message;
      const cancelled = message.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
      if (typeof cancelled === 'string' || typeof cancelled === 'number') this.outstanding.delete(keyOf(cancelled));
      if (this.reconnecting) return void this.queued.push(message);
    }
    if (!this.reconnecting) this.send(message);
  }

  /** Every way out of the bridge. */
  private async exits(code: number, message?: string): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (message) process.stderr.write(`askrelay mcp: ${message}\n`);
    process.stdin.off('end', this.onEnd);
    await this.stdio.close().catch(() => {});
    // Ends the MCP session at the relay (a waiting call's card is then cancelled after the grace).
    if (code === 0) await this.http.terminateSession().catch(() => {});
    await this.http.close().catch(() => {});
    this.resolveExit(code);
  }

  private connect(): StreamableHTTPClientTransport {
    const gen = ++this.generation;
    const transport = new StreamableHTTPClientTransport(this.endpoint, {
      requestInit: { headers: { Authorization: `Bearer ${this.target.token}` } },
      fetch: this.watchedFetch(gen),
    });
    transport.onmessage = (message) => {
      if (gen === this.generation) this.fromRelay(message);
    };
    // The transport reports send() failures here too, just before send() rejects; those are
    // handled in send(). A broken call stream is noticed by watchedFetch, and the relay's
    // optional GET stream (which askrelay sends nothing on) may come and go, so only the
    // rest is logged.
    transport.onerror = (err) => {
      setTimeout(() => {
        if (gen !== this.generation || this.done || this.handled.has(err) || QUIET_ERRORS.test(err.message)) return;
        if (err instanceof StreamableHTTPError && err.code === 405) return;
        process.stderr.write(`askrelay mcp: ${err.message}\n`);
      });
    };
    transport.onclose = () => {
      if (gen === this.generation && !this.reconnecting) void this.exits(0);
    };
    return transport;
  }

  private fromRelay(message: JSONRPCMessage): void {
    if (isResponse(message)) {
      const own = this.internal.get(keyOf(message.id));
      if (own) return own(message);
      const request = this.outstanding.get(keyOf(message.id));
      this.outstanding.delete(keyOf(message.id));
      if (request?.method === 'initialize' && isJSONRPCResultResponse(message)) {
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === 'string') this.http.setProtocolVersion(version);
        this.established = true;
      }
    }
    void this.stdio.send(message);
  }

  private send(message: JSONRPCMessage): void {
    const transport = this.http;
    const sent = transport.send(message).catch(async (err: unknown) => {
      if (err instanceof Error) this.handled.add(err);
      if (this.done || transport !== this.http) return;
      const { text, fatal, lost } = describe(err, this.target, this.endpoint);
      if (this.established && lost) {
        if (isJSONRPCNotification(message)) this.queued.push(message);
        return void this.reconnect();
      }
      if (isJSONRPCRequest(message)) {
        this.outstanding.delete(keyOf(message.id));
        await this.stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: RELAY_ERROR, message: text } }).catch(() => {});
      }
      if (fatal) await this.exits(1, text);
      else process.stderr.write(`askrelay mcp: ${text}\n`);
    });
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }

  /** A POST whose response stream ends before its request was answered means the call was cut off. */
  private watchedFetch(gen: number) {
    const cutOff = (ids: (string | number)[]) =>
      // The parser downstream sees the stream's last event before this runs.
      setTimeout(() => {
        if (gen === this.generation && !this.done && ids.some((id) => this.outstanding.has(keyOf(id)))) void this.reconnect();
      }, 50);
    return async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const response = await fetch(url, init);
      const ids = init?.method === 'POST' && typeof init.body === 'string' ? requestIds(init.body) : [];
      if (!ids.length || !response.body || response.status !== 200) return response;
      return watchedResponse(response, () => cutOff(ids));
    };
  }

  private reconnect(): Promise<void> {
    if (this.reconnecting || this.done) return this.reconnecting ?? Promise.resolve();
    this.reconnecting = (async () => {
      process.stderr.write(`askrelay mcp: lost the relay at ${this.target.url}; reconnecting (${this.outstanding.size} unanswered).\n`);
      const old = this.http;
      this.generation += 1; // whatever the old session still says is ignored
      await old.close().catch(() => {});
      if (!(await this.reopen())) return;
      this.reconnecting = undefined;
      process.stderr.write(`askrelay mcp: reconnected; re-sent ${this.outstanding.size} unanswered request(s).\n`);
      for (const message of this.outstanding.values()) this.send(message);
      for (const message of this.queued.splice(0)) this.send(message);
    })();
    return this.reconnecting;
  }

  /** A new session at the relay, tried with back-off for reconnectForMs; false when the bridge gave up. */
  private async reopen(): Promise<boolean> {
    const until = Date.now() + this.reconnectForMs;
    for (let delay = 100; !this.done; delay = Math.min(delay * 2, 2000)) {
      try {
        this.http = this.connect();
        await this.http.start();
        await this.handshake();
        return true;
      } catch (err) {
        const { text, lost } = describe(err, this.target, this.endpoint);
        if (!lost || Date.now() + delay > until) {
          await this.giveUp(lost ? `gave up reconnecting after ${Math.round(this.reconnectForMs / 1000)} s: ${text}` : text);
          return false;
        }
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    return true;
  }

  /** A new MCP session at the relay, opened with the client's own initialize. */
  private async handshake(): Promise<void> {
    if (!this.initialize) throw new Error('the client never initialized');
    const id = `askrelay-bridge-${randomUUID()}`;
    const reply = new Promise<JSONRPCMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the relay did not answer initialize')), 30_000);
      this.internal.set(keyOf(id), (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    }).finally(() => this.internal.delete(keyOf(id)));
    await this.http.send({ ...this.initialize, id });
    const message = await reply;
    if (!isJSONRPCResultResponse(message)) throw new Error('the relay refused initialize');
    const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === 'string') this.http.setProtocolVersion(version);
    if (this.initialized) await this.http.send(this.initialized);
  }

  private async giveUp(text: string): Promise<void> {
    for (const request of this.outstanding.values()) {
      await this.stdio.send({ jsonrpc: '2.0', id: request.id, error: { code: RELAY_ERROR, message: text } }).catch(() => {});
    }
    this.outstanding.clear();
    this.reconnecting = undefined;
    await this.exits(1, text);
  }
}

/** The response with its body passed through, calling `ended` when the stream ends or breaks. */
export function watchedResponse(response: Response, ended: () => void): Response {
  const reader = response.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          ended();
        } else controller.enqueue(value);
      } catch (err) {
        controller.error(err);
        ended();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
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
