import type { OpsSink } from '../ops/ops.js';
import { createHash } from 'node:crypto';
import type { Card } from '../cards/model.js';
import type { RelayEvents } from '../relay/events.js';
import type { PushConfig } from './push-config.js';
import { PushEncryptor } from './push-encryptor.js';
import { PushQueue, type AttemptResult } from './push-queue.js';
import type { AsyncPushSubscriptionStore, PushSubscriptionRecord } from '../store/push-subscription-store.js';
import type { VapidKeys } from './vapid-keys.js';
import { clip } from '../cards/text.js';
import { pushedTo } from './recipients.js';
import { pushServiceName } from './endpoint-policy.js';
import { pushTargetProblem } from './push-target.js';

type WebPush = typeof import('web-push');
let webPush: Promise<WebPush> | undefined;
/** web-push, loaded with the first push there is to send: a relay nobody subscribed to holds none of it. */
const loadWebPush = () => (webPush ??= import('web-push').then((m) => (m as { default?: WebPush }).default ?? m));

// Turns the relay's card events into Web Push messages. A new card sends one notification
// to every subscription it is routed to (recipients.ts: header, question text, and the page
// URL of the card), an escalation to the people it adds; a card that
// closes (answered, skipped, expired, cancelled) sends {type:"close", cardId} so the
// service worker can close the stale notification. The event listener only schedules work:
// encryption and delivery happen later in the queue, so a slow or failing push service
// never delays creating or answering a card.

/** What the service worker receives (JSON, encrypted aes128gcm). */
export type PushPayload =
  | { type: 'card'; cardId: string; title: string; body: string; url: string; expiresAt: string }
  | { type: 'close'; cardId: string };

const TITLE_CHARS = 100;
const BODY_CHARS = 500;
const CLOSE_TTL_SECONDS = 24 * 3600;
const VAPID_VALID_SECONDS = 12 * 3600;
const VAPID_REUSE_MS = 3600 * 1000;

export function cardPayload(card: Card): PushPayload {
  const first = card.questions[0];
  const more = card.questions.length > 1 ? ` (+${card.questions.length - 1} more)` : '';
  return {
    type: 'card',
    cardId: card.id,
    title: clip(first?.header?.trim() || card.title?.trim() || 'A question for you', TITLE_CHARS),
    body: clip(`${first?.text ?? ''}${more}`, BODY_CHARS),
    url: `/#card=${encodeURIComponent(card.id)}`,
    expiresAt: card.expiresAt,
  };
}

/** The Topic header (RFC 8030 §5.4): a close push replaces its card's push while still undelivered. */
export const topicOf = (cardId: string) => createHash('sha256').update(cardId).digest('base64url').slice(0, 32);

export interface PushSenderOptions {
  events: RelayEvents;
  subscriptions: AsyncPushSubscriptionStore;
  vapid: VapidKeys;
  config: PushConfig;
  now?: () => number;
  log?: (line: string) => void;
  /** Told of every push a service did not take (the log's lines are fewer). */
  ops?: OpsSink;
  /**
   * Whether this node sends the pushes (several nodes on one database: the one holding the
   * push lease sends for every node's cards, so each notification goes out once). Default: yes.
   */
  sends?: () => boolean;
}

export class PushSender {
  private readonly queue: PushQueue;
  private readonly origins = new Map<string, string>();
  private readonly refused = new Set<string>();
  private encryptor?: PushEncryptor;
  private readonly unsubscribe: () => void;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly vapidTokens = new Map<string, { authorization: string; until: number }>();
  private stopped = false;
  /** Cards are fanned out one after another, so their pushes queue in the order of their events. */
  private fanning: Promise<void> = Promise.resolve();

