import type { Channel, ChannelFactory } from '../channel.js';
import { closeCard, MattermostApi, postCard } from './client.js';
import { actionRoutes, ThreadReplies } from './inbound.js';

// Mattermost: posts to one channel with a bot account's token (REST API v4), takes button
// clicks on the relay's public address and thread replies by polling. See docs/channels/mattermost.md.

export const mattermostChannel: ChannelFactory = (config, context): Channel => {
  const settings = config.mattermost!;
  const api = new MattermostApi(settings.url, settings.token);
  let replies: ThreadReplies | undefined;
  return {
    id: 'mattermost',
    post: (card) => postCard(api, { channel: settings.channel, publicUrl: context.publicUrl(), secret: context.secret }, card),
    close: (card, ref) => closeCard(api, card, ref),
    async start(inbox) {
      replies = new ThreadReplies(api, settings.channel, inbox, context, settings.pollMs);
      await replies.start();
    },
    stop: () => replies?.stop(),
    routes: (inbox) => actionRoutes(inbox, { secret: context.secret, now: () => context.clock.now() }),
  };
};
