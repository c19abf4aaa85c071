import type { OpsSink } from '../ops/ops.js';
import type { Card } from '../cards/model.js';
import type { Clock } from '../relay/clock.js';
import type { Relay } from '../relay/relay.js';
import type { AsyncChannelStore, OutboxJob, QueuedJob } from '../store/channel-store.js';
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
/** How long stop() lets a post or edit in flight finish and record its result. */
export const STOP_GRACE_MS = 2_000;

export interface OutboxOptions {
  channel: Channel;
  relay: Relay;
  store: AsyncChannelStore;
  clock: Clock;
  /** The first retry after an outage waits this long. */
  backoffMs: number;
  /**
   * Where this channel shows a card (docs/routing.md): undefined for a card it does not show,
   * null for its configured chat, or the chat a route names. Its configured chat by default.
   */
  chatOf?: (card: Card) => string | null | undefined;
  log?: (line: string) => void;
  /** Told of every attempt the platform did not take (the log line above comes once per doubling). */
  ops?: OpsSink;
}

export class Outbox {
  private timer: unknown;
  /** True while deliver()'s loop runs: reading the next job, or sending it. */
  private running = false;
  /** deliver() was asked again while the loop ran: it reads the queue once more before it rests. */
  private again = false;
  /** The loop in flight, so stop() can let a job finish writing its result. */
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** Counts the times the loop came to rest (idle() must not miss one while it reads the queue). */
  private rests = 0;

  constructor(private readonly options: OutboxOptions) {}

  private get id() {
    return this.options.channel.id;
  }

  /**
   * The jobs a card event asks of this channel (none when its route leaves the card out).
   * Only reads: the caller queues the jobs of an event-loop turn's events together, in order.
   */
  async jobsFor(card: Card): Promise<QueuedJob[]> {
    if (!this.shows(card)) return [];
    const now = this.options.clock.now();
    if (card.status === 'pending') return [{ channel: this.id, cardId: card.id, action: 'post', dueAt: now }];
    // A message already closed needs no edit. Read before the turn's jobs are queued, which no
    // queueing changes; a closing edit done meanwhile makes the queued one drop itself (run()).
    if ((await this.options.store.messageOf(this.id, card.id))?.closed === true) return [];
    return [{ channel: this.id, cardId: card.id, action: 'close', dueAt: now }];
  }

  /**
   * After a start: posts the open cards this channel never showed and closes the messages
   * of cards that closed while the relay was down (queued jobs are kept as they are).
   */
  async recover(pending: Card[]): Promise<void> {
    const { store, clock, relay } = this.options;
    const now = clock.now();
    const routed = pending.filter((card) => this.shows(card));
    const shown = await Promise.all(routed.map((card) => store.messageOf(this.id, card.id)));
    const posts = routed.filter((_, i) => !shown[i]).map((card): QueuedJob => ({ channel: this.id, cardId: card.id, action: 'post', dueAt: now }));
    if (posts.length) await store.enqueueAll(posts);
    const closes: QueuedJob[] = [];
    for (const cardId of await store.openCards(this.id)) {
      if ((await relay.find(cardId))?.status !== 'pending') closes.push({ channel: this.id, cardId, action: 'close', dueAt: now });
    }
    if (closes.length) await store.enqueueAll(closes);
    this.deliver();
  }

  /**
   * Stops delivering. A post or edit in flight gets STOP_GRACE_MS to finish and record its
   * result (else it is tried again after the next start, so a message may then show twice).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.options.clock.clearTimer(this.timer);
    this.rest();
    const { clock } = this.options;
    let timer: unknown;
    await Promise.race([this.inFlight, new Promise((resolve) => (timer = clock.setTimer(() => resolve(undefined), STOP_GRACE_MS)))]);
    clock.clearTimer(timer);
    this.abandoned = true;
  }

  private shows(card: Card): boolean {
    return this.chatOf(card) !== undefined;
  }

  private chatOf(card: Card): string | null | undefined {
    return this.options.chatOf ? this.options.chatOf(card) : null;
  }

  /** Set once stop() returned: the store may be closed, so nothing is written any more. */
  private abandoned = false;

  /** Delivers again after stop(): this node holds the channels again (several nodes, see service.ts). */
  resume(): void {
    this.stopped = false;
    this.abandoned = false;
  }

  /** Resolves when no job is due now and none is in flight (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const rests = this.rests;
      if (!this.running) {
        const due = await this.dueJob();
        // The loop came to rest while the queue was read: read it again.
        if (this.rests !== rests) continue;
        if (!this.running && !due) return;
      }
      return new Promise((resolve) => this.idleWaiters.push(resolve));
    }
  }

  /**
   * Runs the oldest job when it is due, else arms a timer for it. Jobs go in order, so a
   * failed one (its due time moved to the retry) pauses the whole channel: no separate pause.
   * One loop at a time reads and sends (the store answers asynchronously): a call while it
   * runs makes it read the queue once more before it rests, so a job queued meanwhile is seen.
   */
  deliver(): void {
    if (this.stopped) return;
    this.again = true;
    if (this.running) return;
    this.running = true;
    this.inFlight = this.loop().finally(() => {
      this.running = false;
      this.rest();
    });
  }

