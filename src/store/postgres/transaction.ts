import type pg from 'pg';

// One pooled connection for a piece of work. A connection the server cuts while it is checked
// out (a restart) emits 'error' on the client, which the pool listens to only while the
// client is idle: it is listened to here, the query in flight rejects with it, and the client
// is dropped rather than handed out again.

/** A pooled connection for `work`; a transaction it leaves open is rolled back, a broken connection dropped. */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on('error', onError);
  try {
    return await work(client);
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** Runs `work` in one transaction on one connection of the pool. */
export function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  });
}
