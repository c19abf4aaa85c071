import type { Channel, ChannelFactory } from '../channel.js';
import { DiscordClient } from './client.js';
import { interactionRoutes, publicKeyOf } from './inbound.js';
import { closedOf, postOf } from './message.js';

// Discord: posts to one channel with a bot token over REST, takes button presses and modal
// answers on the interactions endpoint (/channels/discord/interactions). See docs/channels/discord.md.

export const discordChannel: ChannelFactory = (config): Channel => {
  const settings = config.discord;
  if (!settings) throw new Error('discord: not configured (ASKRELAY_DISCORD_TOKEN)');
  const client = new DiscordClient({ token: settings.token, ...(settings.apiUrl ? { apiUrl: settings.apiUrl } : {}) });
  // Parsed once at start: a wrong key stops `askrelay serve` instead of refusing every press.
  const key = publicKeyOf(settings.publicKey);
  return {
    id: 'discord',
    async post(card, chat = settings.channel) {
      const message = await client.post(chat, postOf(card));
      return { chat: message.channel_id ?? chat, message: message.id };
    },
    async close(card, ref) {
      await client.edit(ref.chat, ref.message, closedOf(card));
    },
    start() {},
    stop() {},
    routes: (inbox) => interactionRoutes(inbox, key),
  };
};
