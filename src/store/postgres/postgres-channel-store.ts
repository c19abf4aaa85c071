import type pg from 'pg';
import type { AsyncChannelStore, CardMessage, OutboxAction, OutboxJob, QueuedJob } from '../channel-store.js';

// The chat channels' durable state in PostgreSQL, with the SQLite store's semantics
// (src/store/channel-store.ts): the outbox (FIFO per channel by `seq`, a job leaving only
// once the platform took it), the messages made for each card, and each channel's bookmarks.
//
// Order with several nodes: SQLite counts `seq` in the process (it is the only writer); here
// a sequence hands it out, so two nodes queueing at once never share a value, and a job
// queued after another committed always sorts after it. Every method is one statement, so
// each is atomic by itself (posted() and closed() write two tables through a CTE).

type JobKey = Pick<OutboxJob, 'channel' | 'cardId' | 'action'>;

interface JobRow {
  channel: string;
  cardId: string;
  action: OutboxAction;
  dueAt: string;
  attempts: number;
  lastError: string | null;
}

const JOB_COLUMNS = `channel, card_id AS "cardId", action, due_at AS "dueAt", attempts, last_error AS "lastError"`;
// `pg` hands BIGINT over as a string (it may exceed 2^53); epoch milliseconds do not.
const job = (row: JobRow): OutboxJob => ({ ...row, dueAt: Number(row.dueAt) });

export class PostgresChannelStore implements AsyncChannelStore {
  /** The pool belongs to whoever composes the stores: this store never ends it. */
  constructor(private readonly pool: pg.Pool) {}

  /** Queues a job unless the same one is queued already (a restart re-queues safely). */
  async enqueue(channel: string, cardId: string, action: OutboxAction, dueAt: number): Promise<void> {
    await this.enqueueAll([{ channel, cardId, action, dueAt }]);
  }

  /**
   * One statement for the whole batch, so it is queued all or none. The batch takes as many
   * sequence values as it has jobs and hands them out in ascending order, in the order the
   * jobs were given (the order in which one query calls nextval() is not guaranteed).
   */
  async enqueueAll(jobs: readonly QueuedJob[]): Promise<void> {
    // The same job twice in one batch keeps its first place, as two enqueue() calls would.
    const firsts = new Map<string, QueuedJob>();
    for (const j of jobs) {
      const key = JSON.stringify([j.channel, j.cardId, j.action]);
      if (!firsts.has(key)) firsts.set(key, j);
    }
    const unique = [...firsts.values()];
    if (!unique.length) return;
    await this.pool.query(
      `INSERT INTO channel_outbox (channel, card_id, action, due_at, seq)
       SELECT v.channel, v.card_id, v.action, v.due_at, s.seq
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS v(channel, card_id, action, due_at, ord)
       JOIN (SELECT row_number() OVER (ORDER BY n) AS ord, n AS seq
             FROM (SELECT nextval(pg_get_serial_sequence('channel_outbox', 'seq')) AS n
                   FROM generate_series(1, cardinality($1::text[]))) AS taken) AS s USING (ord)
       ORDER BY v.ord
       ON CONFLICT (channel, card_id, action) DO NOTHING`,
      [unique.map((j) => j.channel), unique.map((j) => j.cardId), unique.map((j) => j.action), unique.map((j) => j.dueAt)],
    );
  }

  /** The channel's oldest job, due or not: one that failed holds the ones behind it until its retry. */
  async next(channel: string): Promise<OutboxJob | undefined> {
    const { rows } = await this.pool.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM channel_outbox WHERE channel = $1 ORDER BY seq LIMIT 1`, [channel]);
    return rows[0] && job(rows[0]);
  }

  async jobs(channel: string): Promise<OutboxJob[]> {
    const { rows } = await this.pool.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM channel_outbox WHERE channel = $1 ORDER BY seq`, [channel]);
    return rows.map(job);
  }

  async done(key: JobKey): Promise<void> {
    await this.pool.query('DELETE FROM channel_outbox WHERE channel = $1 AND card_id = $2 AND action = $3', [key.channel, key.cardId, key.action]);
  }

  async retry(key: JobKey, dueAt: number, error: string): Promise<void> {
    await this.pool.query(
      `UPDATE channel_outbox SET due_at = $1, attempts = attempts + 1, last_error = $2
       WHERE channel = $3 AND card_id = $4 AND action = $5`,
      [dueAt, error.slice(0, 500), key.channel, key.cardId, key.action],
    );
  }

  /** Records a posted card message and removes its post job, in one statement. */
  async posted(channel: string, cardId: string, ref: { chat: string; message: string }): Promise<void> {
    // A data-modifying CTE runs to completion whether or not the outer statement reads it.
    await this.pool.query(
      `WITH linked AS (
         INSERT INTO channel_messages (channel, message, card_id, chat, role) VALUES ($1, $2, $3, $4, 'card')
         ON CONFLICT (channel, message) DO NOTHING
       )
       DELETE FROM channel_outbox WHERE channel = $1 AND card_id = $3 AND action = 'post'`,
      [channel, ref.message, cardId, ref.chat],
    );
  }

  /** Marks the card message edited to its closed state and removes the close job, in one statement. */
  async closed(channel: string, cardId: string): Promise<void> {
    await this.pool.query(
      `WITH marked AS (
         UPDATE channel_messages SET closed = true WHERE channel = $1 AND card_id = $2 AND role = 'card'
       )
       DELETE FROM channel_outbox WHERE channel = $1 AND card_id = $2 AND action = 'close'`,
      [channel, cardId],
    );
  }

  /** A further message about a card (a prompt a person replies to). */
  async link(channel: string, ref: { chat: string; message: string }, cardId: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO channel_messages (channel, message, card_id, chat, role) VALUES ($1, $2, $3, $4, 'prompt')
       ON CONFLICT (channel, message) DO NOTHING`,
      [channel, ref.message, cardId, ref.chat],
    );
  }

  async cardOfMessage(channel: string, message: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ card_id: string }>('SELECT card_id FROM channel_messages WHERE channel = $1 AND message = $2', [channel, message]);
    return rows[0]?.card_id;
  }

  /** The card's message; should a card have been posted twice, the first one (as SQLite's index gives it). */
  async messageOf(channel: string, cardId: string): Promise<CardMessage | undefined> {
    const { rows } = await this.pool.query<CardMessage>(
      `SELECT chat, message, closed FROM channel_messages WHERE channel = $1 AND card_id = $2 AND role = 'card' ORDER BY seq LIMIT 1`,
      [channel, cardId],
    );
    return rows[0];
  }

  /** A channel's own bookmark (how far it read a chat), kept across restarts. */
  async recall(channel: string, key: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM channel_state WHERE channel = $1 AND key = $2', [channel, key]);
    return rows[0]?.value;
  }

  async remember(channel: string, key: string, value: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO channel_state (channel, key, value) VALUES ($1, $2, $3)
       ON CONFLICT (channel, key) DO UPDATE SET value = excluded.value`,
      [channel, key, value],
    );
  }

  /** Cards whose message still shows them open, by card id as SQLite's index walks them. */
  async openCards(channel: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ card_id: string }>(
      `SELECT card_id FROM channel_messages WHERE channel = $1 AND role = 'card' AND NOT closed ORDER BY card_id, seq`,
      [channel],
    );
    return rows.map((r) => r.card_id);
  }
}
