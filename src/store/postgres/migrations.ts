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
    version: 2,
    name: 'sessions and logins',
    // As in SQLite (src/store/session-store.ts, login-store.ts): JSON as text, times in epoch
    // ms, only hashes of agent tokens and login ids. No foreign keys, as there: a transcript
    // entry or a token may outlive or precede its session's row. `seq` on sessions keeps
    // insertion order among equal created_at; a transcript's seq counts 1, 2, … per session.
    sql: `
      CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        status      TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        data        TEXT NOT NULL,
        state       TEXT,
        seq         BIGSERIAL NOT NULL
      );
      CREATE INDEX sessions_created ON sessions (created_at, seq);
      CREATE TABLE transcript (
        session_id  TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        data        TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE TABLE agent_tokens (
        token_hash  TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL UNIQUE
      );
      CREATE TABLE watch_grants (
        watcher     TEXT NOT NULL,
        target      TEXT NOT NULL,
        granted_at  BIGINT NOT NULL,
        PRIMARY KEY (watcher, target)
      );
      CREATE TABLE web_logins (
        key         TEXT PRIMARY KEY,
        created_at  BIGINT NOT NULL
      );
      CREATE INDEX web_logins_created ON web_logins (created_at);
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
  {
    version: 4,
    name: 'mcp calls and chat channels',
    // As in SQLite (src/store/call-store.ts, channel-store.ts): times in epoch ms, no foreign
    // keys (a call's record may outlive its card). `seq` stands in for SQLite's rowid and the
    // outbox's own counter: a sequence, so several nodes queueing at once never share a value.
    sql: `
      CREATE TABLE mcp_calls (
        card_id       TEXT PRIMARY KEY,
        dialect       TEXT NOT NULL,
        args_hash     TEXT NOT NULL,
        client_key    TEXT,
        created_at    BIGINT NOT NULL,
        delivered_at  BIGINT,
        seq           BIGSERIAL NOT NULL
      );
      CREATE INDEX mcp_calls_args ON mcp_calls (dialect, args_hash);
      CREATE INDEX mcp_calls_created ON mcp_calls (created_at);
      CREATE TABLE channel_outbox (
        channel     TEXT NOT NULL,
        card_id     TEXT NOT NULL,
        action      TEXT NOT NULL,
        due_at      BIGINT NOT NULL,
        attempts    INTEGER NOT NULL DEFAULT 0,
        last_error  TEXT,
        seq         BIGSERIAL NOT NULL,
        PRIMARY KEY (channel, card_id, action)
      );
      CREATE INDEX channel_outbox_order ON channel_outbox (channel, seq);
      CREATE TABLE channel_messages (
        channel  TEXT NOT NULL,
        message  TEXT NOT NULL,
        card_id  TEXT NOT NULL,
        chat     TEXT NOT NULL,
        role     TEXT NOT NULL,
        closed   BOOLEAN NOT NULL DEFAULT false,
        seq      BIGSERIAL NOT NULL,
        PRIMARY KEY (channel, message)
      );
      CREATE INDEX channel_messages_card ON channel_messages (channel, card_id, role, seq);
      CREATE TABLE channel_state (
        channel  TEXT NOT NULL,
        key      TEXT NOT NULL,
        value    TEXT NOT NULL,
        PRIMARY KEY (channel, key)
      );
    `,
  },
  {
    version: 5,
    name: 'settings',
    // What every node sharing the database must agree on: the relay token, keys.
    sql: `
      CREATE TABLE relay_settings (
        name       TEXT PRIMARY KEY,
        value      TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'leases and nodes',
    // Work with one owner (a session's runner, a channel's outbox, the push queue, the audit
    // writer) is held by a lease; every node says it is alive with a heartbeat.
    sql: `
      CREATE TABLE leases (
        name       TEXT PRIMARY KEY,
        holder     TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        fence      BIGINT NOT NULL
      );
      CREATE TABLE nodes (
        id           TEXT PRIMARY KEY,
        url          TEXT,
        started_at   BIGINT NOT NULL,
        heartbeat_at BIGINT NOT NULL,
        holds        TEXT NOT NULL DEFAULT '{}'
      );
    `,
  },
  {
    version: 7,
    name: 'bus payloads',
    // A message between nodes too big for NOTIFY (8000 bytes) waits here, named by its id;
    // rows older than a few minutes are deleted by the next big message.
    sql: `
      CREATE TABLE bus_payloads (
        id         BIGSERIAL PRIMARY KEY,
        data       TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: 'people',
    // The relay's people (src/store/user-store.ts): a name and the SHA-256 of a personal token.
    sql: `
      CREATE TABLE users (
        name       TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        created_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 9,
    name: 'logins of people',
    // The person a page login signs in as (none: the operator).
    sql: `ALTER TABLE web_logins ADD COLUMN who TEXT;`,
  },
  {
    version: 10,
    name: 'chat users linked to people',
    sql: `
      CREATE TABLE user_links (
        link TEXT PRIMARY KEY,
        name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE
      );
    `,
  },
  {
    version: 11,
    name: 'push subscriptions of people',
    // The person whose browser subscribed (none: the operator's): push goes to the people a card is routed to.
    sql: `ALTER TABLE push_subscriptions ADD COLUMN who TEXT;`,
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
