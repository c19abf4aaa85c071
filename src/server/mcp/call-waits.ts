import { createHash } from 'node:crypto';
import { asAnswered } from '../../cards/answer.js';
import type { AskDialect } from '../../cards/ask-dialect.js';
import type { AnsweredBy, Card, CardDraft } from '../../cards/model.js';
import { RelayError } from '../../errors.js';
import type { Relay } from '../../relay/relay.js';
import type { AsyncCallStore } from '../../store/call-store.js';

// The I/O around one MCP tool call that waits on a card over a connection that may come and
// go: make (or re-attach to) the card, keep the client alive with progress while it waits,
// cancel the card when the client cancels or stays away. The one wait path of every call on
// /mcp that asks: a dialect's ask_user (askCall: its pure adapter makes the card and reads the
// result) and the relay tool's approval cards (start_session, watch_session).
//
// A call's identity outlives its MCP session and the relay process (see call-store.ts).
// A call re-attaches to an earlier call's card when it is the same JSON-RPC request re-sent
// on the same session, when it carries the same client key (`_meta["askrelay/callKey"]`,
// which `askrelay mcp` sets), or when it has the same arguments as a call whose client went
// away and whose result nobody has received yet. A card that another live call waits on is
// never taken by an identical question from someone else. Calls re-attach only within their
// family: one dialect's ask_user, or the relay tool on one route.
//
// A card that closed without an answer while its client was away and was then given a late
// answer hands that answer to the re-sent call, as if it had come in time.

export interface CallTiming {
  /** How often a progress notification goes out while the card waits (client sent a progressToken). */
  progressIntervalMs: number;
  /** After the client went away, how long a re-sent call may re-attach before the card is cancelled. */
  reattachGraceMs: number;
}

export const DEFAULT_TIMING: CallTiming = { progressIntervalMs: 30_000, reattachGraceMs: 60_000 };

export interface ToolCall {
  /** What the call asks, as its client sent it: re-sent calls are matched by it. */
  arguments: unknown;
  /** Mcp-Session-Id of the call, when the transport has one. */
  mcpSessionId?: string;
  requestId: string | number;
  /** A key the client keeps for this call across reconnects (`_meta["askrelay/callKey"]`). */
  clientKey?: string;
  /** The relay session of the caller (an agent token's session), which the card belongs to. */
  sessionId?: string | null;
  askedBy?: AnsweredBy;
  progressToken?: string | number;
  /** Aborted by notifications/cancelled: the card is cancelled at once. */
  cancelled: AbortSignal;
  /** Aborted when the client's connection went away: the card is cancelled unless the call is re-sent within the grace. */
  gone: AbortSignal;
  /** Sends notifications/progress for this call. */
  progress(progress: number, message: string): Promise<void>;
  /**
   * Settles after the call's result went out: true once it was written in full, false when the
   * connection broke first (the result then stays available to a re-sent call for the grace).
   */
  delivered?: Promise<boolean>;
  /**
   * Takes the session's one question slot (dialects that allow one pending question per
   * session): a release to call when the call ends, or undefined when another question holds it.
   */
  holdSlot?: () => (() => void) | undefined;
}

/** The relay tool's calls on a route re-attach among themselves, apart from its ask_user's. */
export const relayToolFamily = (dialect: AskDialect) => `${dialect.provider}/relay-tool`;
/** The families of the calls on a dialect's route. */
export const callFamilies = (dialect: AskDialect) => [dialect.provider, relayToolFamily(dialect)];

/**
 * One dialect's ask_user call: its arguments made into a card by the dialect's pure adapter,
 * waited on, and the closed card made into the dialect's result (or an isError result).
 */
export async function askCall<Result, Failure>(waits: CallWaits, dialect: AskDialect<Result, Failure>, call: ToolCall): Promise<Result | Failure> {
  const drafted = dialect.toCardDraft(call.arguments);
  if (!drafted.ok) return dialect.toToolError(drafted.error);
  // Checked once the arguments passed, as OpenClaw checks it.
  const release = dialect.onePendingPerSession && call.holdSlot ? call.holdSlot() : () => {};
  if (!release) return dialect.toToolError(dialect.onePendingPerSession!);
  let card: Card;
  try {
    card = await waits.wait(call, dialect.provider, drafted.draft);
  } catch (err) {
    if (err instanceof RelayError) return dialect.toToolError(err.message);
    throw err;
  } finally {
    release();
  }
  if (card.status === 'pending') return dialect.toToolError('The client went away before the card was answered.');
  return dialect.toToolResult(card);
}

/** Who is waiting on which card, so a re-sent call keeps the card alive through the grace. */
export class CallWaits {
  private readonly waiting = new Map<string, number>();
  private readonly graceTimers = new Set<unknown>();
  /**
   * Calls with the same arguments find-or-open their card one at a time: reads are
   * asynchronous now, and two identical calls must not both take over one card.
   */
  private opening: Promise<unknown> = Promise.resolve();
  /** Cards whose results arrived at their clients, while that is being stored (see attach). */
  private readonly handing = new Map<string, Promise<void>>();

  constructor(
    private readonly relay: Relay,
    /** Which card each call waits on, kept next to the cards (see call-store.ts). */
    private readonly calls: AsyncCallStore,
    readonly timing: CallTiming = DEFAULT_TIMING,
    /**
     * The families whose calls a restart cut off, to give their clients the grace to re-send;
     * none when other nodes share the store: the open calls it finds may be theirs, alive. A
     * call of a node that died is re-sent by its client to another node, or its card expires.
     */
    recoverFamilies: readonly string[] = [],
  ) {
    if (recoverFamilies.length) void this.recoverOrphans(recoverFamilies).catch(() => {});
  }

