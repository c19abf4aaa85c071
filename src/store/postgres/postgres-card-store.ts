import type pg from 'pg';
import type { Card } from '../../cards/model.js';
import { cardAuditRecord, type CardChange } from '../card-audit.js';
import { closed, pendingRead, type AmendKind, type AsyncCardStore, type CardClose, type CardFilter, type CloseResult, type InsertResult, type PendingDeadline } from '../store.js';
import { CommitOrder, type Turn } from './commit-order.js';
import { CHANNEL, envelope } from './event-bus.js';
import type { PostgresAuditStore } from './postgres-audit-store.js';
import { withClient } from './transaction.js';
import { parseStored } from '../stored-json.js';

// The cards in PostgreSQL, with the SQLite store's semantics (src/store/sqlite-store.ts).
// A pending card changes only through closeCard: an UPDATE … WHERE status = 'pending' is the
// compare-and-set, so whichever node commits first wins and every other sees changed:false
// with the winner's card. A closed card changes through amendCard (its late answer, its
// delivery) under a row lock.
//
// Each change is one transaction with its audit entry and with the NOTIFY that tells the
// other nodes (PostgreSQL delivers it at commit): a node killed at any instant leaves no
// change unrecorded or unheard, and no entry or event of a change that did not happen. The
// append lock (the audit's advisory lock) is taken first, then the card's row: always in
// that order, so two changes never wait on each other.

const parse = (id: string, data: string) => parseStored<Card>('cards', id, data);

/** The relay event each change is heard as on the other nodes (src/relay/events.ts). */
const EVENT: Record<CardChange, string> = { created: 'card.created', closed: 'card.updated', late: 'card.late', escalated: 'card.escalated', delivery: 'card.delivery' };

type Changed = [CardChange, Card];

export class PostgresCardStore implements AsyncCardStore {
  /** This node's name in the events it sends; none until it joins the other nodes (announceAs). */
  private node?: string;
  private readonly order = new CommitOrder();

  constructor(
    private readonly pool: pg.Pool,
    private readonly audit: PostgresAuditStore,
  ) {}

  /** From now on every change also tells the other nodes, as `node`, in its own transaction. */
  announceAs(node: string): void {
    this.node = node;
  }

  /** The NOTIFY payloads of `changes` (none before the node joined). */
  private notices(changes: Changed[]): string[] {
    const node = this.node;
    return node ? changes.map(([change, card]) => envelope(node, EVENT[change], card, card.id)) : [];
  }

  /**
   * Runs `work` in one transaction; the changes it made are recorded and announced before
   * it commits. `audited`: the work's changes have entries, so the append lock is taken first.
   */
  private async change<T>(audited: boolean, work: (client: pg.PoolClient) => Promise<{ result: T; changes: Changed[] }>): Promise<T> {
    let turn: Turn | undefined;
    try {
      return await withClient(this.pool, async (client) => {
        const head = audited ? await this.audit.beginLocked(client) : (await client.query('BEGIN'), undefined);
        if (audited) turn = this.order.take();
        const { result, changes } = await work(client);
        const records = changes.map(([change, card]) => cardAuditRecord(change, card)).filter((r) => r !== undefined);
        // The entries and the events in one statement, then the commit.
        await this.audit.insert(client, head, records, { channel: CHANNEL, notices: this.notices(changes) });
        await client.query('COMMIT');
        return result;
      });
    } finally {
      // Returned in commit order (commit-order.ts), so this node's streams show what the others hear.
      await turn?.end();
    }
  }

  async insertCard(card: Card, routesAt?: number | null): Promise<InsertResult> {
    const values = [card.id, card.sessionId, card.status, Date.parse(card.createdAt), Date.parse(card.expiresAt), JSON.stringify(card)];
    const result = await this.change<InsertResult | undefined>(true, async (client) => {
      // Routed: stored only while the routes it was routed by are the database's (their
      // version, relay_settings' created_at, in the same statement).
      const inserted =
        routesAt === undefined
          ? await client.query(`INSERT INTO cards (id, session_id, status, created_at, expires_at, data) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`, values)
          : await client.query(
              `INSERT INTO cards (id, session_id, status, created_at, expires_at, data)
               SELECT $1, $2, $3, $4::bigint, $5::bigint, $6
               WHERE (SELECT created_at FROM relay_settings WHERE name = 'routes') IS NOT DISTINCT FROM $7::bigint
               ON CONFLICT (id) DO NOTHING`,
              [...values, routesAt],
            );
      return inserted.rowCount === 1 ? { result: { card, created: true }, changes: [['created', card]] } : { result: undefined, changes: [] };
    });
    if (result) return result;
    // Not stored: the card was there already, or (routed) the routes were replaced meanwhile.
    const { rows } = await this.pool.query<{ data: string | null; routes_at: string | null }>(
      `SELECT (SELECT data FROM cards WHERE id = $1) AS data, (SELECT created_at FROM relay_settings WHERE name = 'routes') AS routes_at`,
      [card.id],
    );
    const stale = routesAt !== undefined && (rows[0].routes_at === null ? null : Number(rows[0].routes_at)) !== routesAt;
    if (stale) return { card, created: false, stale: true };
    return { card: parse(card.id, rows[0].data!), created: false };
  }

