import { namedDuration } from '../config.js';
import type { QueueTiming } from './push-queue.js';

// How pushes go out. Defaults suit real push services; tests shorten the timings through
// the same environment variables.

export interface PushConfig extends QueueTiming {
  /** VAPID `sub` claim: a mailto: or https: contact for the push service's operator. */
  subject: string;
  /** One request to a push service gives up after this long (then it is retried). */
  timeoutMs: number;
  /** Endpoints on loopback, private and link-local addresses are allowed (endpoint-policy.ts): tests and local setups only. */
  allowPrivate: boolean;
}

/**
 * Push subscriptions one principal (the operator, or one person) may hold: a person has a few
 * browsers and phones, and each subscription is a request the relay makes for every card.
 */
export const MAX_SUBSCRIPTIONS_PER_PRINCIPAL = 20;

export const DEFAULT_PUSH: PushConfig = {
  subject: 'mailto:askrelay@localhost',
  timeoutMs: 15_000,
  allowPrivate: false,
  concurrency: 16,
  retries: 5,
  backoffMs: 2_000,
  maxBackoffMs: 5 * 60_000,
  maxQueued: 1_000,
};

/**
 * ASKRELAY_PUSH_SUBJECT, ASKRELAY_PUSH_TIMEOUT (duration), ASKRELAY_PUSH_RETRIES (count),
 * ASKRELAY_PUSH_BACKOFF (duration of the first retry's wait), ASKRELAY_PUSH_ALLOW_PRIVATE (1 or 0).
 */
export function pushConfigFromEnv(env: NodeJS.ProcessEnv): PushConfig {
  const config = { ...DEFAULT_PUSH };
  const subject = env.ASKRELAY_PUSH_SUBJECT?.trim();
  if (subject) {
    if (!/^(mailto:|https:\/\/)/.test(subject)) {
      throw new Error(`ASKRELAY_PUSH_SUBJECT: "${subject}" is neither a mailto: address nor an https:// URL.`);
    }
    config.subject = subject;
  }
  if (env.ASKRELAY_PUSH_TIMEOUT) config.timeoutMs = namedDuration('ASKRELAY_PUSH_TIMEOUT', env.ASKRELAY_PUSH_TIMEOUT);
  if (env.ASKRELAY_PUSH_BACKOFF) {
    config.backoffMs = namedDuration('ASKRELAY_PUSH_BACKOFF', env.ASKRELAY_PUSH_BACKOFF);
    config.maxBackoffMs = Math.max(config.backoffMs, Math.min(config.maxBackoffMs, config.backoffMs * 64));
  }
  if (env.ASKRELAY_PUSH_RETRIES !== undefined) {
    const retries = Number(env.ASKRELAY_PUSH_RETRIES);
    if (!Number.isInteger(retries) || retries < 0) {
      throw new Error(`ASKRELAY_PUSH_RETRIES: "${env.ASKRELAY_PUSH_RETRIES}" is not a whole number of retries (0 or more).`);
    }
    config.retries = retries;
  }
  const allow = env.ASKRELAY_PUSH_ALLOW_PRIVATE?.trim();
  if (allow) {
    if (allow !== '1' && allow !== '0') throw new Error(`ASKRELAY_PUSH_ALLOW_PRIVATE: "${allow}" is neither 1 (allow push endpoints on private addresses) nor 0.`);
    config.allowPrivate = allow === '1';
  }
  return config;
}

