import { randomBytes } from 'node:crypto';
import pg from 'pg';

// Each PostgreSQL test gets a database of its own, made from the test server's and dropped
// afterwards. The server: ASKRELAY_TEST_DATABASE_URL, by default the one the development and
// CI machines run (scripts/ensure-test-tools.js starts one where none answers).

export const TEST_DATABASE_URL = process.env.ASKRELAY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A pool for a test database. Dropping the database ends its connections from the server's
 * side; a pool still closing then sees an error, which must not become an unhandled one.
 */
export function testPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url });
  pool.on('error', () => {});
  return pool;
}

/** `prefix`: the start of its name (lower-case letters, digits, _), so a run can find its own. */
export async function freshDatabase(prefix = 'askrelay_test_'): Promise<FreshDatabase> {
  const name = `${prefix}${randomBytes(6).toString('hex')}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`"${name}" is not a plain database name`);
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropDatabase(url.toString()) };
}

/** Drops the database a URL names, if it is still there. */
export async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  // WITH (FORCE): a connection a failed test left open does not keep the database.
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
}

/** Drops every database whose name starts with `prefix` (what a run's tests left behind). */
export async function dropDatabasesStartingWith(prefix: string): Promise<string[]> {
  return admin(async (c) => {
    const { rows } = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
    return rows.map((r) => r.datname);
  });
}
