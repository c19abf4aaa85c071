import type pg from 'pg';
import { KEEP_MS, type AsyncCallStore, type CallRecord } from '../call-store.js';

// Which card each MCP tools/call waits on, in PostgreSQL, with the SQLite store's semantics
// (src/store/call-store.ts). Every method is one statement, so nodes sharing the database
// need no more: a record is written once (the first call for a card keeps it), and it is
// marked delivered once (the first delivery's time stays).

export class PostgresCallStore implements AsyncCallStore {
  /** The pool belongs to whoever composes the stores: this store never ends it. */
  constructor(private readonly pool: pg.Pool) {}

  async record(call: CallRecord, now: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO mcp_calls (card_id, dialect, args_hash, client_key, created_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (card_id) DO NOTHING`,
      [call.cardId, call.dialect, call.argsHash, call.clientKey ?? null, now],
    );
  }

  /**
   * Cards of calls with these arguments whose result nobody has received, the one with the
   * same client key first, then the newest. NULLS LAST keeps SQLite's order: there a
   * comparison with a keyless record (or without a key) is NULL, which sorts last when
   * descending, where PostgreSQL would put it first.
   */
  async open(dialect: string, argsHash: string, clientKey?: string): Promise<{ cardId: string; clientKey: string | null }[]> {
    const { rows } = await this.pool.query<{ cardId: string; clientKey: string | null }>(
      `SELECT card_id AS "cardId", client_key AS "clientKey" FROM mcp_calls
       WHERE dialect = $1 AND args_hash = $2 AND (delivered_at IS NULL OR client_key = $3)
       ORDER BY (client_key = $3) DESC NULLS LAST, created_at DESC, seq DESC`,
      [dialect, argsHash, clientKey ?? null],
    );
    return rows;
  }

  async delivered(cardId: string, now: number): Promise<void> {
    await this.pool.query('UPDATE mcp_calls SET delivered_at = $1 WHERE card_id = $2 AND delivered_at IS NULL', [now, cardId]);
  }

  /** Pending cards whose calls were never answered back: their clients went away, or the relay restarted. */
  async orphans(dialect: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ card_id: string }>(
      `SELECT m.card_id FROM mcp_calls m JOIN cards c ON c.id = m.card_id
       WHERE m.dialect = $1 AND m.delivered_at IS NULL AND c.status = 'pending' ORDER BY m.seq`,
      [dialect],
    );
    return rows.map((r) => r.card_id);
  }

  async prune(now: number): Promise<void> {
    await this.pool.query('DELETE FROM mcp_calls WHERE created_at < $1', [now - KEEP_MS]);
  }
}
