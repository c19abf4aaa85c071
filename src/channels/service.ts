import type { AsyncUserStore } from '../store/user-store.js';
import type { OpsSink } from '../ops/ops.js';
import { Hono } from 'hono';
import type { Card } from '../cards/model.js';
import type { CardAccess } from '../relay/card-access.js';
import { systemClock, type Clock } from '../relay/clock.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { AsyncChannelStore } from '../store/channel-store.js';
import type { Channel, ChannelContext, ChannelFactory } from './channel.js';
import type { ChannelId, ChannelsConfig } from './config.js';
import { Inbox } from './inbox.js';
import { Outbox } from './outbox.js';
import { channelSecrets, redactingChannel, secretRedactor } from './redact.js';
import { toEveryone } from '../routing/match.js';
import { chatIn } from '../routing/rules.js';

// The chat channels switched on in the configuration, wired to the relay: every card event
// goes to each channel's outbox (durable), every tap or reply comes in through its inbox,
// and webhook routes are mounted under /channels/<id>.

export interface ChannelsOptions {
  config: ChannelsConfig;
  /** Builds each configured channel (the composition root passes the real ones; tests may pass a subset). */
  channels: Partial<Record<ChannelId, ChannelFactory>>;
  /** The relay's public address (once it listens) and secret. */
  context: Omit<ChannelContext, 'log' | 'clock'>;
  access: CardAccess;
  audit: AuditWriter;
  store: AsyncChannelStore;
  clock?: Clock;
  log?: (line: string) => void;
  /** Told of every post a platform did not take (see Outbox). */
  ops?: OpsSink;
  /** Told once jobs were queued (several nodes: the node delivering them is told to look). */
  queued?: () => void;
  /** The person a chat user is linked to ("telegram:42" → "ada"; docs/routing.md). */
  people?: Pick<AsyncUserStore, 'nameOfLink'>;
}

/** GET /api/channels: one entry per channel switched on. */
export interface ChannelStatus {
  id: ChannelId;
  /** Where it posts and who may answer. */
  describe: string;
  /** Posts and edits not yet accepted by the platform. */
  queued: number;
  nextAttemptAt?: string;
  /** Why the platform did not take the last attempt (rate limit, outage). */
  lastError?: string;
  attempts?: number;
}

interface Running {
  channel: Channel;
  inbox: Inbox;
  outbox: Outbox;
}

export class Channels {
  private readonly running: Running[] = [];
  private unsubscribe: () => void = () => {};
  /** Card events of this event-loop turn, written to the outboxes in one transaction. */
  private noted: Card[] = [];
  private flushing: NodeJS.Immediate | undefined;
  /**
   * The turns' writes, one after another: a turn's jobs are queued after the previous turn's
   * (the store answers asynchronously, so two writes could otherwise cross and break FIFO).
   */
  private written: Promise<void> = Promise.resolve();
  /** Delivery waits for start(): the relay listens by then, so callback URLs (Mattermost's buttons) are known. */
  private started = false;
  private stopped = false;

  private readonly log: (line: string) => void;

  constructor(private readonly options: ChannelsOptions) {
    const clock = options.clock ?? systemClock;
    // Whatever a platform says passes the redactor before the log, the ops events or the
    // store's lastError hold it (src/channels/redact.ts): every channel's secrets, and the
    // relay's own secret that signs Mattermost's buttons.
    const redact = secretRedactor([...channelSecrets(options.config), options.context.secret]);
    const write = options.log ?? ((line: string) => console.warn(line));
    const log = (line: string) => write(redact(line));
    this.log = log;
    for (const [id, make] of Object.entries(options.channels) as [ChannelId, ChannelFactory][]) {
      const config = options.config[id];
      if (!config) continue;
      const channel = redactingChannel(make(options.config, { ...options.context, clock, log: (line) => log(`${id}: ${line}`) }), redact);
      const providers = config.route?.providers;
      // A card a route names this channel (or one of its chats) for goes there; a card for
      // everyone goes to the configured chat when the channel takes its provider.
      const chatOf = (card: Card): string | null | undefined => {
        const named = chatIn(card.routedTo ?? [], id);
        if (named !== undefined) return named;
        return toEveryone(card) && (!providers || providers.includes(card.provider)) ? null : undefined;
      };
      this.running.push({
        channel,
        inbox: new Inbox({ channel: id, access: options.access, audit: options.audit, store: options.store, answerers: config.answerers, now: () => clock.now(), ...(options.people ? { people: options.people } : {}) }),
        outbox: new Outbox({
          channel,
          relay: options.access.relay,
          store: options.store,
          clock,
          backoffMs: options.config.backoffMs,
          chatOf,
          log,
          ...(options.ops ? { ops: options.ops } : {}),
        }),
      });
    }
  }

  get ids(): ChannelId[] {
    return this.running.map((r) => r.channel.id);
  }