  private async loop(): Promise<void> {
    while (this.again && !this.stopped) {
      this.again = false;
      this.options.clock.clearTimer(this.timer);
      try {
        const job = await this.options.store.next(this.id);
        if (this.stopped) return;
        const wait = job ? job.dueAt - this.options.clock.now() : 0;
        if (job && wait <= 0) {
          await this.run(job);
          this.again = true;
          continue;
        }
        if (job) this.timer = this.options.clock.setTimer(() => this.deliver(), wait);
      } catch (err) {
        // The store did not answer (a database restarting; a platform's failure is run()'s):
        // look again after the first back-off rather than at once.
        if (this.stopped) return;
        this.log(`cannot read or write the outbox (${(err as Error)?.message ?? String(err)}); trying again in ${seconds(this.options.backoffMs)}`);
        this.timer = this.options.clock.setTimer(() => this.deliver(), this.options.backoffMs);
        return;
      }
    }
  }

  /** The loop rests (or stopped): idle() waiters go on. */
  private rest(): void {
    this.rests++;
    this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  private async dueJob(): Promise<OutboxJob | undefined> {
    const job = await this.options.store.next(this.id);
    return job && job.dueAt <= this.options.clock.now() ? job : undefined;
  }

  private async run(job: OutboxJob): Promise<void> {
    const { channel, relay, store } = this.options;
    try {
      const card = await relay.find(job.cardId);
      if (job.action === 'post') {
        // A card that closed before its message went out needs no message (nor an edit).
        if (!card || card.status !== 'pending' || (await store.messageOf(this.id, job.cardId))) {
          await store.done(job);
          return;
        }
        const ref = await this.timed(channel.post(card, this.chatOf(card) ?? undefined));
        if (this.abandoned) return;
        await store.posted(this.id, card.id, ref);
        if ((await relay.find(card.id))?.status !== 'pending') await store.enqueue(this.id, card.id, 'close', this.options.clock.now());
        return;
      }
      const message = await store.messageOf(this.id, job.cardId);
      if (!card || !message || message.closed) {
        // Posted later? The post job (still queued) sees the card closed and drops itself.
        await store.done(job);
        return;
      }
      await this.timed(channel.close(card, { chat: message.chat, message: message.message }));
      if (this.abandoned) return;
      await store.closed(this.id, card.id);
    } catch (err) {
      if (!this.abandoned) await this.failed(job, err);
    }
  }

  /**
   * A hung platform must not hold the channel's queue: after SEND_TIMEOUT_MS it counts as
   * down, and the job is tried again after its back-off (a late answer to the abandoned call
   * is ignored). On the relay's clock (real time in the relay, which never holds the process
   * open), so a test moves through the timeout instead of waiting 30 s.
   */
  private timed<T>(work: Promise<T>): Promise<T> {
    const { clock } = this.options;
    let timer: unknown;
    const timeout = new Promise<never>((_, reject) => {
      timer = clock.setTimer(() => reject(new ChannelSendError('unavailable', `no response in ${SEND_TIMEOUT_MS / 1000} s`)), SEND_TIMEOUT_MS);
    });
    return Promise.race([work, timeout]).finally(() => clock.clearTimer(timer));
  }

  private async failed(job: OutboxJob, err: unknown): Promise<void> {
    const now = this.options.clock.now();
    const what = `${job.action} of card ${job.cardId}`;
    const error = err instanceof ChannelSendError ? err : new ChannelSendError('unavailable', (err as Error)?.message ?? String(err));
    const report = { platform: this.id, cardId: job.cardId, action: job.action, attempts: job.attempts + 1, reason: error.message };
    if (error.kind === 'rejected') this.options.ops?.emit('chat.refused', report);
    else this.options.ops?.emit('chat.failed', report, { quiet: true });
    if (error.kind === 'rejected') {
      // A closing edit refused for good (the message was deleted) is not tried at every start.
      if (job.action === 'close') await this.options.store.closed(this.id, job.cardId);
      else await this.options.store.done(job);
      this.log(`gave up on the ${what}: ${error.message}`);
      return;
    }
    if (error.kind === 'rate_limited') {
      const wait = Math.max(error.retryAfterMs ?? 1000, 0);
      await this.options.store.retry(job, now + wait, error.message);
      if (job.attempts === 0) this.log(`rate limited; the ${what} waits ${seconds(wait)} as asked`);
      return;
    }
    const wait = Math.min(this.options.backoffMs * 2 ** job.attempts, MAX_BACKOFF_MS);
    await this.options.store.retry(job, now + wait, error.message);
    // One line when it starts failing, then one per doubling: an outage must not flood the log.
    if ((job.attempts & (job.attempts + 1)) === 0) this.log(`cannot deliver the ${what} (${error.message}); trying again in ${seconds(wait)}`);
  }

  private log(line: string): void {
    (this.options.log ?? console.warn)(`${this.id}: ${line}`);
  }
}

const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);
