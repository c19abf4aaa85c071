import type { Api } from 'grammy';
import type { CallbackQuery, Message, Update } from 'grammy/types';
import type { ChannelContext, ChannelInbox, InboundOutcome } from '../channel.js';
import { clip } from '../../cards/text.js';
import { ChannelSendError } from '../channel.js';
import { answerSummary } from '../card-text.js';
import { pause } from '../../relay/clock.js';
import { call, messageKey } from './client.js';
import { decodeCallback, MESSAGE_CHARS, otherPromptOf, TOAST_CHARS } from './message.js';

// Telegram's updates by long polling (getUpdates): no public address needed. Taps on the
// inline keyboard arrive as callback queries and are answered with a toast (or an alert
// for a refusal, seen only by whoever tapped); typed answers are replies to the card's
// message or to the forced-reply prompt "Other…" sent. Telegram keeps an update until a
// later getUpdates confirms it, so one that arrived while the relay was down is handled after.

/** How long one getUpdates waits for something to happen. */
export const POLL_SECONDS = 25;
const MAX_BACKOFF_MS = 60_000;
const OFFSET_KEY = 'updates-offset';

export class TelegramUpdates {
  private offset: number | undefined;
  private stopper = new AbortController();
  private failures = 0;

  constructor(
    private readonly api: Api,
    /** The same bot with a timeout that outlasts a long poll. */
    private readonly pollApi: Api,
    private readonly chat: string,
    private readonly inbox: ChannelInbox,
    private readonly context: ChannelContext,
  ) {}

  async start(): Promise<void> {
    // Where the last run stopped: an update it handled is not handled again after a restart.
    const saved = Number(await this.inbox.recall(OFFSET_KEY));
    if (saved > 0) this.offset = saved;
    void this.loop();
  }

  stop(): void {
    this.stopper.abort();
  }

  private async loop(): Promise<void> {
    const signal = this.stopper.signal;
    while (!signal.aborted) {
      let updates: Update[];
      try {
        updates = await call(() =>
          this.pollApi.getUpdates({ offset: this.offset, timeout: POLL_SECONDS, allowed_updates: ['message', 'callback_query'] }, signal as never),
        );
        this.failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        await this.backOff(err);
        continue;
      }
      for (const update of updates) {
        this.offset = update.update_id + 1;
        try {
          await this.handle(update);
        } catch (err) {
          // One update that cannot be handled (Telegram refused our toast) must not stop the rest.
          this.context.log(`update ${update.update_id}: ${(err as Error).message}`);
        }
        if (signal.aborted) return;
        await this.inbox.remember(OFFSET_KEY, String(this.offset));
      }
    }
  }

  /** Waits before the next poll: what a rate limit asks, else a doubling back-off. */
  private backOff(err: unknown): Promise<void> {
    this.failures++;
    const limited = err instanceof ChannelSendError && err.kind === 'rate_limited';
    const wait = limited ? (err.retryAfterMs ?? 1000) : Math.min(1000 * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
    if ((this.failures & (this.failures - 1)) === 0) this.context.log(`getUpdates failed (${(err as Error).message}); polling again in ${Math.ceil(wait / 1000)} s`);
    return pause(this.context.clock, wait, this.stopper.signal);
  }

  private async handle(update: Update): Promise<void> {
    if (update.callback_query) return this.onTap(update.callback_query);
    const message = update.message;
    // Any chat: a route may post cards in others than the configured one (docs/routing.md); a
    // reply counts only when it answers a message of ours (onReply looks it up).
    if (message?.reply_to_message && message.text !== undefined) return this.onReply(message);
  }

  private async onTap(query: CallbackQuery): Promise<void> {
    const data = query.data ? decodeCallback(query.data) : undefined;
    const user = String(query.from.id);
    if (!data) return this.toast(query, { kind: 'invalid', notice: 'This button is not one of the relay’s.' });
    if (data.kind === 'option') return this.toast(query, await this.inbox.tap({ user, cardId: data.cardId, option: data.option }));

    // Other…: ask for the text with a forced reply; the card stays open until the reply comes.
    const refused = await this.inbox.beforePrompt({ user, cardId: data.cardId });
    if (refused) return this.toast(query, refused);
    const card = (await this.inbox.card(data.cardId))!;
    const { text, ...other } = otherPromptOf(card, query.from);
    // In the chat the card's message is in.
    const chat = query.message ? String(query.message.chat.id) : this.chat;
    const prompt = await call(() => this.api.sendMessage(chat, text, other));
    await this.inbox.linkMessage({ chat, message: messageKey(prompt.chat.id, prompt.message_id) }, card.id);
    await call(() => this.api.answerCallbackQuery(query.id));
  }

  private async onReply(message: Message): Promise<void> {
    const cardId = await this.inbox.cardOfMessage(messageKey(message.chat.id, message.reply_to_message!.message_id));
    if (!cardId || !message.from) return;
    const outcome = await this.inbox.reply({ user: String(message.from.id), cardId, text: message.text ?? '' });
    if (outcome.kind === 'answered' || outcome.kind === 'ignored') return;
    // Telegram has no private replies in a group: the notice answers the person's message
    // (cut to one message: "Already answered: …" lists every pick).
    await call(() => this.api.sendMessage(String(message.chat.id), clip(outcome.notice, MESSAGE_CHARS), { reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true } }));
  }

  /**
   * The tapper's private answer: a short toast, or an alert they must dismiss for a refusal.
   * Cut to what Telegram takes: a long option label would make it refuse the toast.
   */
  private async toast(query: CallbackQuery, outcome: InboundOutcome): Promise<void> {
    if (outcome.kind === 'ignored') return void (await call(() => this.api.answerCallbackQuery(query.id)));
    if (outcome.kind === 'answered') {
      const text = clip(`Answered: ${answerSummary(outcome.card)}`, TOAST_CHARS);
      return void (await call(() => this.api.answerCallbackQuery(query.id, { text })));
    }
    await call(() => this.api.answerCallbackQuery(query.id, { text: clip(outcome.notice, TOAST_CHARS), show_alert: true }));
  }
}
