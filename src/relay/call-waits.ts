import type { Card, CardDraft } from '../cards/model.js';
import { RelayError } from '../errors.js';
import type { Relay } from './relay.js';

// The I/O around one tool call that asks over a connection that may come and go (MCP):
// make (or re-attach to) the card, keep the client alive with progress while it waits,
// cancel the card when the client cancels or stays away, and turn the closed card into
// the dialect's result. Each dialect (Cursor, OpenClaw) brings only its pure adapter.

export interface CallTiming {
  /** How often a progress notification goes out while the card waits (client sent a progressToken). */
  progressIntervalMs: number;
  /** After the client went away, how long a re-sent call may re-attach before the card is cancelled. */
  reattachGraceMs: number;
}

export const DEFAULT_TIMING: CallTiming = { progressIntervalMs: 30_000, reattachGraceMs: 60_000 };

export interface ToolCall {
  arguments: unknown;
  /** Mcp-Session-Id of the call, when the transport has one. */
  mcpSessionId?: string;
  requestId: string | number;
  progressToken?: string | number;
  /** Aborted by notifications/cancelled: the card is cancelled at once. */
  cancelled: AbortSignal;
  /** Aborted when the client's connection went away: the card is cancelled unless the call is re-sent within the grace. */
  gone: AbortSignal;
  /** Sends notifications/progress for this call. */
  progress(progress: number, message: string): Promise<void>;
}

export interface CallDialect<Result, Failure> {
  toCardDraft(args: unknown): { ok: true; draft: CardDraft } | { ok: false; error: string };
  toolCallIdFor(mcpSessionId: string | undefined, requestId: string | number, args: unknown): string;
  toToolResult(card: Card): Result;
  toToolError(message: string): Failure;
}

type JsonSchema = { type: 'object'; [key: string]: unknown };

/**
 * One dialect of an ask tool served over MCP: the tool tools/list shows, and what answers
 * its calls. Providers define them; the composition root hands them to the MCP surface.
 */
export interface McpDialect {
  tool: { name: string; title: string; description: string; inputSchema: JsonSchema; outputSchema?: JsonSchema };
  /** Makes the caller for one route; a call returns the tool result (or an isError result). */
  waits(relay: Relay, timing: CallTiming): { call(call: ToolCall): Promise<unknown> };
}

/** Who is waiting on which card, so a re-sent call keeps the card alive through the grace. */
export class CallWaits<Result, Failure> {
  private readonly waiting = new Map<string, number>();
  private readonly graceTimers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly relay: Relay,
    private readonly dialect: CallDialect<Result, Failure>,
    readonly timing: CallTiming = DEFAULT_TIMING,
  ) {}

  async call(call: ToolCall): Promise<Result | Failure> {
    const drafted = this.dialect.toCardDraft(call.arguments);
    if (!drafted.ok) return this.dialect.toToolError(drafted.error);
    let card: Card;
    try {
      const toolCallId = this.dialect.toolCallIdFor(call.mcpSessionId, call.requestId, call.arguments);
      card = this.relay.create({ ...drafted.draft, toolCallId });
    } catch (err) {
      if (err instanceof RelayError) return this.dialect.toToolError(err.message);
      throw err;
    }
    const stopProgress = this.startProgress(call, card.id);
    const signal = AbortSignal.any([call.cancelled, call.gone]);
    this.waiting.set(card.id, (this.waiting.get(card.id) ?? 0) + 1);
    try {
      card = await this.relay.settle(card.id, signal);
    } finally {
      stopProgress();
      const left = (this.waiting.get(card.id) ?? 1) - 1;
      if (left > 0) this.waiting.set(card.id, left);
      else this.waiting.delete(card.id);
    }
    if (card.status === 'pending') {
      if (call.cancelled.aborted && !call.gone.aborted) card = this.relay.cancel(card.id);
      else this.cancelLater(card.id);
    }
    return card.status === 'pending'
      ? this.dialect.toToolError('The client went away before the card was answered.')
      : this.dialect.toToolResult(card);
  }

  /** Ends the grace timers (the relay is shutting down). */
  close(): void {
    this.graceTimers.forEach((timer) => clearTimeout(timer));
    this.graceTimers.clear();
  }

  private startProgress(call: ToolCall, cardId: string): () => void {
    if (call.progressToken === undefined) return () => {};
    let n = 0;
    const timer = setInterval(() => {
      n += 1;
      call.progress(n, `Waiting for the user's answer (card ${cardId}).`).catch(() => {});
    }, this.timing.progressIntervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  private cancelLater(cardId: string): void {
    const timer = setTimeout(() => {
      this.graceTimers.delete(timer);
      if (this.waiting.has(cardId)) return;
      try {
        this.relay.cancel(cardId);
      } catch {
        // The store may be closed already (shutdown); the card then waits for its deadline.
      }
    }, this.timing.reattachGraceMs);
    timer.unref();
    this.graceTimers.add(timer);
  }
}
