import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { namedDuration } from '../config.js';

// Channel configuration: a JSON file (ASKRELAY_CHANNELS, or <data>/channels.json when it
// exists) and/or variables (ASKRELAY_TELEGRAM_TOKEN, …); a variable wins over the file.
// A channel is on when its token is set. Mistakes stop `askrelay serve` with a sentence
// naming the setting, rather than a channel that silently never posts.

/** The chat platforms a relay can post to; src/channels/index.ts has a channel for each. */
export const CHANNEL_IDS = ['telegram', 'slack', 'discord', 'mattermost'] as const;
export type ChannelId = (typeof CHANNEL_IDS)[number];

const ids = z.array(z.string().trim().min(1)).min(1, 'name at least one user id, or "*" for anyone in the chat');
const route = z.object({ providers: z.array(z.string().min(1)).optional() }).strict();
const token = z.string().trim().min(1);
const who = { answerers: ids, route: route.optional() };

export const ChannelsFileSchema = z
  .object({
    telegram: z.object({ token, chat: z.string().trim().min(1), ...who, apiRoot: z.string().url().optional() }).strict().optional(),
    slack: z
      .object({ token, channel: z.string().trim().min(1), ...who, signingSecret: z.string().min(1), apiUrl: z.string().url().optional() })
      .strict()
      .optional(),
    discord: z
      .object({ token, channel: z.string().trim().min(1), ...who, publicKey: z.string().regex(/^[0-9a-f]{64}$/i, 'the application public key: 64 hex digits'), apiUrl: z.string().url().optional() })
      .strict()
      .optional(),
    mattermost: z
      .object({ token, url: z.string().url(), channel: z.string().trim().min(1), ...who, poll: z.string().optional() })
      .strict()
      .optional(),
    /** The address chat platforms reach the relay at (Mattermost's button callbacks). */
    publicUrl: z.string().url().optional(),
    /** The first retry of a failed post waits this long, doubling up to 5 minutes. */
    backoff: z.string().optional(),
  })
  .strict();

export type ChannelsFile = z.infer<typeof ChannelsFileSchema>;
export type TelegramConfig = NonNullable<ChannelsFile['telegram']>;
export type SlackConfig = NonNullable<ChannelsFile['slack']>;
export type DiscordConfig = NonNullable<ChannelsFile['discord']>;
export type MattermostConfig = NonNullable<ChannelsFile['mattermost']> & { pollMs: number };

export interface ChannelsConfig {
  telegram?: TelegramConfig;
  slack?: SlackConfig;
  discord?: DiscordConfig;
  mattermost?: MattermostConfig;
  publicUrl?: string;
  backoffMs: number;
}

/** Variable → field, per channel; the token variable switches the channel on. */
const VARIABLES: Record<ChannelId, Record<string, string>> = {
  telegram: { token: 'TOKEN', chat: 'CHAT', answerers: 'ANSWERERS', apiRoot: 'API_ROOT', route: 'PROVIDERS' },
  slack: { token: 'TOKEN', channel: 'CHANNEL', answerers: 'ANSWERERS', signingSecret: 'SIGNING_SECRET', apiUrl: 'API_URL', route: 'PROVIDERS' },
  discord: { token: 'TOKEN', channel: 'CHANNEL', answerers: 'ANSWERERS', publicKey: 'PUBLIC_KEY', apiUrl: 'API_URL', route: 'PROVIDERS' },
  mattermost: { token: 'TOKEN', url: 'URL', channel: 'CHANNEL', answerers: 'ANSWERERS', poll: 'POLL', route: 'PROVIDERS' },
};

const list = (text: string) => text.split(/[\s,]+/).filter(Boolean);

export function channelsConfig(env: NodeJS.ProcessEnv, dataDir: string): ChannelsConfig {
  const file = env.ASKRELAY_CHANNELS?.trim() ? resolve(env.ASKRELAY_CHANNELS.trim()) : join(dataDir, 'channels.json');
  const where = env.ASKRELAY_CHANNELS?.trim() ? `ASKRELAY_CHANNELS (${file})` : file;
  let raw: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`${where}: not valid JSON (${(err as Error).message}).`);
    }
  } else if (env.ASKRELAY_CHANNELS?.trim()) {
    throw new Error(`${where}: no such file.`);
  }
  for (const [id, fields] of Object.entries(VARIABLES) as [ChannelId, Record<string, string>][]) {
    const prefix = `ASKRELAY_${id.toUpperCase()}_`;
    // A channel's variables apply when they switch it on (its token) or refine the file's section.
    if (!env[`${prefix}TOKEN`]?.trim() && raw[id] === undefined) continue;
    const section = { ...((raw[id] as Record<string, unknown> | undefined) ?? {}) };
    for (const [field, suffix] of Object.entries(fields)) {
      const value = env[prefix + suffix]?.trim();
      if (!value) continue;
      if (field === 'answerers') section.answerers = list(value);
      else if (field === 'route') section.route = value === '*' ? undefined : { providers: list(value) };
      else section[field] = value;
    }
    raw[id] = section;
  }
  if (env.ASKRELAY_PUBLIC_URL?.trim()) raw.publicUrl = env.ASKRELAY_PUBLIC_URL.trim();
  if (env.ASKRELAY_CHANNEL_BACKOFF?.trim()) raw.backoff = env.ASKRELAY_CHANNEL_BACKOFF.trim();

  const parsed = ChannelsFileSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`channels: ${describe(parsed.error)}`);
  const { mattermost, backoff, ...rest } = parsed.data;
  return {
    ...rest,
    ...(mattermost ? { mattermost: { ...mattermost, pollMs: namedDuration('channels: mattermost.poll', mattermost.poll ?? '2s') } } : {}),
    backoffMs: namedDuration('channels: backoff', backoff ?? '1s'),
  };
}

/** The channels switched on. */
export const enabledChannels = (config: ChannelsConfig): ChannelId[] =>
  CHANNEL_IDS.filter((id) => config[id] !== undefined);

/** "telegram.chat: required (ASKRELAY_TELEGRAM_CHAT)": the setting, and the variable that sets it. */
function describe(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const [id, field] = issue.path.map(String);
      const suffix = id && field ? VARIABLES[id as ChannelId]?.[field] : undefined;
      const variable = suffix ? ` (ASKRELAY_${id.toUpperCase()}_${suffix})` : '';
      const message = issue.code === 'invalid_type' && /received undefined/.test(issue.message) ? 'required' : issue.message;
      return `${issue.path.join('.') || 'file'}: ${message}${variable}`;
    })
    .join('; ');
}
