import type Database from 'better-sqlite3';
import type { Async } from './store.js';

// The chat channels' durable state: the outbox (posts and closing edits still to make,
// with their next attempt) and the messages made for each card. A job leaves the outbox
// only after the platform accepted it, so a relay that stops or a platform that is down
// loses nothing: the job is tried again at its due time, after a restart too.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS channel_outbox (
  channel   TEXT NOT NULL,
  card_id   TEXT NOT NULL,
  action    TEXT NOT NULL,
  due_at    INTEGER NOT NULL,
  attempts  INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  seq       INTEGER NOT NULL,
  PRIMARY KEY (channel, card_id, action)
);
CREATE INDEX IF NOT EXISTS channel_outbox_order ON channel_outbox (channel, seq);
CREATE TABLE IF NOT EXISTS channel_messages (
  channel  TEXT NOT NULL,
  message  TEXT NOT NULL,
  card_id  TEXT NOT NULL,
  chat     TEXT NOT NULL,
  role     TEXT NOT NULL,
  closed   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (channel, message)
);
CREATE INDEX IF NOT EXISTS channel_messages_card ON channel_messages (channel, card_id, role);
CREATE TABLE IF NOT EXISTS channel_state (
  channel  TEXT NOT NULL,
  key      TEXT NOT NULL,
  value    TEXT NOT NULL,
  PRIMARY KEY (channel, key)
);
`;

export type OutboxAction = 'post' | 'close';

export interface OutboxJob {
  channel: string;
  cardId: string;
  action: OutboxAction;
  dueAt: number;
  attempts: number;
  lastError: string | null;
}

/** What enqueue() takes: a job before it has attempts. */
export type QueuedJob = Pick<OutboxJob, 'channel' | 'cardId' | 'action' | 'dueAt'>;

export interface CardMessage {
  chat: string;
  message: string;
  closed: boolean;
}

export class ChannelStore {
  private readonly stmt;
  private seq: number;

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    this.stmt = {
      add: db.prepare(
        `INSERT INTO channel_outbox (channel, card_id, action, due_at, seq) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (channel, card_id, action) DO NOTHING`,
      ),
      next: db.prepare(
        `SELECT channel, card_id AS cardId, action, due_at AS dueAt, attempts, last_error AS lastError
         FROM channel_outbox WHERE channel = ? ORDER BY seq LIMIT 1`,
      ),
      all: db.prepare(
        `SELECT channel, card_id AS cardId, action, due_at AS dueAt, attempts, last_error AS lastError
         FROM channel_outbox WHERE channel = ? ORDER BY seq`,
      ),
      done: db.prepare('DELETE FROM channel_outbox WHERE channel = ? AND card_id = ? AND action = ?'),
      retry: db.prepare(
        `UPDATE channel_outbox SET due_at = ?, attempts = attempts + 1, last_error = ?
         WHERE channel = ? AND card_id = ? AND action = ?`,
      ),
      maxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM channel_outbox').pluck(),
      link: db.prepare(
        `INSERT INTO channel_messages (channel, message, card_id, chat, role) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (channel, message) DO NOTHING`,
      ),
      cardOf: db.prepare('SELECT card_id FROM channel_messages WHERE channel = ? AND message = ?').pluck(),
      messageOf: db.prepare(
        `SELECT chat, message, closed FROM channel_messages WHERE channel = ? AND card_id = ? AND role = 'card'`,
      ),
      markClosed: db.prepare(`UPDATE channel_messages SET closed = 1 WHERE channel = ? AND card_id = ? AND role = 'card'`),
      recall: db.prepare('SELECT value FROM channel_state WHERE channel = ? AND key = ?').pluck(),
      remember: db.prepare(
        `INSERT INTO channel_state (channel, key, value) VALUES (?, ?, ?)
         ON CONFLICT (channel, key) DO UPDATE SET value = excluded.value`,
      ),
      openCards: db.prepare(`SELECT card_id FROM channel_messages WHERE channel = ? AND role = 'card' AND closed = 0`).pluck(),
    };
    this.seq = this.stmt.maxSeq.get() as number;
  }

  /** Runs `work` in one transaction (one commit for a batch of enqueues). */
  batch(work: () => void): void {
    this.db.transaction(work)();
  }

  /** Queues a job unless the same one is queued already (a restart re-queues safely). */
  enqueue(channel: string, cardId: string, action: OutboxAction, dueAt: number): void {
    this.stmt.add.run(channel, cardId, action, dueAt, ++this.seq);
  }

  /**
   * The channel's oldest job: jobs go out in the order queued, and one that failed holds the
   * ones behind it until its retry (an outage or a rate limit is the whole channel's).
   */
  next(channel: string): OutboxJob | undefined {
    return this.stmt.next.get(channel) as OutboxJob | undefined;
  }

  jobs(channel: string): OutboxJob[] {
    return this.stmt.all.all(channel) as OutboxJob[];
  }

  done(job: Pick<OutboxJob, 'channel' | 'cardId' | 'action'>): void {
    this.stmt.done.run(job.channel, job.cardId, job.action);
  }

  retry(job: Pick<OutboxJob, 'channel' | 'cardId' | 'action'>, dueAt: number, error: string): void {
    this.stmt.retry.run(dueAt, error.slice(0, 500), job.channel, job.cardId, job.action);
  }

  /** Records a posted card message and removes its post job, in one transaction. */
  posted(channel: string, cardId: string, ref: { chat: string; message: string }): void {
    this.db.transaction(() => {
      this.stmt.link.run(channel, ref.message, cardId, ref.chat, 'card');
      this.stmt.done.run(channel, cardId, 'post');
    })();
  }

  /** Marks the card message edited to its closed state and removes the close job. */
  closed(channel: string, cardId: string): void {
    this.db.transaction(() => {
      this.stmt.markClosed.run(channel, cardId);
      this.stmt.done.run(channel, cardId, 'close');
    })();
  }

  /** A further message about a card (a prompt a person replies to). */
  link(channel: string, ref: { chat: string; message: string }, cardId: string): void {
    this.stmt.link.run(channel, ref.message, cardId, ref.chat, 'prompt');
  }

  cardOfMessage(channel: string, message: string): string | undefined {
    return (this.stmt.cardOf.get(channel, message) as string | undefined) ?? undefined;
  }

  messageOf(channel: string, cardId: string): CardMessage | undefined {
    const row = this.stmt.messageOf.get(channel, cardId) as { chat: string; message: string; closed: number } | undefined;
    return row && { chat: row.chat, message: row.message, closed: row.closed === 1 };
  }

  /** A channel's own bookmark (how far it read a chat), kept across restarts. */
  recall(channel: string, key: string): string | undefined {
    return (this.stmt.recall.get(channel, key) as string | undefined) ?? undefined;
  }

  remember(channel: string, key: string, value: string): void {
    this.stmt.remember.run(channel, key, value);
  }

  /** Cards whose message still shows them open. */
  openCards(channel: string): string[] {
    return this.stmt.openCards.all(channel) as string[];
  }
}

/**
 * The channel store as a networked database serves it (src/store/postgres/postgres-channel-store.ts).
 * batch() runs synchronous work in one transaction, which a store answering in promises cannot
 * offer; its form here is enqueueAll: the caller reads what it needs first (messageOf, which no
 * enqueue changes), then queues the event-loop turn's jobs in order, in one transaction.
 */
export interface AsyncChannelStore extends Omit<Async<ChannelStore>, 'batch'> {
  /** Queues these jobs in the order given, all or none; one already queued keeps its place. */
  enqueueAll(jobs: readonly QueuedJob[]): Promise<void>;
}

/** The synchronous store behind the asynchronous interface (the same semantics, resolved at once). */
export function asyncChannels(store: ChannelStore): AsyncChannelStore {
  return {
    enqueueAll: async (jobs) => store.batch(() => jobs.forEach((j) => store.enqueue(j.channel, j.cardId, j.action, j.dueAt))),
    enqueue: async (channel, cardId, action, dueAt) => store.enqueue(channel, cardId, action, dueAt),
    next: async (channel) => store.next(channel),
    jobs: async (channel) => store.jobs(channel),
    done: async (job) => store.done(job),
    retry: async (job, dueAt, error) => store.retry(job, dueAt, error),
    posted: async (channel, cardId, ref) => store.posted(channel, cardId, ref),
    closed: async (channel, cardId) => store.closed(channel, cardId),
    link: async (channel, ref, cardId) => store.link(channel, ref, cardId),
    cardOfMessage: async (channel, message) => store.cardOfMessage(channel, message),
    messageOf: async (channel, cardId) => store.messageOf(channel, cardId),
    recall: async (channel, key) => store.recall(channel, key),
    remember: async (channel, key, value) => store.remember(channel, key, value),
    openCards: async (channel) => store.openCards(channel),
  };
}
