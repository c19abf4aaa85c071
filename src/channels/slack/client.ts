import { ErrorCode, LogLevel, WebClient, type Logger } from '@slack/web-api';
import type { Card } from '../../cards/model.js';
import { clip } from '../card-text.js';
import { ChannelSendError, sendErrorFor, type MessageRef } from '../channel.js';
import type { SlackConfig } from '../config.js';
import { closedOf, FALLBACK_TEXT_CHARS, postOf } from './message.js';

// Slack's Web API through @slack/web-api's WebClient, with its own retrying and rate-limit
// waiting switched off: the durable outbox retries (a WebClient waiting in memory would
// lose the post on a restart and hold the channel's queue). Every failure becomes a
// ChannelSendError the outbox understands.

export const DEFAULT_API_URL = 'https://slack.com/api/';
/** A request Slack has not answered in this long is an outage. */
export const REQUEST_MS = 20_000;

/**
 * Platform errors (HTTP 200, ok:false) worth waiting out: Slack's own trouble, and a token
 * or membership the operator can fix (revoked token, bot not invited to the channel) —
 * the cards must still appear once it is fixed. Any other error is this request's fault.
 */
const TRANSIENT = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);
const FIXABLE = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'no_permission',
  'missing_scope',
  'not_in_channel',
  'access_denied',
  'ekm_access_denied',
  'team_access_not_granted',
  'org_login_required',
]);

export class SlackClient {
  private readonly web: WebClient;

  constructor(
    private readonly config: SlackConfig,
    private readonly log: (line: string) => void,
  ) {
    this.web = new WebClient(config.token, {
      slackApiUrl: withSlash(config.apiUrl ?? DEFAULT_API_URL),
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout: REQUEST_MS,
      logger: quietLogger(log),
    });
  }

  async post(card: Card, channel = this.config.channel): Promise<MessageRef> {
    const result = await call('chat.postMessage', () =>
      this.web.chat.postMessage({ channel, ...postOf(card), unfurl_links: false, unfurl_media: false }),
    );
    if (!result.channel || !result.ts) throw new ChannelSendError('unavailable', 'chat.postMessage: the answer had no channel or ts');
    return { chat: result.channel, message: result.ts };
  }

  async close(card: Card, ref: MessageRef): Promise<void> {
    await call('chat.update', () => this.web.chat.update({ channel: ref.chat, ts: ref.message, ...closedOf(card) }));
  }

  /**
   * A notice only `user` sees (in the thread when given). Best effort: a lost notice changes nothing.
   * Cut like a card's text: "Already answered: …" lists every pick, and Slack refuses text over
   * 40,000 characters (msg_too_long).
   */
  async notify(channel: string, user: string, text: string, threadTs?: string): Promise<void> {
    try {
      const notice = clip(text, FALLBACK_TEXT_CHARS);
      await call('chat.postEphemeral', () => this.web.chat.postEphemeral({ channel, user, text: notice, ...(threadTs ? { thread_ts: threadTs } : {}) }));
    } catch (err) {
      this.log(`could not tell ${user} privately: ${(err as Error).message}`);
    }
  }
}

/** Runs one Web API call, turning the WebClient's errors into ChannelSendErrors. */
async function call<T>(method: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    throw sendErrorOf(method, err);
  }
}

export function sendErrorOf(method: string, err: unknown): ChannelSendError {
  const e = err as { code?: string; message?: string; retryAfter?: number; statusCode?: number; data?: { error?: string; response_metadata?: { retryAfter?: number } } };
  switch (e?.code) {
    case ErrorCode.RateLimitedError:
      return new ChannelSendError('rate_limited', `${method}: rate limited for ${e.retryAfter} s`, (e.retryAfter ?? 1) * 1000);
    case ErrorCode.HTTPError: {
      return sendErrorFor(e.statusCode, `${method}: HTTP ${e.statusCode ?? 0}`);
    }
    case ErrorCode.PlatformError: {
      const code = e.data?.error ?? 'unknown_error';
      if (code === 'ratelimited') {
        return new ChannelSendError('rate_limited', `${method}: ratelimited`, (e.data?.response_metadata?.retryAfter ?? 1) * 1000);
      }
      return new ChannelSendError(TRANSIENT.has(code) || FIXABLE.has(code) ? 'unavailable' : 'rejected', `${method}: ${code}`);
    }
    case ErrorCode.RequestError:
      return new ChannelSendError('unavailable', `${method}: cannot reach Slack (${e.message})`);
    default:
      // A 429 without a readable Retry-After, or anything else unexpected: wait and retry.
      return new ChannelSendError('unavailable', `${method}: ${e?.message ?? String(err)}`);
  }
}

const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** The WebClient's own warnings repeat what the outbox logs; only its errors (Slack's [ERROR] notes) go to the log. */
function quietLogger(log: (line: string) => void): Logger {
  let level = LogLevel.ERROR;
  return {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (...msg: unknown[]) => log(`Slack says: ${msg.map(String).join(' ')}`),
    setLevel: (next) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
