import type pg from 'pg';

// The PostgreSQL schema, as numbered migrations applied in order at start. Each runs in
// its own transaction under one advisory lock, so nodes that start together on a fresh
// database apply each migration once: the first takes the lock and migrates, the others
// wait for it and then find nothing left to do. A migration, once released, never changes:
// later changes are new migrations.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'cards',
    // Times in epoch milliseconds, as in the SQLite store. `data` is the card's JSON as the
    // relay wrote it (text, not jsonb: its key order stays the one every surface sees).
    sql: `
      CREATE TABLE cards (
        id          TEXT PRIMARY KEY,
        session_id  TEXT,
        status      TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        expires_at  BIGINT NOT NULL,
        answer_key  TEXT,
        data        TEXT NOT NULL,
        seq         BIGSERIAL NOT NULL
      );
      CREATE INDEX cards_pending ON cards (status, expires_at);
      CREATE INDEX cards_session ON cards (session_id, created_at);
      CREATE INDEX cards_created ON cards (created_at, seq);
    `,
  },
  {
    version: 3,
    name: 'audit log and push subscriptions',
    // As in SQLite: the audit rows, and a one-row head (the last seq and hash) that verify
    // checks the rows against. `data` is the entry's JSON as sealed, text so it reads back as
    // written. Push subscriptions: one row per endpoint, listed by created_at and then in
    // insertion order (`seq`, SQLite's rowid; an upsert keeps it).
    sql: `
      CREATE TABLE audit (
        seq       BIGINT PRIMARY KEY,
        data      TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash      TEXT NOT NULL
      );
      CREATE TABLE audit_head (
        one  INTEGER PRIMARY KEY CHECK (one = 1),
        seq  BIGINT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE TABLE push_subscriptions (
        endpoint   TEXT PRIMARY KEY,
        p256dh     TEXT NOT NULL,
        auth       TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        seq        BIGSERIAL NOT NULL
      );
      CREATE INDEX push_subscriptions_created ON push_subscriptions (created_at, seq);
    `,
  },
];

/** An arbitrary constant: the advisory lock every node takes to migrate. */
const MIGRATION_LOCK = 7_070_001;

/** Applies the migrations the database lacks; returns the versions it applied. */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`);
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.version} (${migration.name}) failed: ${(err as Error).message}`);
      }
      applied.push(migration.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
