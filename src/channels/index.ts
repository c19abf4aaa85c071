import type { ChannelFactory } from './channel.js';
import type { ChannelId } from './config.js';
import { discordChannel } from './discord/index.js';
import { mattermostChannel } from './mattermost/index.js';
import { slackChannel } from './slack/index.js';
import { telegramChannel } from './telegram/index.js';

// Every chat channel the relay can post to, by id; the configuration decides which are on.

export const CHANNELS: Partial<Record<ChannelId, ChannelFactory>> = {
  telegram: telegramChannel,
  discord: discordChannel,
  mattermost: mattermostChannel,
  slack: slackChannel,
};
