import type { Card } from '../../src/cards/model.js';
import { RelayError } from '../../src/errors.js';
import type { Relay } from '../../src/relay/relay.js';
import { toCardDraft, toolCallIdFor, toToolError, toToolResult, type ToolError, type ToolResult } from './adapter.js';

// The I/O around one ask_user call over MCP: make (or re-attach to) the card, keep the
// client alive with progress while it waits, and turn the closed card into the result.

export interface AskUserTiming {
  /** How often a progress notification goes out while the card waits (client sent a progressToken). */
  progressIntervalMs: number;
  /** After the client went away, how long a re-sent call may re-attach before the card is cancelled. */
  reattachGraceMs: number;
}

export const DEFAULT_TIMING: AskUserTiming = { progressIntervalMs: 30_000, reattachGraceMs: 60_000 };

export interface AskUserCall {
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

/** Who is waiting on which card, so a re-sent call keeps the card alive through the grace. */
export class AskUserWaits {
  private readonly waiting = new Map<string, number>();
  private readonly graceTimers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly relay: Relay,
    readonly timing: AskUserTiming = DEFAULT_TIMING,
  ) {}

  async call(call: AskUserCall): Promise<ToolResult | ToolError> {
    const drafted = toCardDraft(call.arguments);
    if (!drafted.ok) return toToolError(drafted.error);
    let card: Card;
    try {
      card = this.relay.create({ ...drafted.draft, toolCallId: toolCallIdFor(call.mcpSessionId, call.requestId, call.arguments) });
    } catch (err) {
      if (err instanceof RelayError) return toToolError(err.message);
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
    return card.status === 'pending' ? toToolError('The client went away before the card was answered.') : toToolResult(card);
  }

  /** Ends the grace timers (the relay is shutting down). */
  close(): void {
    this.graceTimers.forEach((timer) => clearTimeout(timer));
    this.graceTimers.clear();
  }

  private startProgress(call: AskUserCall, cardId: string): () => void {
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
