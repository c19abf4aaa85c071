import type { Channel, ChannelFactory } from '../channel.js';
import { SlackClient } from './client.js';
import { slackRoutes } from './inbound.js';

// Slack: posts to one channel through the Web API; taps and thread replies arrive as
// signed webhooks under /channels/slack (interactions, events). See docs/channels/slack.md.

export const slackChannel: ChannelFactory = (config, context): Channel => {
  const settings = config.slack!;
  const client = new SlackClient(settings, context.log);
  return {
    id: 'slack',
    post: (card, chat) => client.post(card, chat),
    close: (card, ref) => client.close(card, ref),
    // Webhooks only: nothing to poll.
    start: () => {},
    stop: () => {},
    routes: (inbox) => slackRoutes(inbox, { signingSecret: settings.signingSecret, client, now: () => context.clock.now() }),
  };
};
