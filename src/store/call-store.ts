import type Database from 'better-sqlite3';
import type { Async } from './store.js';

// Which card an MCP tool call is waiting on, kept next to the cards so that it outlives
// the MCP session and the relay process: after a restart the client re-sends its call on a
// new session, and the relay finds the card by the call's arguments (or the key a client
// such as `askrelay mcp` puts in the call) instead of asking the human twice. A record is
// open until its card's result has been handed to a call.

const SCHEMA = `
CREATE TABLE IF NOT EXISTS mcp_calls (
  card_id      TEXT PRIMARY KEY,
  dialect      TEXT NOT NULL,
  args_hash    TEXT NOT NULL,
  client_key   TEXT,
  created_at   INTEGER NOT NULL,
  delivered_at INTEGER
);
CREATE INDEX IF NOT EXISTS mcp_calls_args ON mcp_calls (dialect, args_hash);
`;

export interface CallRecord {
  cardId: string;
  dialect: string;
  argsHash: string;
  clientKey?: string;
}

/** Records older than the longest wait (7 days) plus a day can match nothing any more. */
export const KEEP_MS = 8 * 24 * 3600 * 1000;

export class CallStore {
  private readonly stmt;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.stmt = {
      record: db.prepare(
        `INSERT INTO mcp_calls (card_id, dialect, args_hash, client_key, created_at)
         VALUES (@cardId, @dialect, @argsHash, @clientKey, @now) ON CONFLICT (card_id) DO NOTHING`,
      ),
      open: db.prepare(
        `SELECT card_id AS cardId, client_key AS clientKey FROM mcp_calls
         WHERE dialect = @dialect AND args_hash = @argsHash AND (delivered_at IS NULL OR client_key = @clientKey)
         ORDER BY (client_key = @clientKey) DESC, created_at DESC, rowid DESC`,
      ),
      delivered: db.prepare('UPDATE mcp_calls SET delivered_at = ? WHERE card_id = ? AND delivered_at IS NULL'),
      orphans: db
        .prepare(
          `SELECT m.card_id FROM mcp_calls m JOIN cards c ON c.id = m.card_id
           WHERE m.dialect = ? AND m.delivered_at IS NULL AND c.status = 'pending'`,
        )
        .pluck(),
      prune: db.prepare('DELETE FROM mcp_calls WHERE created_at < ?'),
    };
  }

  record(call: CallRecord, now: number): void {
    this.stmt.record.run({ ...call, clientKey: call.clientKey ?? null, now });
  }

  /**
   * Cards of calls with these arguments whose result nobody has received, the one with the
   * same client key first (whose result may have been lost on the way), then the newest.
   */
  open(dialect: string, argsHash: string, clientKey?: string): { cardId: string; clientKey: string | null }[] {
    return this.stmt.open.all({ dialect, argsHash, clientKey: clientKey ?? null }) as { cardId: string; clientKey: string | null }[];
  }

  delivered(cardId: string, now: number): void {
    this.stmt.delivered.run(now, cardId);
  }

  /** Pending cards whose calls were never answered back: their clients went away, or the relay restarted. */
  orphans(dialect: string): string[] {
    return this.stmt.orphans.all(dialect) as string[];
  }

  prune(now: number): void {
    this.stmt.prune.run(now - KEEP_MS);
  }
}

/** The call store as a networked database serves it (src/store/postgres/postgres-call-store.ts). */
export type AsyncCallStore = Async<CallStore>;

/** The synchronous store behind the asynchronous interface (the same semantics, resolved at once). */
export function asyncCalls(store: CallStore): AsyncCallStore {
  return {
    record: async (call, now) => store.record(call, now),
    open: async (dialect, argsHash, clientKey) => store.open(dialect, argsHash, clientKey),
    delivered: async (cardId, now) => store.delivered(cardId, now),
    orphans: async (dialect) => store.orphans(dialect),
    prune: async (now) => store.prune(now),
  };
}
