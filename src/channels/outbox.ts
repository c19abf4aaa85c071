import type { Card } from '../cards/model.js';
import type { Clock } from '../relay/clock.js';
import type { Relay } from '../relay/relay.js';
import type { ChannelStore, OutboxJob } from '../store/channel-store.js';
import { ChannelSendError, type Channel } from './channel.js';

// Delivers one channel's posts and closing edits from the durable outbox, one at a time
// and in order (a card's post before its edit). A rate limit pauses the channel for the
// time the platform asked; an outage backs off (doubling, at most MAX_BACKOFF_MS) and tries
// again, forever: a card stays answerable on every other surface meanwhile, and its message
// appears (or is closed) once the platform is back. Only a refusal for good (a deleted
// message, an unknown chat) drops a job, with a log line.

export const MAX_BACKOFF_MS = 5 * 60_000;
/** A post or edit the platform has not answered in this long counts as an outage. */
export const SEND_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 2_000;

export interface OutboxOptions {
  channel: Channel;
  relay: Relay;
  store: ChannelStore;
  clock: Clock;
  /** The first retry after an outage waits this long. */
  backoffMs: number;
  /** Which cards this channel shows (its route); all by default. */
  routes?: (card: Card) => boolean;
  log?: (line: string) => void;
}

export class Outbox {
  private timer: unknown;
  private running = false;
  /** The job in flight, so stop() can let it finish writing its result. */
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(private readonly options: OutboxOptions) {}

  private get id() {
    return this.options.channel.id;
  }

  /** Queues what a card event asks of this channel; deliver() then sends it. */
  onCard(card: Card): void {
    if (!(this.options.routes?.(card) ?? true)) return;
    const now = this.options.clock.now();
    if (card.status === 'pending') this.options.store.enqueue(this.id, card.id, 'post', now);
    else if (this.options.store.messageOf(this.id, card.id)?.closed !== true) this.options.store.enqueue(this.id, card.id, 'close', now);
  }

  /**
   * After a start: posts the open cards this channel never showed and closes the messages
   * of cards that closed while the relay was down (queued jobs are kept as they are).
   */
  async recover(pending: Card[]): Promise<void> {
    const now = this.options.clock.now();
    for (const card of pending) {
      if ((this.options.routes?.(card) ?? true) && !this.options.store.messageOf(this.id, card.id)) {
        this.options.store.enqueue(this.id, card.id, 'post', now);
      }
    }
    for (const cardId of this.options.store.openCards(this.id)) {
      if ((await this.options.relay.find(cardId))?.status !== 'pending') this.options.store.enqueue(this.id, cardId, 'close', now);
    }
    this.deliver();
  }

  /**
   * Stops delivering. A post or edit in flight gets STOP_GRACE_MS to finish and record its
   * result (else it is tried again after the next start, so a message may then show twice).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.options.clock.clearTimer(this.timer);
    this.idleWaiters.splice(0).forEach((resolve) => resolve());
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.inFlight, new Promise((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
    clearTimeout(timer);
    this.abandoned = true;
  }

  /** Set once stop() returned: the store may be closed, so nothing is written any more. */
  private abandoned = false;

  /** Resolves when no job is due now and none is in flight (tests). */
  idle(): Promise<void> {
    if (!this.running && !this.dueJob()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Runs the oldest job when it is due, else arms a timer for it. Jobs go in order, so a
   * failed one (its due time moved to the retry) pauses the whole channel: no separate pause.
   */
  deliver(): void {
    if (this.running || this.stopped) return;
    this.options.clock.clearTimer(this.timer);
    const job = this.options.store.next(this.id);
    const wait = job ? job.dueAt - this.options.clock.now() : 0;
    if (job && wait <= 0) {
      this.running = true;
      this.inFlight = this.run(job).finally(() => {
        this.running = false;
        this.deliver();
      });
      return;
    }
    if (job) this.timer = this.options.clock.setTimer(() => this.deliver(), wait);
    this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  private dueJob(): OutboxJob | undefined {
    const job = this.options.store.next(this.id);
    return job && job.dueAt <= this.options.clock.now() ? job : undefined;
  }

  private async run(job: OutboxJob): Promise<void> {
    const { channel, relay, store } = this.options;
    try {
      const card = await relay.find(job.cardId);
      if (job.action === 'post') {
        // A card that closed before its message went out needs no message (nor an edit).
        if (!card || card.status !== 'pending' || store.messageOf(this.id, job.cardId)) {
          store.done(job);
          return;
        }
        const ref = await this.timed(channel.post(card));
        if (this.abandoned) return;
        store.posted(this.id, card.id, ref);
        if ((await relay.find(card.id))?.status !== 'pending') store.enqueue(this.id, card.id, 'close', this.options.clock.now());
        return;
      }
      const message = store.messageOf(this.id, job.cardId);
      if (!card || !message || message.closed) {
        // Posted later? The post job (still queued) sees the card closed and drops itself.
        store.done(job);
        return;
      }
      await this.timed(channel.close(card, { chat: message.chat, message: message.message }));
      if (this.abandoned) return;
      store.closed(this.id, card.id);
    } catch (err) {
      if (!this.abandoned) this.failed(job, err);
    }
  }

  /**
   * A hung platform must not hold the channel's queue: after SEND_TIMEOUT_MS it counts as
   * down. Real time, not the relay's clock: this is about the network, not about deadlines.
   */
  private timed<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ChannelSendError('unavailable', `no response in ${SEND_TIMEOUT_MS / 1000} s`)), SEND_TIMEOUT_MS);
      timer.unref();
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  private failed(job: OutboxJob, err: unknown): void {
    const now = this.options.clock.now();
    const what = `${job.action} of card ${job.cardId}`;
    const error = err instanceof ChannelSendError ? err : new ChannelSendError('unavailable', (err as Error)?.message ?? String(err));
    if (error.kind === 'rejected') {
      // A closing edit refused for good (the message was deleted) is not tried at every start.
      if (job.action === 'close') this.options.store.closed(this.id, job.cardId);
      else this.options.store.done(job);
      this.log(`gave up on the ${what}: ${error.message}`);
      return;
    }
    if (error.kind === 'rate_limited') {
      const wait = Math.max(error.retryAfterMs ?? 1000, 0);
      this.options.store.retry(job, now + wait, error.message);
      if (job.attempts === 0) this.log(`rate limited; the ${what} waits ${seconds(wait)} as asked`);
      return;
    }
    const wait = Math.min(this.options.backoffMs * 2 ** job.attempts, MAX_BACKOFF_MS);
    this.options.store.retry(job, now + wait, error.message);
    // One line when it starts failing, then one per doubling: an outage must not flood the log.
    if ((job.attempts & (job.attempts + 1)) === 0) this.log(`cannot deliver the ${what} (${error.message}); trying again in ${seconds(wait)}`);
  }

  private log(line: string): void {
    (this.options.log ?? console.warn)(`${this.id}: ${line}`);
  }
}

const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);
