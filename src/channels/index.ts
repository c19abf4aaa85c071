import type { ChannelFactory } from './channel.js';
import type { ChannelId, ChannelsConfig } from './config.js';

// Every chat channel the relay can post to, by id. A channel's module, and its platform's
// client library with it, is loaded only when the configuration switches the channel on: a
// relay without chat channels holds none of them.

const LOADERS: Record<ChannelId, () => Promise<ChannelFactory>> = {
  telegram: async () => (await import('./telegram/index.js')).telegramChannel,
  discord: async () => (await import('./discord/index.js')).discordChannel,
  mattermost: async () => (await import('./mattermost/index.js')).mattermostChannel,
  slack: async () => (await import('./slack/index.js')).slackChannel,
};

/** The factories of the channels the configuration switches on. */
export async function loadChannels(config: ChannelsConfig): Promise<Partial<Record<ChannelId, ChannelFactory>>> {
  const on = (Object.keys(LOADERS) as ChannelId[]).filter((id) => config[id]);
  return Object.fromEntries(await Promise.all(on.map(async (id) => [id, await LOADERS[id]()] as const)));
}
