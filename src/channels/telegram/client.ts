import { Api, GrammyError, HttpError } from 'grammy';
import type { Card } from '../../cards/model.js';
import { sendErrorFor, type MessageRef } from '../channel.js';
import type { TelegramConfig } from '../config.js';
import { closedOf, postOf } from './message.js';

// Telegram's Bot API through grammy's Api (no Bot framework: the relay runs its own update
// loop, see inbound.ts). Every failure becomes a ChannelSendError the outbox understands.

export const DEFAULT_API_ROOT = 'https://api.telegram.org';
/**
 * A send Telegram has not answered in this long is an outage: below the outbox's own 30 s, so
 * a late answer cannot arrive after the outbox gave up (and post the card twice).
 */
export const SEND_SECONDS = 20;
/** getUpdates waits up to its long poll (25 s) before answering: more than a send. */
export const POLL_REQUEST_SECONDS = 35;

export function telegramApi(config: TelegramConfig, timeoutSeconds = SEND_SECONDS): Api {
  return new Api(config.token, { apiRoot: (config.apiRoot ?? DEFAULT_API_ROOT).replace(/\/+$/, ''), timeoutSeconds });
}

/**
 * How a Telegram message is known to the relay: message ids count per chat, so the chat is
 * part of it ("-1001234/42"), and a new chat's message 42 is never an old card's.
 */
export const messageKey = (chat: number | string, messageId: number) => `${chat}/${messageId}`;
const messageIdOf = (key: string) => Number(key.slice(key.lastIndexOf('/') + 1));

export async function postCard(api: Api, chat: string, card: Card): Promise<MessageRef> {
  const { text, ...other } = postOf(card);
  const sent = await call(() => api.sendMessage(chat, text, other));
  return { chat: String(sent.chat.id), message: messageKey(sent.chat.id, sent.message_id) };
}

export async function closeCard(api: Api, card: Card, ref: MessageRef): Promise<void> {
  const { text, ...other } = closedOf(card);
  try {
    await call(() => api.editMessageText(ref.chat, messageIdOf(ref.message), text, other));
  } catch (err) {
    // Already showing exactly this (an edit that went through before a restart): done.
    if (/message is not modified/i.test((err as Error).message)) return;
    throw err;
  }
}

/** Runs one Bot API call, turning grammy's errors into ChannelSendErrors. */
export async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    if (err instanceof GrammyError) {
      const retryAfter = err.parameters?.retry_after;
      throw sendErrorFor(err.error_code, `${err.method}: ${err.description}`, retryAfter !== undefined ? retryAfter * 1000 : undefined);
    }
    // Its message holds the URL, and so the token: the Channels service redacts it (src/channels/redact.ts).
    if (err instanceof HttpError) throw sendErrorFor(undefined, `cannot reach Telegram: ${(err.error as Error)?.message ?? err.message}`);
    throw err;
  }
}