  constructor(private readonly options: PushSenderOptions) {
    this.now = options.now ?? Date.now;
    this.log = options.log ?? ((line) => console.warn(line));
    // The metric's label is the push service by name (fcm, mozilla, apple, windows) or `other`:
    // endpoints are the subscribers' choice, and a label per host:port would grow without bound.
    this.queue = new PushQueue(options.config, this.log, (service, reason) => options.ops?.emit('push.failed', { service: pushServiceName(service), reason }, { quiet: true }));
    this.unsubscribe = options.events.subscribe((name, data) => {
      if (name !== 'card.created' && name !== 'card.updated' && name !== 'card.escalated') return;
      const card = data as Card;
      if (name === 'card.updated' && card.status === 'pending') return;
      if (options.sends && !options.sends()) return;
      // Later, not now: the listener runs inside the relay's create/answer call.
      setImmediate(() => this.fanOut(card, name === 'card.escalated'));
    });
  }

  /** Pushes waiting (for a slot, or for their push service's back-off) and being sent. */
  get backlog(): { waiting: number; sending: number } {
    return this.queue.backlog;
  }

  /** Resolves once every queued push was sent, dropped or given up on. */
  idle(): Promise<void> {
    return new Promise((resolve) => setImmediate(() => void this.fanning.then(() => this.queue.idle()).then(resolve)));
  }

