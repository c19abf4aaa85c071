// An in-memory queue of push deliveries that never blocks its producer: `add` returns at
// once, a few workers send concurrently, and a full queue drops its oldest job rather than
// growing without bound. Nothing here is durable: a push that is still queued when the relay
// stops is lost, which is fine for notifications (the card itself is durable and on the page).
//
// Back-off is per push service, not per push: once a service fails (5xx, 429, a timeout),
// every push to it waits until its back-off has passed, then one push goes first as a probe.
// A success lets the rest go; a failure doubles the wait. So a service that is down costs one
// request per back-off, however many cards and subscriptions wait for it (each push is
// encrypted only when it is sent), and the pushes to other services go on meanwhile.

export interface QueueTiming {
  /** Sends in flight at once. */
  concurrency: number;
  /** Further attempts of one push after its first one fails with a retryable error. */
  retries: number;
  /** A service's first failure holds its pushes this long; each further one twice as long, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Jobs waiting beyond this count push the oldest out. */
  maxQueued: number;
}

const DROP_LINE_EVERY_MS = 10_000;

/** What one attempt came to: done (sent, or given up for good), or worth another try. */
export type AttemptResult = { retry: false; untried?: true } | { retry: true; reason: string };

export interface QueueJob {
  /** The push service it goes to (its origin): failures there hold every job for it. */
  service: string;
  /** For log lines; only called when a line is written. */
  label(): string;
  attempt(signal: AbortSignal): Promise<AttemptResult>;
}

/**
 * The pushes of one card event to one push service, made into jobs only when the service
 * may be sent to: a service backing off holds one of these per card event, not one job per
 * subscription.
 */
export interface QueueGroup {
  service: string;
  /** How many pushes it holds (what it counts for against maxQueued). */
  size: number;
  label(): string;
  jobs(): QueueJob[];
}

interface Entry {
  job: QueueJob | QueueGroup;
  tries: number;
}

const isGroup = (job: QueueJob | QueueGroup): job is QueueGroup => 'jobs' in job;
const sizeOf = (job: QueueJob | QueueGroup) => (isGroup(job) ? job.size : 1);

/** A service that failed: held until `until`, then one probe at a time until one succeeds. */
interface Backoff {
  failures: number;
  until: number;
  probing: boolean;
}

export class PushQueue {
  /** Waiting jobs by push service, each list oldest first; `seq` orders them across services. */
  private readonly waiting = new Map<string, (Entry & { seq: number })[]>();
  private waitingCount = 0;
  private seq = 0;
  private readonly backoffs = new Map<string, Backoff>();
  /** Wakes the queue when the earliest back-off ends. */
  private wake?: { timer: NodeJS.Timeout; at: number };
  private readonly stopper = new AbortController();
  private running = 0;
  private readonly idleWaiters: (() => void)[] = [];
  /** Drops since the last line about them: a dead push service must not flood the log (or the event loop). */
  private drops = 0;
  private lastDropLine = -Infinity;

  constructor(
    private readonly timing: QueueTiming,
    private readonly log: (line: string) => void = (line) => console.warn(line),
    /** Each attempt a service did not take (no answer, or one that asks to try again). */
    private readonly failed: (service: string, reason: string) => void = () => {},
  ) {}

  /** A push, or a card event's pushes to one service (made into jobs when they may go). */
  add(job: QueueJob | QueueGroup): void {
    if (this.stopper.signal.aborted || sizeOf(job) === 0) return;
    this.hold({ job, tries: 0 }, 'last');
    while (this.waitingCount > this.timing.maxQueued) this.dropOldest();
    this.pump();
  }

  /** Jobs waiting for a slot or for their service's back-off, and jobs being sent. */
  get backlog(): { waiting: number; sending: number } {
    return { waiting: this.waitingCount, sending: this.running };
  }

  /** Jobs waiting (for a slot or for their service's back-off) or being sent. */
  get size(): number {
    return this.waitingCount + this.running;
  }

  /** Resolves when nothing is waiting or in flight (tests and shutdown). */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drops what is queued and aborts what is in flight. */
  stop(): void {
    this.stopper.abort();
    this.waiting.clear();
    this.waitingCount = 0;
    if (this.wake) clearTimeout(this.wake.timer);
    this.wake = undefined;
    this.settle();
  }

  /** Last in line with a new place, or first in line keeping `seq` (its place among the other services'). */
  private hold(entry: Entry, where: 'first' | 'last', seq?: number): void {
    const list = this.waiting.get(entry.job.service) ?? [];
    this.waiting.set(entry.job.service, list);
    if (where === 'last') list.push({ ...entry, seq: this.seq++ });
    else list.unshift({ ...entry, seq: seq ?? (list[0]?.seq ?? this.seq) - 1 });
    this.waitingCount += sizeOf(entry.job);
  }