  /** Cards whose calls were cut off by a restart: their clients get the grace to re-send. */
  private async recoverOrphans(families: readonly string[]): Promise<void> {
    await this.calls.prune(this.relay.now());
    for (const family of families) {
      for (const cardId of await this.calls.orphans(family)) this.cancelLater(cardId);
    }
  }

  /**
   * The card of one call of `family`, found again or opened from `draft`, once it is closed;
   * still pending when the client went away (the card then waits out the grace). Throws the
   * relay's refusal (RelayError) when the card cannot be made.
   */
  async wait(call: ToolCall, family: string, draft: CardDraft): Promise<Card> {
    const hash = callHash(call);
    // Found or opened, and counted as waited on, before the next call looks.
    const turn = this.opening.then(async () => {
      const found = (await this.attach(call, family, hash)) ?? (await this.open(call, family, hash, draft));
      this.waiting.set(found.id, (this.waiting.get(found.id) ?? 0) + 1);
      return found;
    });
    this.opening = turn.catch(() => {});
    let card = await turn;
    const stopProgress = this.startProgress(call, card.id);
    const signal = AbortSignal.any([call.cancelled, call.gone]);
    try {
      card = await this.relay.settle(card.id, signal);
    } finally {
      stopProgress();
      const left = (this.waiting.get(card.id) ?? 1) - 1;
      if (left > 0) this.waiting.set(card.id, left);
      else this.waiting.delete(card.id);
    }
    if (card.status === 'pending') {
      if (call.cancelled.aborted && !call.gone.aborted) card = await this.relay.cancel(card.id);
      else this.cancelLater(card.id);
    }
    if (card.status === 'pending') return card;
    const closed = card;
    const cardId = card.id;
    void (call.delivered ?? Promise.resolve(true))
      .then((written) => {
        if (!written) return;
        void this.relay.delivered(closed, 'mcp').catch(() => {});
        const storing = this.calls.delivered(cardId, this.relay.now());
        this.handing.set(cardId, storing);
        return storing.finally(() => this.handing.get(cardId) === storing && this.handing.delete(cardId));
      })
      // The store closed meanwhile (shutdown): the record stays open, which only costs a re-ask.
      .catch(() => {});
    return asAnswered(card);
  }

  /** An earlier call's card this call takes over, if any (see the top of this file). */
  private async attach(call: ToolCall, family: string, hash: string): Promise<Card | undefined> {
    const candidates = await this.calls.open(family, hash, call.clientKey);
    for (const { cardId, clientKey } of candidates) {
      const sameClient = call.clientKey !== undefined && clientKey === call.clientKey;
      if (!sameClient && this.waiting.has(cardId)) continue;
      // Its result reached its client and is being stored as delivered (a network database
      // takes a moment): the client may already ask the same again, and that is a new question.
      const handing = this.handing.get(cardId);
      if (handing && (await handing.then(() => true, () => false))) continue;
      const card = await this.relay.find(cardId);
      if (!card) continue;
      // A late answer its client never received is handed over however late it comes back.
      if (card.lateAnswer && card.delivery?.state !== 'delivered') return card;
      if (card.status === 'cancelled') continue;
      // A card closed while its client was away is handed over within the grace; a question
      // asked again much later is asked again.
      if (card.status === 'pending' || this.relay.now() - Date.parse(card.closedAt ?? '') <= this.timing.reattachGraceMs) return card;
    }
    return undefined;
  }

  /** A new card for the call; the same request re-sent on the same MCP session gets the same one. */
  private async open(call: ToolCall, family: string, hash: string, draft: CardDraft): Promise<Card> {
    // Without an MCP session there is no request to recognise again: a fresh id.
    const card = await this.relay.create({
      ...draft,
      ...(call.mcpSessionId ? { toolCallId: `mcp:${call.mcpSessionId}:${typeof call.requestId}:${call.requestId}:${hash}` } : {}),
      sessionId: call.sessionId ?? null,
      ...(call.askedBy ? { askedBy: call.askedBy } : {}),
    });
    await this.calls.record({ cardId: card.id, dialect: family, argsHash: hash, clientKey: call.clientKey }, this.relay.now());
    return card;
  }

  /** Ends the grace timers (the relay is shutting down). */
  close(): void {
    this.graceTimers.forEach((timer) => this.relay.clock.clearTimer(timer));
    this.graceTimers.clear();
  }

  // Both timers run on the relay's clock, so that tests move them by hand.
  private startProgress(call: ToolCall, cardId: string): () => void {
    if (call.progressToken === undefined) return () => {};
    const { clock } = this.relay;
    let n = 0;
    let stopped = false;
    const beat = () => {
      n += 1;
      call.progress(n, `Waiting for the user's answer (card ${cardId}).`).catch(() => {});
      if (!stopped) timer = clock.setTimer(beat, this.timing.progressIntervalMs);
    };
    let timer = clock.setTimer(beat, this.timing.progressIntervalMs);
    return () => {
      stopped = true;
      clock.clearTimer(timer);
    };
  }

  private cancelLater(cardId: string): void {
    const timer = this.relay.clock.setTimer(() => {
      this.graceTimers.delete(timer);
      if (this.waiting.has(cardId)) return;
      // The store may be closed already (shutdown); the card then waits for its deadline.
      this.relay.cancel(cardId).catch(() => {});
    }, this.timing.reattachGraceMs);
    this.graceTimers.add(timer);
  }
}

/** Who asked what: a call only ever re-attaches to a card of the same caller with the same arguments. */
const callHash = (call: ToolCall) => argsHash({ by: call.askedBy?.id ?? null, args: call.arguments ?? null });

/** The arguments' fingerprint, the same whatever order the client wrote their keys in. */
function argsHash(args: unknown): string {
  const canonical = JSON.stringify(args, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}
