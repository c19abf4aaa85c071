import { parseArgs } from 'node:util';
import type { ChannelStatus } from '../channels/service.js';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, UsageError, parseFlags } from './flags.js';

// askrelay channels: the chat channels a running relay posts to, and whether their outboxes
// are keeping up (GET /api/channels). A channel whose platform is down or rate limiting
// shows what waits and why; the cards themselves are answerable elsewhere meanwhile.

export const CHANNELS_HELP = `askrelay channels — the chat channels the relay posts to, and their outboxes

Usage: askrelay channels [--json] [--url URL]

One line per channel switched on (Telegram, Slack, Discord, Mattermost): where it posts,
who may answer, and the posts and edits still waiting for the platform, with the
platform's last refusal ("429 …", "cannot reach …") and the next attempt's time.
A channel is switched on by its variables or <data>/channels.json: see docs/channels.md.

  --json   print {"channels": […]} exactly as the relay returns it

Only the human's token (the relay token) may read it.

${CLIENT_ENV_HELP}`;

class ChannelsClient extends RelayClient {
  list(): Promise<unknown> {
    return this.call('GET', 'api/channels');
  }
}

export async function channelsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('channels', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: { url: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }),
  );
  if (values.help) {
    console.log(CHANNELS_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay channels --help".`);
  const body = (await new ChannelsClient(findRelay(values.url)).list()) as { channels?: ChannelStatus[] };
  if (!Array.isArray(body?.channels)) throw new Error('the relay sent no channel list; is it an askrelay relay of this version?');
  if (values.json) {
    console.log(JSON.stringify(body, null, 2));
    return 0;
  }
  if (!body.channels.length) {
    console.log('No chat channels are switched on. Set ASKRELAY_TELEGRAM_TOKEN (or Slack, Discord, Mattermost) and friends: see docs/channels.md.');
    return 0;
  }
  for (const channel of body.channels) console.log(statusLine(channel));
  return 0;
}

export function statusLine(channel: ChannelStatus): string {
  const head = `${channel.id.padEnd(10)} ${channel.describe}`;
  if (!channel.queued) return `${head}; up to date`;
  const waiting = `${channel.queued} waiting`;
  const why = channel.lastError ? ` (after ${channel.attempts} failed attempt${channel.attempts === 1 ? '' : 's'}: ${channel.lastError})` : '';
  const next = channel.nextAttemptAt ? `, next attempt ${channel.nextAttemptAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}` : '';
  return `${head}; ${waiting}${why}${next}`;
}
