import { ChannelSendError, type Channel } from './channel.js';
import type { ChannelsConfig } from './config.js';

// What a chat platform says is never trusted to leave our secrets out: an error body may echo
// the request (a Telegram API root answering with its path shows /bot<token>/), a proxy may
// quote the Authorization header. Every channel's words reach the log, the metrics' events and
// GET /api/channels through two doors that the Channels service builds for every platform:
// the log line a channel writes (its context's log, and the outbox's) and the error its post
// or close throws (redactingChannel). Both pass through one redactor that knows every secret
// the channels are configured with.

/** Shorter secrets are not redacted: replacing every "ab" would make the log unreadable, and no platform's secret is that short. */
export const MIN_SECRET_CHARS = 6;
export const REDACTED = '<redacted>';
/** Telegram's Bot API puts the token in every URL's path. */
const BOT_PATH = /\/bot[^/\s"']+\//g;

/** Every secret a channel is configured with (tokens and signing secrets; Discord's public key is public). */
export function channelSecrets(config: ChannelsConfig): string[] {
  const { telegram, slack, discord, mattermost } = config;
  return [telegram?.token, slack?.token, slack?.signingSecret, discord?.token, mattermost?.token].filter((s): s is string => !!s);
}

/** Replaces each secret (as written and URL-encoded) and any /bot…/ path, the longest secret first. */
export function secretRedactor(secrets: readonly (string | undefined)[]): (text: string) => string {
  const forms = [...new Set(secrets.filter((s): s is string => !!s && s.length >= MIN_SECRET_CHARS).flatMap((s) => [s, encodeURIComponent(s)]))].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text.replace(BOT_PATH, '/bot<token>/');
    for (const form of forms) out = out.split(form).join(REDACTED);
    return out;
  };
}

/** The channel as the outbox sees it: a failed post or close throws its error with the secrets redacted. */
export function redactingChannel(channel: Channel, redact: (text: string) => string): Channel {
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof ChannelSendError) throw new ChannelSendError(err.kind, redact(err.message), err.retryAfterMs);
      // The outbox reads any other error as an outage, as before; only its words change.
      throw new ChannelSendError('unavailable', redact((err as Error)?.message ?? String(err)));
    }
  };
  return {
    id: channel.id,
    post: (card, chat) => guard(() => channel.post(card, chat)),
    close: (card, ref) => guard(() => channel.close(card, ref)),
    start: (inbox) => channel.start(inbox),
    stop: () => channel.stop(),
    ...(channel.routes ? { routes: (inbox: Parameters<NonNullable<Channel['routes']>>[0]) => channel.routes!(inbox) } : {}),
  };
}
