import { RelayError } from '../errors.js';
import type { Clock } from '../relay/clock.js';
import { lateForSession } from '../relay/delivery.js';
import type { Relay } from '../relay/relay.js';
import type { AsyncSessionStore, SessionPatch } from '../store/session-store.js';
import type { Session, SessionStatus, TranscriptEntry } from './model.js';
import type { Runner } from './runner.js';

// The session manager's bookkeeping: each session's queue of changes, its stored record,
// transcript and status, and the runners live on this node.
//
// The store is asynchronous (PostgreSQL serves it so): every change of a session's record,
// transcript and provider state runs in that session's own queue (serial()), so changes keep
// the order they were made in, and a read-then-write (is it idle? then it runs) is one step
// no other change of the session gets between.

export interface Live {
  runner: Runner;
  controller: AbortController;
  lastActivity: number;
  /** Cards the turn waits on right now (ask() calls under way). */
  asking: number;
}

export interface Launching {
  held: boolean;
  dropped: boolean;
}

export const CLOSED: readonly SessionStatus[] = ['stopped', 'failed'];

export interface SessionBookOptions {
  relay: Relay;
  store: AsyncSessionStore;
  clock: Clock;
  /** Where a change made in the background that failed is told. */
  warn: (line: string) => void;
}

export class SessionBook {
  /** This node's runners, by session id. */
  readonly live = new Map<string, Live>();
  /**
   * Sessions this node is starting or resuming whose runner is not live yet. Their lease is
   * this node's from the first step, so adopt() must skip them here too: it would find them
   * active, not live and held by this very node, and run a second runner (a turn run twice).
   * `held`: this node has taken the lease (until then the lease round must not take it either:
   * adopt() would not learn that another node held it). `dropped`: another node took the
   * lease meanwhile, so no runner is made here.
   */
  readonly launching = new Map<string, Launching>();
  /** Each session's queue of changes: its last one (see serial()). */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly options: SessionBookOptions) {}

  /**
   * Runs `change` after every change queued for the session before it: a session's changes
   * are stored in the order they were made, and each sees the ones before it. A change never
   * waits on another change of its own session (that would wait for ever).
   */
  serial<T>(id: string, change: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(change);
    this.queues.set(id, next);
    const forget = () => {
      if (this.queues.get(id) === next) this.queues.delete(id);
    };
    next.then(forget, forget);
    return next;
  }

  /** Runs `work` with the session marked as being launched on this node (see `launching`). */
  async whileLaunching<T>(id: string, work: (mark: Launching) => Promise<T>): Promise<T> {
    const mark = { held: false, dropped: false };
    this.launching.set(id, mark);
    try {
      return await work(mark);
    } finally {
      this.launching.delete(id);
    }
  }

  /** Sessions whose runner is on this node, or is being made here under this node's lease. */
  ownIds(): string[] {
    const launching = [...this.launching].filter(([, mark]) => mark.held).map(([id]) => id);
    return [...new Set([...this.live.keys(), ...launching])];
  }

  /** A change a runner asked for without waiting (a log line, a heartbeat, its state): queued, failures told. */
  background(id: string, what: string, change: () => Promise<unknown>): void {
    this.serial(id, change).catch((err: unknown) => this.options.warn(`askrelay: session ${id}: could not store ${what}: ${(err as Error)?.message ?? String(err)}`));
  }

  /** A runner made for a session that was stopped meanwhile: not live, and stopped. */
  async dropLaunched(id: string, live: Live): Promise<void> {
    if (this.live.get(id) === live) this.live.delete(id);
    await stopRunner(live);
  }

  /** Resolves once the changes queued for the session so far are done (stored or failed). */
  async settled(id: string): Promise<void> {
    await this.queues.get(id)?.catch(() => {});
  }

  /** Resolves once every change queued so far is done. */
  async drained(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.catch(() => {})));
  }

  async record(id: string): Promise<Session> {
    const session = await this.options.store.get(id);
    if (!session) throw new RelayError('not_found', `No session "${id}".`);
    return session;
  }

  async withTranscript(id: string): Promise<Session> {
    const session = await this.record(id);
    return { ...session, transcript: await this.options.store.transcript(id) };
  }

  /** The stored status (undefined for a session the store does not have). */
  async status(id: string): Promise<SessionStatus | undefined> {
    return (await this.options.store.get(id))?.status;
  }

  async isLive(id: string): Promise<boolean> {
    return this.live.has(id) && !CLOSED.includes((await this.status(id)) ?? 'stopped');
  }

  /** Activity: the watchdog's clock restarts, and a stuck turn is running again. */
  touch(id: string): void {
    const live = this.live.get(id);
    if (live) live.lastActivity = this.options.clock.now();
    const asking = live?.asking;
    this.background(id, 'its status', async () => {
      const status = await this.status(id);
      // An SDK that keeps reporting while the turn waits on a card (Copilot's runtime does)
      // leaves it waiting: a waiting turn is never running, so never stuck.
      if (status === 'stuck' || (status === 'waiting' && !asking)) await this.setStatus(id, 'running');
    });
  }

  async setStatus(id: string, status: SessionStatus): Promise<void> {
    if ((await this.status(id)) !== status) await this.update(id, { status });
  }

  async update(id: string, patch: SessionPatch): Promise<void> {
    const next = await this.options.store.update(id, { ...patch, updatedAt: new Date(this.options.clock.now()).toISOString() });
    if (next) this.options.relay.events.emit('session.updated', next);
  }

  async log(id: string, role: TranscriptEntry['role'], text: string, cardId?: string): Promise<void> {
    const entry: TranscriptEntry = { at: new Date(this.options.clock.now()).toISOString(), role, text, ...(cardId ? { cardId } : {}) };
    await this.options.store.append(id, entry);
    const live = this.live.get(id);
    if (live) live.lastActivity = this.options.clock.now();
    await this.update(id, {});
  }

  /**
   * Cancels the session's pending cards: no runner will read their answers; nor the late
   * answers still waiting for a turn to end, which stay undelivered.
   */
  async cancelPending(id: string): Promise<void> {
    const { relay } = this.options;
    for (const card of await relay.list({ sessionId: id })) {
      if (card.status === 'pending') await relay.cancel(card.id);
      else if (lateForSession(card)) await relay.undelivered(card);
    }
  }
}

/** Ends a runner's SDK work: its signal aborted, then stopped, a failure to stop ignored. */
export async function stopRunner(live: Live | undefined): Promise<void> {
  live?.controller.abort();
  await live?.runner.stop().catch(() => {});
}
