import type { Channel, ChannelFactory } from '../channel.js';
import { POLL_REQUEST_SECONDS, closeCard, postCard, telegramApi } from './client.js';
import { TelegramUpdates } from './inbound.js';

// Telegram: posts to one chat (a group, or a person's chat with the bot), or the chat a
// route names, takes taps and replies by long polling. See docs/channels.md.

export const telegramChannel: ChannelFactory = (config, context): Channel => {
  const settings = config.telegram!;
  const api = telegramApi(settings);
  let updates: TelegramUpdates | undefined;
  return {
    id: 'telegram',
    post: (card, chat) => postCard(api, chat ?? settings.chat, card),
    close: (card, ref) => closeCard(api, card, ref),
    async start(inbox) {
      updates = new TelegramUpdates(api, telegramApi(settings, POLL_REQUEST_SECONDS), settings.chat, inbox, context);
      await updates.start();
    },
    stop: () => updates?.stop(),
  };
};
