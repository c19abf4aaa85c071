import type { Hono } from 'hono';
import type { Card } from '../cards/model.js';
import type { Clock } from '../relay/clock.js';
import type { ChannelId, ChannelsConfig } from './config.js';

// What every chat channel (Telegram, Slack, Discord, Mattermost) is to the rest of the
// relay. A channel is a surface: it gets cards from the outbox (posts and closing edits,
// retried durably) and hands people's taps and replies to the inbox, which answers through
// the relay core like every other surface. A channel never talks to a provider.

/** Where a card's message landed: the platform's chat (channel) id and message id (Slack: ts). */
export interface MessageRef {
  chat: string;
  message: string;
}

/**
 * Why a post or edit failed, as the outbox needs it: wait and retry (rate limit, outage),
 * or give up (the platform refused this request for good: a deleted message, a bad chat).
 */
export class ChannelSendError extends Error {
  constructor(
    readonly kind: 'rate_limited' | 'unavailable' | 'rejected',
    message: string,
    /** rate_limited: how long the platform asked us to wait. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ChannelSendError';
  }
}

/** A person's tap or typed reply, as the channel read it from the platform. */
export interface InboundAction {
  /** The platform's user id of whoever acted. */
  user: string;
  cardId: string;
}

/** What became of a tap or reply; the channel tells the person (`notice`) its own way. */
export type InboundOutcome =
  | { kind: 'answered'; card: Card }
  /** A repeat of a tap handled within the last minute: do nothing visible. */
  | { kind: 'ignored' }
  /** Refused, closed, or unreadable: nothing changed; `notice` says why, politely. */
  | { kind: 'refused' | 'closed' | 'invalid'; notice: string }
  /**
   * A reply to a card that expired or was cancelled, kept as its late answer: the card's
   * message does not change, so `notice` tells the person (every platform shows a notice).
   */
  | { kind: 'late'; card: Card; notice: string };

/** What channels call when people act: the shared rules (who may answer, repeats, parsing). */
export interface ChannelInbox {
  /** A tap on option `option` (0-based) of the card's only question. */
  tap(action: InboundAction & { option: number }): Promise<InboundOutcome>;
  /** Typed text, read with the plain-text reply parser. */
  reply(action: InboundAction & { text: string }): Promise<InboundOutcome>;
  /**
   * Before asking someone for typed text (Telegram's Other…, Discord's Reply… form):
   * undefined when they may answer the open card; otherwise why not (a refusal is audited).
   */
  beforePrompt(action: InboundAction): Promise<Exclude<InboundOutcome, { kind: 'answered' | 'ignored' }> | undefined>;
  /** The card a message of this channel belongs to (its card message or a prompt about it). */
  cardOfMessage(message: string): Promise<string | undefined>;
  /** Remembers a further message about a card (Telegram's forced-reply prompt). */
  linkMessage(ref: MessageRef, cardId: string): Promise<void>;
  /** A bookmark the channel keeps across restarts (how far it read the chat). */
  recall(key: string): Promise<string | undefined>;
  remember(key: string, value: string): Promise<void>;
  /** The card as it stands (undefined when unknown). */
  card(cardId: string): Promise<Card | undefined>;
}

export interface Channel {
  readonly id: ChannelId;
  /**
   * Posts a new card, in `chat` when a route names one of the platform's chats
   * ("telegram:-100123", docs/routing.md), else in the configured chat. Throws
   * ChannelSendError on failure.
   */
  post(card: Card, chat?: string): Promise<MessageRef>;
  /** Edits the card's message once it closed (answered anywhere, skipped, expired, cancelled). */
  close(card: Card, ref: MessageRef): Promise<void>;
  /**
   * Starts receiving (polling loops); webhooks come through routes(). Resolves once it
   * has read its bookmark (where the last run stopped reading), the loop then runs on.
   */
  start(inbox: ChannelInbox): void | Promise<void>;
  stop(): void;
  /** Webhook routes mounted under /channels/<id> (Slack, Discord, Mattermost). */
  routes?(inbox: ChannelInbox): Hono;
}

/** What the relay gives a channel when it builds it. */
export interface ChannelContext {
  /** The address the platform reaches the relay at (ASKRELAY_PUBLIC_URL, else where it listens); known once it listens. */
  publicUrl(): string;
  /** A secret of this relay, for signing what a platform hands back (Mattermost's button context). */
  secret: string;
  /** The relay's clock, for polling intervals and the like (a fake one in tests). */
  clock: Clock;
  /** One line to the relay's log, already prefixed with the channel's id. */
  log(line: string): void;
}

export type ChannelFactory = (config: ChannelsConfig, context: ChannelContext) => Channel;

/**
 * The outbox's reading of a platform's HTTP status. 401 and 403 wait and retry like an
 * outage: a revoked token or a bot removed from the chat is fixed by the operator, and the
 * cards must still appear afterwards. Other 4xx are this request's fault: retrying cannot help.
 */
export function sendErrorFor(status: number | undefined, message: string, retryAfterMs?: number): ChannelSendError {
  if (status === 429) return new ChannelSendError('rate_limited', message, retryAfterMs);
  if (status === undefined || status >= 500 || status === 401 || status === 403 || status === 408) {
    return new ChannelSendError('unavailable', message);
  }
  return new ChannelSendError('rejected', message);
}
