import type { Card } from '../../src/cards/model.js';
import { RelayError } from '../../src/errors.js';
import type { Relay } from '../../src/relay/relay.js';
import type { AskUserCall, AskUserTiming } from '../cursor/runner.js';
import { DEFAULT_TIMING } from '../cursor/runner.js';
import { toCardDraft, toolCallIdFor, toToolError, toToolResult, type ToolError, type ToolResult } from './adapter.js';

// The I/O around one OpenClaw ask_user call over MCP, the same as the Cursor dialect's
// (providers/cursor/runner.ts: re-attach, progress, cancellation, grace) with OpenClaw's
// adapter: the card waits timeoutSeconds and the result is `answered` / `no_answer`.

/** Who is waiting on which card, so a re-sent call keeps the card alive through the grace. */
export class OpenClawWaits {
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