  /** Each channel's outbox as an operator wants to see it: what waits, and why. */
  status(): Promise<ChannelStatus[]> {
    return Promise.all(this.running.map(async ({ channel }) => {
      const jobs = await this.options.store.jobs(channel.id);
      const failing = jobs.find((job) => job.lastError);
      return {
        id: channel.id,
        describe: this.describeOne(channel.id),
        queued: jobs.length,
        ...(jobs[0] ? { nextAttemptAt: new Date(jobs[0].dueAt).toISOString() } : {}),
        ...(failing ? { lastError: failing.lastError!, attempts: failing.attempts } : {}),
      };
    }));
  }

  /** One line per channel for the start-up banner: where it posts, who may answer. */
  describe(): string[] {
    return this.running.map(({ channel }) => `${channel.id}: ${this.describeOne(channel.id)}`);
  }

  private describeOne(id: ChannelId): string {
    const config = this.options.config[id]!;
    const where = 'chat' in config ? `chat ${config.chat}` : `channel ${config.channel}`;
    const who = config.answerers.includes('*') ? 'anyone there may answer' : `${config.answerers.length} may answer`;
    const route = config.route?.providers ? `, cards of ${config.route.providers.join(', ')}` : '';
    return `${where}, ${who}${route}`;
  }

  /**
   * Listens to card events (call before the relay recovers, so cards expired while down are
   * closed). The outbox rows are written once per event-loop turn, in one transaction, after
   * the event: creating and answering a card does not wait for them. A crash in that turn is
   * caught up at the next start (recover() posts and closes what the store says is missing).
   */
  listen(): void {
    if (!this.running.length) return;
    this.unsubscribe = this.options.access.relay.events.subscribe((name, data, remote) => {
      // A closed card's late answer and delivery change nothing its chat messages show.
      if (name === 'session.updated' || name === 'card.late' || name === 'card.delivery') return;
      // The node that made the change queues its jobs (and says so: see deliverNow()).
      if (remote) return;
      this.noted.push(data as Card);
      this.flushing ??= setImmediate(() => void this.flush());
    });
  }

  /** Writes the turn's jobs after the previous turn's, then lets the outboxes deliver them. */
  private flush(): Promise<void> {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    const cards = this.noted.splice(0);
    this.written = this.written.then(async () => {
      try {
        if (cards.length && (await this.write(cards))) this.options.queued?.();
      } catch (err) {
        // Caught up at the next start (recover() posts and closes what the store says is missing).
        this.log(`could not queue what ${cards.length} card event(s) ask of the channels: ${(err as Error)?.message ?? String(err)}`);
      }
      if (this.started && !this.stopped) this.running.forEach(({ outbox }) => outbox.deliver());
    });
    return this.written;
  }

  /**
   * Reads what the jobs depend on first (whether a card's message is closed already), then
   * queues every job of the turn in event order in one transaction.
   */
  private async write(cards: Card[]): Promise<boolean> {
    const perCard = await Promise.all(cards.map((card) => Promise.all(this.running.map(({ outbox }) => outbox.jobsFor(card)))));
    const jobs = perCard.flat(2);
    if (jobs.length) await this.options.store.enqueueAll(jobs);
    return jobs.length > 0;
  }

  /**
   * Catches up with what happened while the relay was down (or while another node held the
   * channels), and starts receiving and posting. With several nodes on one database, only the
   * node holding the channels' lease runs this; the others queue jobs and take webhooks.
   */
  async start(): Promise<void> {
    this.started = true;
    // No channel, no scan: a relay without chat channels starts as fast as before.
    if (!this.running.length) return;
    const pending = await this.options.access.relay.list({ status: 'pending' });
    for (const { channel, inbox, outbox } of this.running) {
      outbox.resume();
      await outbox.recover(pending);
      await channel.start(inbox);
    }
  }

  /** Another node queued jobs: deliver them, when this node delivers. */
  deliverNow(): void {
    if (this.started && !this.stopped) this.running.forEach(({ outbox }) => outbox.deliver());
  }

  /** Another node holds the channels now: stop receiving and posting until start() again. */
  async pause(): Promise<void> {
    this.started = false;
    for (const { channel } of this.running) channel.stop();
    await Promise.all(this.running.map(({ outbox }) => outbox.stop()));
  }

  /** The webhook routes of the channels that have them. */
  routes(): Hono {
    const app = new Hono();
    for (const { channel, inbox } of this.running) {
      const routes = channel.routes?.(inbox);
      if (routes) app.route(`/${channel.id}`, routes);
    }
    return app;
  }

  /** Resolves when every outbox has nothing due (tests). */
  async idle(): Promise<void> {
    if (this.flushing) await new Promise((resolve) => setImmediate(resolve));
    await this.written;
    await Promise.all(this.running.map((r) => r.outbox.idle()));
  }

  /** Stops receiving and delivering; posts in flight get a moment to record their result. */
  async stop(): Promise<void> {
    this.unsubscribe();
    // What the last turn's events asked for is written before the store closes.
    this.stopped = true;
    await this.flush();
    for (const { channel } of this.running) channel.stop();
    await Promise.all(this.running.map(({ outbox }) => outbox.stop()));
  }
}