  private takeEntry(service: string): (Entry & { seq: number }) | undefined {
    const list = this.waiting.get(service);
    const entry = list?.shift();
    if (!entry) return undefined;
    if (list!.length === 0) this.waiting.delete(service);
    this.waitingCount -= sizeOf(entry.job);
    return entry;
  }

  /** The oldest waiting job (or card event's pushes to one service), whichever service it is for. */
  private dropOldest(): void {
    let oldest: string | undefined;
    for (const [service, list] of this.waiting) if (oldest === undefined || list[0].seq < this.waiting.get(oldest)![0].seq) oldest = service;
    if (oldest !== undefined) this.noteDrop(this.takeEntry(oldest)!.job);
  }

  private noteDrop(job: QueueJob | QueueGroup): void {
    const alone = this.drops === 0;
    this.drops += sizeOf(job);
    const now = Date.now();
    if (now - this.lastDropLine < DROP_LINE_EVERY_MS) return;
    // Its label says what it held (one push, or a card event's pushes to one service).
    this.log(`push: queue full, dropped ${alone ? job.label() : `${this.drops} pushes, the last ${job.label()}`}`);
    this.drops = 0;
    this.lastDropLine = now;
  }

  /** Whether a job for `service` may go now; a service past its back-off lets one probe go. */
  private mayGo(service: string, now: number): boolean {
    const backoff = this.backoffs.get(service);
    return !backoff || (!backoff.probing && backoff.until <= now);
  }

  /** Fills the free slots, oldest job first among the services that may be sent to. */
  private pump(): void {
    const now = Date.now();
    while (this.running < this.timing.concurrency) {
      let next: string | undefined;
      for (const [service, list] of this.waiting) {
        if (this.mayGo(service, now) && (next === undefined || list[0].seq < this.waiting.get(next)![0].seq)) next = service;
      }
      if (next === undefined) break;
      const { job, tries, seq } = this.takeEntry(next)!;
      if (isGroup(job)) {
        // Its service may be sent to: its pushes take its place, in order, first in line.
        for (const one of job.jobs().reverse()) this.hold({ job: one, tries: 0 }, 'first', seq);
        continue;
      }
      const backoff = this.backoffs.get(next);
      if (backoff) backoff.probing = true;
      this.running++;
      void this.run({ job, tries }).finally(() => {
        this.running--;
        this.pump();
        this.settle();
      });
    }
    this.scheduleWake(now);
  }

  private async run(entry: Entry & { job: QueueJob }): Promise<void> {
    entry.tries++;
    let result: AttemptResult;
    try {
      result = await entry.job.attempt(this.stopper.signal);
    } catch (err) {
      result = { retry: true, reason: (err as Error).message };
    }
    if (this.stopper.signal.aborted) return;
    const service = entry.job.service;
    if (!result.retry) {
      // Sent (or refused for good by a service that answers): the service works. A push
      // dropped before any request (`untried`) says nothing about its service.
      if (!result.untried) this.backoffs.delete(service);
      return;
    }
    this.failed(service, result.reason);
    const failures = (this.backoffs.get(service)?.failures ?? 0) + 1;
    const delay = Math.min(this.timing.backoffMs * 2 ** (failures - 1), this.timing.maxBackoffMs);
    this.backoffs.set(service, { failures, until: Date.now() + delay, probing: false });
    if (entry.tries > this.timing.retries) {
      this.log(`push: gave up on ${entry.job.label()} after ${entry.tries} attempts (${result.reason})`);
      return;
    }
    // First in line again: the oldest push goes first once the service is back.
    this.hold(entry, 'first');
  }

  /** One timer, for the earliest back-off that holds a waiting job. */
  private scheduleWake(now: number): void {
    let at = Infinity;
    for (const service of this.waiting.keys()) {
      const backoff = this.backoffs.get(service);
      if (backoff && !backoff.probing && backoff.until > now) at = Math.min(at, backoff.until);
    }
    if (this.wake && this.wake.at <= at) return;
    if (this.wake) clearTimeout(this.wake.timer);
    this.wake = undefined;
    if (at === Infinity) return;
    const timer = setTimeout(() => {
      this.wake = undefined;
      this.pump();
    }, at - now);
    timer.unref();
    this.wake = { timer, at };
  }

  private settle(): void {
    if (this.size > 0) return;
    this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }
}
