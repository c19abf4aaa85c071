import type pg from 'pg';
import type { Card } from '../../cards/model.js';
import { closed, pendingRead, type AsyncCardStore, type CardClose, type CardFilter, type CloseResult, type InsertResult, type PendingDeadline } from '../store.js';

// The cards in PostgreSQL, with the SQLite store's semantics (src/store/sqlite-store.ts).
// A pending card changes only through closeCard: an UPDATE … WHERE status = 'pending' is the
// compare-and-set, so whichever node commits first wins and every other sees changed:false
// with the winner's card. A closed card changes through amendCard (its late answer, its
// delivery), whose compare-and-set is on the whole JSON text: it is kept as text, exactly as
// the relay wrote it.

const parse = (data: string) => JSON.parse(data) as Card;
/** Rivals amending one card at once each win in turn; this many lost rounds in a row is a fault. */
const AMEND_ROUNDS = 20;

export class PostgresCardStore implements AsyncCardStore {
  constructor(private readonly pool: pg.Pool) {}

  async insertCard(card: Card, routesAt?: number | null): Promise<InsertResult> {
    const values = [card.id, card.sessionId, card.status, Date.parse(card.createdAt), Date.parse(card.expiresAt), JSON.stringify(card)];
    // Routed: stored only while the routes it was routed by are the database's (their version,
    // relay_settings' created_at, in the same statement), so no extra round trip per card.
    const inserted =
      routesAt === undefined
        ? await this.pool.query(`INSERT INTO cards (id, session_id, status, created_at, expires_at, data) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`, values)
        : await this.pool.query(
            `INSERT INTO cards (id, session_id, status, created_at, expires_at, data)
             SELECT $1, $2, $3, $4::bigint, $5::bigint, $6
             WHERE (SELECT created_at FROM relay_settings WHERE name = 'routes') IS NOT DISTINCT FROM $7::bigint
             ON CONFLICT (id) DO NOTHING`,
            [...values, routesAt],
          );
    if (inserted.rowCount === 1) return { card, created: true };
    // Not stored: the card was there already, or (routed) the routes were replaced meanwhile.
    const { rows } = await this.pool.query<{ data: string | null; routes_at: string | null }>(
      `SELECT (SELECT data FROM cards WHERE id = $1) AS data, (SELECT created_at FROM relay_settings WHERE name = 'routes') AS routes_at`,
      [card.id],
    );
    const stale = routesAt !== undefined && (rows[0].routes_at === null ? null : Number(rows[0].routes_at)) !== routesAt;
    if (stale) return { card, created: false, stale: true };
    return { card: parse(rows[0].data!), created: false };
  }

  async getCard(id: string): Promise<Card | undefined> {
    const { rows } = await this.pool.query<{ data: string }>('SELECT data FROM cards WHERE id = $1', [id]);
    return rows[0] ? parse(rows[0].data) : undefined;
  }

  async listCards(filter: CardFilter = {}): Promise<Card[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.status) where.push(`status = $${params.push(filter.status)}`);
    if (filter.sessionId) where.push(`session_id = $${params.push(filter.sessionId)}`);
    const direction = filter.order === 'newest' ? 'DESC' : 'ASC';
    const limit = filter.limit !== undefined ? `LIMIT $${params.push(filter.limit)}` : '';
    const { rows } = await this.pool.query<{ data: string }>(
      `SELECT data FROM cards ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at ${direction}, seq ${direction} ${limit}`,
      params,
    );
    return rows.map((r) => parse(r.data));
  }

  async closeCard(id: string, close: CardClose, read?: Card): Promise<CloseResult | undefined> {
    // The caller's read of the pending card saves a round trip.
    const current = pendingRead(id, read) ?? (await this.getCard(id));
    if (!current) return undefined;
    if (current.status !== 'pending') return { changed: false, card: current };
    // A pending card's JSON changes only here, so the compare-and-set on its status is enough.
    const card = closed(current, close);
    const updated = await this.pool.query(`UPDATE cards SET status = $2, answer_key = $3, data = $4 WHERE id = $1 AND status = 'pending'`, [
      id,
      card.status,
      close.idempotencyKey ?? null,
      JSON.stringify(card),
    ]);
    if (updated.rowCount === 1) return { changed: true, card };
    return { changed: false, card: (await this.getCard(id))! };
  }

  async amendCard(id: string, change: (card: Card) => Card | undefined): Promise<CloseResult | undefined> {
    for (let round = 0; round < AMEND_ROUNDS; round++) {
      const { rows } = await this.pool.query<{ data: string }>('SELECT data FROM cards WHERE id = $1', [id]);
      if (!rows[0]) return undefined;
      const current = parse(rows[0].data);
      const card = change(current);
      if (!card) return { changed: false, card: current };
      const updated = await this.pool.query('UPDATE cards SET data = $3 WHERE id = $1 AND data = $2', [id, rows[0].data, JSON.stringify(card)]);
      if (updated.rowCount === 1) return { changed: true, card };
    }
    throw new Error(`card ${id} changed ${AMEND_ROUNDS} times while it was being amended`);
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
    if (!rows.length) return [];
    // A card with a route's default answer (onExpiry) is the relay core's to close, one by one.
    const expired = rows
      .map((r) => ({ ...parse(r.data), status: 'expired' as const, closedAt: new Date(Number(r.expires_at)).toISOString() }))
      .filter((card) => !card.onExpiry);
    // One statement for all of them; a card another node closed meanwhile is left as that node left it.
    const { rows: won } = await this.pool.query<{ id: string }>(
      `UPDATE cards SET status = 'expired', data = v.data
       FROM unnest($1::text[], $2::text[]) AS v(id, data)
       WHERE cards.id = v.id AND cards.status = 'pending' RETURNING cards.id`,
      [expired.map((c) => c.id), expired.map((c) => JSON.stringify(c))],
    );
    const ids = new Set(won.map((r) => r.id));
    return expired.filter((c) => ids.has(c.id));
  }

  async pendingDeadlines(): Promise<PendingDeadline[]> {
    const { rows } = await this.pool.query<{ id: string; expires_at: string }>(`SELECT id, expires_at FROM cards WHERE status = 'pending'`);
    return rows.map((r) => ({ id: r.id, expiresAt: Number(r.expires_at) }));
  }

  /** The pool is shared by every store on the database; whoever made it ends it (postgres-stores.ts). */
  async close(): Promise<void> {}
}
