import type pg from 'pg';

// Work that must have one owner across nodes (a session's runner, a chat channel's polling
// and outbox, the push queue, the audit writer) is held by a lease: a row naming its holder
// until a time. The holder renews it well before then; when it stops (its node died), the
// lease runs out and another node takes it. Each change of holder raises the lease's fence,
// so work done under an old fence can be told from the new holder's.
//
// Times are the database's clock (one clock for every node), unless a test passes `now`.

export interface Lease {
  name: string;
  holder: string;
  expiresAt: number;
  /** Raised each time the lease changes hands. */
  fence: number;
  /** Who held it before this acquire, when someone else did (acquire only). */
  previous?: string;
}

const DB_NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

interface Row {
  name: string;
  holder: string;
  expires_at: string;
  fence: string;
  previous?: string | null;
}
const leaseOf = (r: Row): Lease => ({
  name: r.name,
  holder: r.holder,
  expiresAt: Number(r.expires_at),
  fence: Number(r.fence),
  ...(r.previous && r.previous !== r.holder ? { previous: r.previous } : {}),
});

export class PostgresLeases {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Takes the lease `name` for `holder` for `ttlMs`, or renews it when `holder` has it:
   * the lease, or undefined while another holder's lease still runs.
   */
  async acquire(name: string, holder: string, ttlMs: number, now?: number): Promise<Lease | undefined> {
    const at = now === undefined ? DB_NOW : '$4::bigint';
    // The CTE reads the row as it was before this statement: who held it until now.
    const { rows } = await this.pool.query<Row>(
      `WITH before AS (SELECT holder FROM leases WHERE name = $1)
       INSERT INTO leases AS l (name, holder, expires_at, fence) VALUES ($1, $2, ${at} + $3, 1)
       ON CONFLICT (name) DO UPDATE SET
         holder = EXCLUDED.holder,
         expires_at = EXCLUDED.expires_at,
         fence = l.fence + CASE WHEN l.holder = EXCLUDED.holder THEN 0 ELSE 1 END
       WHERE l.holder = EXCLUDED.holder OR l.expires_at <= ${at}
       RETURNING name, holder, expires_at, fence, (SELECT holder FROM before) AS previous`,
      now === undefined ? [name, holder, ttlMs] : [name, holder, ttlMs, now],
    );
    return rows[0] ? leaseOf(rows[0]) : undefined;
  }

  /** Gives the lease up at once (a node stopping cleanly), so another node need not wait it out. */
  async release(name: string, holder: string): Promise<void> {
    await this.pool.query('UPDATE leases SET expires_at = 0 WHERE name = $1 AND holder = $2', [name, holder]);
  }

  /** The holder of the lease while it runs. */
  async holder(name: string, now?: number): Promise<string | undefined> {
    const at = now === undefined ? DB_NOW : '$2::bigint';
    const { rows } = await this.pool.query<{ holder: string }>(
      `SELECT holder FROM leases WHERE name = $1 AND expires_at > ${at}`,
      now === undefined ? [name] : [name, now],
    );
    return rows[0]?.holder;
  }

  /** Gives up every lease `holder` has (a node stopping cleanly), but those named `keep…`. */
  async releaseAll(holder: string, keep?: string): Promise<void> {
    await this.pool.query('UPDATE leases SET expires_at = 0 WHERE holder = $1 AND ($2::text IS NULL OR NOT starts_with(name, $2))', [holder, keep ?? null]);
  }

  /** The leases that still run, by the database's clock (GET /api/nodes: what each node holds). */
  async running(): Promise<Lease[]> {
    const { rows } = await this.pool.query<Row>(`SELECT name, holder, expires_at, fence FROM leases WHERE expires_at > ${DB_NOW} ORDER BY name`);
    return rows.map(leaseOf);
  }

  /** Every lease, held or run out. */
  async list(): Promise<Lease[]> {
    const { rows } = await this.pool.query<Row>('SELECT name, holder, expires_at, fence FROM leases ORDER BY name');
    return rows.map(leaseOf);
  }
}