  async getCard(id: string): Promise<Card | undefined> {
    const { rows } = await this.pool.query<{ data: string }>('SELECT data FROM cards WHERE id = $1', [id]);
    return rows[0] ? parse(id, rows[0].data) : undefined;
  }

  async listCards(filter: CardFilter = {}): Promise<Card[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.status) where.push(`status = $${params.push(filter.status)}`);
    if (filter.sessionId) where.push(`session_id = $${params.push(filter.sessionId)}`);
    const direction = filter.order === 'newest' ? 'DESC' : 'ASC';
    const limit = filter.limit !== undefined ? `LIMIT $${params.push(filter.limit)}` : '';
    const { rows } = await this.pool.query<{ id: string; data: string }>(
      `SELECT id, data FROM cards ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at ${direction}, seq ${direction} ${limit}`,
      params,
    );
    return rows.map((r) => parse(r.id, r.data));
  }

  async closeCard(id: string, close: CardClose, read?: Card): Promise<CloseResult | undefined> {
    // The caller's read of the pending card saves a round trip.
    const current = pendingRead(id, read) ?? (await this.getCard(id));
    if (!current) return undefined;
    if (current.status !== 'pending') return { changed: false, card: current };
    // A pending card's JSON changes only here, so the compare-and-set on its status is enough.
    const card = closed(current, close);
    const won = await this.change<boolean>(true, async (client) => {
      const updated = await client.query(`UPDATE cards SET status = $2, answer_key = $3, data = $4 WHERE id = $1 AND status = 'pending'`, [
        id,
        card.status,
        close.idempotencyKey ?? null,
        JSON.stringify(card),
      ]);
      return updated.rowCount === 1 ? { result: true, changes: [['closed', card]] } : { result: false, changes: [] };
    });
    return won ? { changed: true, card } : { changed: false, card: (await this.getCard(id))! };
  }

  async amendCard(id: string, change: (card: Card) => Card | undefined, kind: AmendKind): Promise<CloseResult | undefined> {
    // A delivery has no entry: no append lock, only the card's row lock.
    return this.change<CloseResult | undefined>(kind !== 'delivery', async (client) => {
      const { rows } = await client.query<{ data: string }>('SELECT data FROM cards WHERE id = $1 FOR UPDATE', [id]);
      if (!rows[0]) return { result: undefined, changes: [] };
      const current = parse(id, rows[0].data);
      const card = change(current);
      if (!card) return { result: { changed: false, card: current }, changes: [] };
      await client.query('UPDATE cards SET data = $2 WHERE id = $1', [id, JSON.stringify(card)]);
      return { result: { changed: true, card }, changes: [[kind, card]] };
    });
  }

  async answerKey(id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ answer_key: string | null }>('SELECT answer_key FROM cards WHERE id = $1', [id]);
    return rows[0]?.answer_key ?? undefined;
  }

  async expireOverdue(now: number): Promise<Card[]> {
    const { rows } = await this.pool.query<{ id: string; data: string; expires_at: string }>(
      `SELECT id, data, expires_at FROM cards WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at, seq`,
      [now],
    );
    // A card with a route's default answer (onExpiry) is the relay core's to close, one by one.
    const expired = rows
      .map((r) => ({ ...parse(r.id, r.data), status: 'expired' as const, closedAt: new Date(Number(r.expires_at)).toISOString() }))
      .filter((card) => !card.onExpiry);
    if (!expired.length) return [];
    return this.change(true, async (client) => {
      // One statement for all of them; a card another node closed meanwhile is left as that node left it.
      const { rows: won } = await client.query<{ id: string }>(
        `UPDATE cards SET status = 'expired', data = v.data
         FROM unnest($1::text[], $2::text[]) AS v(id, data)
         WHERE cards.id = v.id AND cards.status = 'pending' RETURNING cards.id`,
        [expired.map((c) => c.id), expired.map((c) => JSON.stringify(c))],
      );
      const ids = new Set(won.map((r) => r.id));
      const cards = expired.filter((c) => ids.has(c.id));
      return { result: cards, changes: cards.map((card): Changed => ['closed', card]) };
    });
  }

  async pendingDeadlines(): Promise<PendingDeadline[]> {
    const { rows } = await this.pool.query<{ id: string; expires_at: string }>(`SELECT id, expires_at FROM cards WHERE status = 'pending'`);
    return rows.map((r) => ({ id: r.id, expiresAt: Number(r.expires_at) }));
  }

  /** The pool is shared by every store on the database; whoever made it ends it (postgres-stores.ts). */
  async close(): Promise<void> {}
}
