import type { Channel, ChannelFactory, ChannelInbox } from '../channel.js';
import { closeCard, MattermostApi, postCard } from './client.js';
import { actionRoutes, ThreadReplies } from './inbound.js';

// Mattermost: posts to one channel with a bot account's token (REST API v4), or to the
// channel a route names, takes button clicks on the relay's public address and thread
// replies by polling each channel it posted in (remembered across restarts). See
// docs/channels/mattermost.md.

const OTHER_CHANNELS_KEY = 'route-channels';

export const mattermostChannel: ChannelFactory = (config, context): Channel => {
  const settings = config.mattermost!;
  const api = new MattermostApi(settings.url, settings.token);
  const replies = new Map<string, ThreadReplies>();
  let inbox: ChannelInbox | undefined;
  const read = async (channel: string) => {
    if (!inbox || replies.has(channel)) return;
    const reader = new ThreadReplies(api, channel, inbox, context, settings.pollMs, channel !== settings.channel);
    replies.set(channel, reader);
    await reader.start();
  };
  return {
    id: 'mattermost',
    async post(card, chat = settings.channel) {
      const ref = await postCard(api, { channel: chat, publicUrl: context.publicUrl(), secret: context.secret }, card);
      if (chat !== settings.channel && inbox && !replies.has(chat)) {
        const others = [...replies.keys()].filter((c) => c !== settings.channel);
        await inbox.remember(OTHER_CHANNELS_KEY, JSON.stringify([...others, chat]));
        await read(chat);
      }
      return ref;
    },
    close: (card, ref) => closeCard(api, card, ref),
    async start(given) {
      inbox = given;
      const others = JSON.parse((await given.recall(OTHER_CHANNELS_KEY)) ?? '[]') as string[];
      for (const channel of [settings.channel, ...others]) await read(channel);
    },
    stop: () => {
      replies.forEach((reader) => reader.stop());
      replies.clear();
    },
    routes: (inbox) => actionRoutes(inbox, { secret: context.secret, now: () => context.clock.now() }),
  };
};