  /** Before the store closes: events still scheduled (cards cancelled by the shutdown) are dropped (fanOut checks). */
  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.queue.stop();
    this.encryptor?.stop();
  }

  private fanOut(card: Card, escalated = false): void {
    this.fanning = this.fanning
      .then(() => (this.stopped ? undefined : this.enqueue(card, escalated)))
      // A push is never worth an uncaught exception in the relay.
      .catch((err: unknown) => this.log(`push: could not queue the pushes for card ${card.id}: ${(err as Error).message}`));
  }

  private async enqueue(card: Card, escalated: boolean): Promise<void> {
    const payload: PushPayload = card.status === 'pending' ? cardPayload(card) : { type: 'close', cardId: card.id };
    const ttl =
      payload.type === 'card'
        ? Math.max(0, Math.floor((Date.parse(card.expiresAt) - this.now()) / 1000))
        : CLOSE_TTL_SECONDS;
    if (payload.type === 'card' && ttl === 0) return;
    const json = JSON.stringify(payload);
    const subscriptions = pushedTo(card, await this.options.subscriptions.list(), escalated);
    if (!subscriptions.length) return;
    const webpush = await loadWebPush();
    this.encryptor ??= new PushEncryptor(({ p256dh, auth, json }) => new Uint8Array(webpush.encrypt(p256dh, auth, json, 'aes128gcm').cipherText), this.log);
    const encryptor = this.encryptor;
    const job = (subscription: PushSubscriptionRecord) => {
      // Encrypted (on the worker) for the first attempt, and the same body reused by the retries.
      let body: Promise<Uint8Array> | undefined;
      const encrypted = () => (body ??= encryptor.encrypt({ p256dh: subscription.keys.p256dh, auth: subscription.keys.auth, json }));
      return {
        service: this.serviceOf(subscription.endpoint),
        label: () => `${payload.type} push for card ${card.id} to ${new URL(subscription.endpoint).host}`,
        attempt: (signal: AbortSignal) => this.send(webpush, subscription, payload, ttl, encrypted, signal),
      };
    };
    // One entry per push service: a service backing off holds one per card event.
    const byService = new Map<string, PushSubscriptionRecord[]>();
    for (const subscription of subscriptions) {
      const service = this.serviceOf(subscription.endpoint);
      const group = byService.get(service) ?? [];
      byService.set(service, group);
      group.push(subscription);
    }
    for (const [service, group] of byService) {
      this.queue.add({
        service,
        size: group.length,
        label: () => `${group.length} ${payload.type} push${group.length === 1 ? '' : 'es'} for card ${card.id} to ${new URL(service).host}`,
        jobs: () => group.map(job),
      });
    }
  }

  /** One log line per refused endpoint (while this process runs), not one per card. */
  private refusedOnce(endpoint: string, why: string): void {
    if (this.refused.has(endpoint)) return;
    if (this.refused.size > 10_000) this.refused.clear();
    this.refused.add(endpoint);
    this.log(`push: not sending to ${new URL(endpoint).host}: ${why}; its pushes are dropped`);
  }

  /** The push service (origin) of an endpoint, parsed once per subscription rather than per push. */
  private serviceOf(endpoint: string): string {
    let origin = this.origins.get(endpoint);
    if (origin === undefined) {
      if (this.origins.size > 10_000) this.origins.clear();
      this.origins.set(endpoint, (origin = new URL(endpoint).origin));
    }
    return origin;
  }

  private async send(
    webpush: WebPush,
    subscription: PushSubscriptionRecord,
    payload: PushPayload,
    ttl: number,
    encrypted: () => Promise<Uint8Array>,
    stop: AbortSignal,
  ): Promise<AttemptResult> {
    // Removed (by the page, or after a 410 for an earlier push) while this one waited.
    if (!(await this.options.subscriptions.has(subscription.endpoint))) return { retry: false, untried: true };
    const refused = await pushTargetProblem(subscription.endpoint, this.options.config.allowPrivate);
    if (refused) {
      this.options.ops?.emit('push.failed', { service: pushServiceName(subscription.endpoint), reason: 'private address' }, { quiet: true });
      this.refusedOnce(subscription.endpoint, refused);
      return { retry: false, untried: true };
    }
    let body: Uint8Array;
    try {
      body = await encrypted();
    } catch (err) {
      // A subscription whose keys cannot be used: no retry makes it work, and its service is not to blame.
      this.log(`push: ${new URL(subscription.endpoint).host}: ${(err as Error).message}; this push is dropped`);
      return { retry: false, untried: true };
    }
    // The request web-push's generateRequestDetails builds for aes128gcm (RFC 8030 / 8291 / 8292).
    const response = await fetch(subscription.endpoint, {
      method: 'POST',
      headers: {
        TTL: String(ttl),
        'Content-Type': 'application/octet-stream',
        'Content-Encoding': 'aes128gcm',
        Authorization: this.authorization(webpush, subscription.endpoint),
        Urgency: payload.type === 'card' ? 'high' : 'normal',
        Topic: topicOf(payload.cardId),
      },
      body: body as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.any([stop, AbortSignal.timeout(this.options.config.timeoutMs)]),
    });
    await response.body?.cancel().catch(() => {});
    return this.outcome(subscription, response.status);
  }

  /**
   * The VAPID Authorization for a push service. Signing the token is most of a push's CPU
   * (about 1 ms), so one token, valid 12 hours, serves every push to that origin for an hour.
   */
  private authorization(webpush: WebPush, endpoint: string): string {
    const audience = this.serviceOf(endpoint);
    const now = Date.now();
    const cached = this.vapidTokens.get(audience);
    if (cached && cached.until > now) return cached.authorization;
    const { vapid, config } = this.options;
    const expiration = Math.floor(now / 1000) + VAPID_VALID_SECONDS;
    const { Authorization } = webpush.getVapidHeaders(audience, config.subject, vapid.publicKey, vapid.privateKey, 'aes128gcm', expiration);
    this.vapidTokens.set(audience, { authorization: Authorization, until: now + VAPID_REUSE_MS });
    return Authorization;
  }

  private async outcome(subscription: PushSubscriptionRecord, status: number): Promise<AttemptResult> {
    if (status >= 200 && status < 300) return { retry: false };
    // One the queue tries again it reports itself; these are refusals for good.
    if (!(status === 408 || status === 429 || status >= 500)) this.options.ops?.emit('push.failed', { service: pushServiceName(subscription.endpoint), reason: `HTTP ${status}` }, { quiet: true });
    if (status === 404 || status === 410) {
      // The browser unsubscribed, or the subscription expired: it will never work again.
      await this.options.subscriptions.remove(subscription.endpoint);
      this.log(`push: ${new URL(subscription.endpoint).host} answered ${status}; removed that subscription`);
      return { retry: false };
    }
    if (status === 408 || status === 429 || status >= 500) return { retry: true, reason: `HTTP ${status}` };
    // 400, 401/403 (VAPID refused), 413 (payload too large): trying again changes nothing.
    this.log(`push: ${new URL(subscription.endpoint).host} refused a push with HTTP ${status}`);
    return { retry: false };
  }
}
