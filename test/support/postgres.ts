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

export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `askrelay_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // WITH (FORCE): a connection a failed test left open does not keep the database.
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
