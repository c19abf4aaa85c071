// An in-memory queue of push deliveries that never blocks its producer: `add` returns at
// once, a few workers send concurrently, a failure that may pass is tried again after an
// exponential backoff, and a full queue drops its oldest job rather than growing without
// bound. Nothing here is durable: a push that is still queued when the relay stops is lost,
// which is fine for notifications (the card itself is durable and on the page).

export interface QueueTiming {
  /** Sends in flight at once. */
  concurrency: number;
  /** Further attempts after the first one fails with a retryable error. */
  retries: number;
  /** The first retry waits this long; each further one twice as long, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Jobs waiting beyond this count push the oldest out. */
  maxQueued: number;
}

/** What one attempt came to: done (sent, or given up for good), or worth another try. */
const DROP_LINE_EVERY_MS = 10_000;

export type AttemptResult = { retry: false } | { retry: true; reason: string };

export interface QueueJob {
  /** For log lines; only called when a line is written. */
  label(): string;
  attempt(signal: AbortSignal): Promise<AttemptResult>;
}

interface Entry {
  job: QueueJob;
  tries: number;
}

export class PushQueue {
  private readonly waiting: Entry[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopper = new AbortController();
  private running = 0;
  private readonly idleWaiters: (() => void)[] = [];
  /** Drops since the last line about them: a dead push service must not flood the log (or the event loop). */
  private drops = 0;
  private lastDropLine = -Infinity;

  constructor(
    private readonly timing: QueueTiming,
    private readonly log: (line: string) => void = (line) => console.warn(line),
  ) {}

  add(job: QueueJob): void {
    if (this.stopper.signal.aborted) return;
    this.enqueue({ job, tries: 0 });
  }

  /** Jobs waiting, being sent or waiting for a retry. */
  get size(): number {
    return this.waiting.length + this.running + this.timers.size;
  }

  /** Resolves when nothing is waiting, in flight or scheduled (tests and shutdown). */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drops what is queued and aborts what is in flight. */
  stop(): void {
    this.stopper.abort();
    this.waiting.length = 0;
    this.timers.forEach((t) => clearTimeout(t));
    this.timers.clear();
    this.settle();
  }

  private enqueue(entry: Entry): void {
    this.waiting.push(entry);
    if (this.waiting.length > this.timing.maxQueued) {
      const dropped = this.waiting.shift()!;
      this.noteDrop(dropped.job);
    }
    this.pump();
  }

  private noteDrop(job: QueueJob): void {
    this.drops += 1;
    const now = Date.now();
    if (now - this.lastDropLine < DROP_LINE_EVERY_MS) return;
    this.log(`push: queue full, dropped ${this.drops === 1 ? job.label() : `${this.drops} pushes, the last ${job.label()}`}`);
    this.drops = 0;
    this.lastDropLine = now;
  }

  private pump(): void {
    while (this.running < this.timing.concurrency && this.waiting.length > 0) {
      const entry = this.waiting.shift()!;
      this.running++;
      void this.run(entry).finally(() => {
        this.running--;
        this.pump();
        this.settle();
      });
    }
  }

  private async run(entry: Entry): Promise<void> {
    entry.tries++;
    let result: AttemptResult;
    try {
      result = await entry.job.attempt(this.stopper.signal);
    } catch (err) {
      result = { retry: true, reason: (err as Error).message };
    }
    if (!result.retry || this.stopper.signal.aborted) return;
    if (entry.tries > this.timing.retries) {
      this.log(`push: gave up on ${entry.job.label()} after ${entry.tries} attempts (${result.reason})`);
      return;
    }
    const delay = Math.min(this.timing.backoffMs * 2 ** (entry.tries - 1), this.timing.maxBackoffMs);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.enqueue(entry);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private settle(): void {
    if (this.size > 0) return;
    this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }
}
