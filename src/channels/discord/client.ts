import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { Routes, type APIMessage } from 'discord-api-types/v10';
import { ChannelSendError, sendErrorFor } from '../channel.js';
import type { DiscordPost } from './message.js';

// Discord's REST API through @discordjs/rest, with the library's own waiting switched off:
// no retries, and a rate limit rejects at once with the time Discord asked for, so the
// durable outbox does all the waiting and retrying (and survives a restart while it waits).

export const DEFAULT_API_URL = 'https://discord.com/api';
/** Below the outbox's 30 s: a hung request counts as an outage here first, with a clear reason. */
export const REQUEST_TIMEOUT_MS = 15_000;

export interface DiscordClientOptions {
  token: string;
  /** Discord's API base without the version (the library adds /v10). */
  apiUrl?: string;
}

export class DiscordClient {
  private rest: REST;

  constructor(private readonly options: DiscordClientOptions) {
    this.rest = this.fresh();
  }

  async post(channel: string, body: DiscordPost): Promise<APIMessage> {
    return this.send('post', () => this.rest.post(Routes.channelMessages(channel), { body }) as Promise<APIMessage>);
  }

  async edit(channel: string, message: string, body: DiscordPost): Promise<APIMessage> {
    return this.send('edit', () => this.rest.patch(Routes.channelMessage(channel, message), { body }) as Promise<APIMessage>);
  }

  private fresh(): REST {
    return new REST({
      version: '10',
      // The library adds /v10 itself: a base given with a trailing slash or a version still works.
      api: (this.options.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '').replace(/\/v\d+$/, ''),
      retries: 0,
      timeout: REQUEST_TIMEOUT_MS,
      // The exact wait Discord asked for, without the library's safety margin on top.
      offset: 0,
      rejectOnRateLimit: () => true,
      // No sweeper timers: this client lives as long as the relay and talks to one channel.
      hashSweepInterval: 0,
      handlerSweepInterval: 0,
    }).setToken(this.options.token);
  }

  private async send<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw this.failure(what, err);
    }
  }

  private failure(what: string, err: unknown): ChannelSendError {
    if (err instanceof RateLimitError) {
      // The library remembers the bucket on the wall clock and would refuse again by itself;
      // the outbox already waits the time Discord asked, so a fresh client keeps one clock.
      this.rest = this.fresh();
      const wait = err.retryAfter > 0 ? err.retryAfter : err.timeToReset > 0 ? err.timeToReset : 1000;
      return new ChannelSendError('rate_limited', `Discord rate limit on ${err.route}${err.global ? ' (global)' : ''}`, wait);
    }
    if (err instanceof DiscordAPIError) {
      // After a 401 the library forgets the token; a fresh client picks it up again for the retry.
      if (err.status === 401) this.rest = this.fresh();
      return sendErrorFor(err.status, `Discord refused the ${what} (${err.status}, code ${err.code}): ${err.message}`);
    }
    if (err instanceof HTTPError) return sendErrorFor(err.status, `Discord answered the ${what} with ${err.status} ${err.message}`);
    // Refused connections, resets, timeouts (AbortError): Discord is out of reach for now.
    const error = err as Error & { code?: string; cause?: { code?: string } };
    const code = error?.code ?? error?.cause?.code;
    const reason = error?.name === 'AbortError' ? `no response in ${REQUEST_TIMEOUT_MS / 1000} s` : `${code ? `${code}: ` : ''}${error?.message ?? String(err)}`;
    return new ChannelSendError('unavailable', `cannot reach Discord (${reason})`);
  }
}
