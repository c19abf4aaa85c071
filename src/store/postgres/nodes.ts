import type pg from 'pg';
import type { NodeRecord } from '../../cluster/cluster.js';

// Every node on one database says it is alive (a heartbeat every few seconds) and what it
// holds; GET /api/nodes lists the nodes heard from lately. Times are the database's clock
// unless a test passes `now`.

const DB_NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

interface Row {
  id: string;
  url: string | null;
  started_at: string;
  heartbeat_at: string;
  holds: string;
}

export class PostgresNodes {
  constructor(private readonly pool: pg.Pool) {}

  /** Records that node `id` is alive now, with what it holds (its first heartbeat is its start). */
  async heartbeat(id: string, url: string | undefined, holds: Record<string, number>, now?: number): Promise<void> {
    const at = now === undefined ? DB_NOW : '$4::bigint';
    await this.pool.query(
      `INSERT INTO nodes (id, url, started_at, heartbeat_at, holds) VALUES ($1, $2, ${at}, ${at}, $3)
       ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, heartbeat_at = EXCLUDED.heartbeat_at, holds = EXCLUDED.holds`,
      now === undefined ? [id, url ?? null, JSON.stringify(holds)] : [id, url ?? null, JSON.stringify(holds), now],
    );
  }

  /** The nodes heard from within `withinMs`, by id. */
  async live(withinMs: number, now?: number): Promise<NodeRecord[]> {
    const at = now === undefined ? DB_NOW : '$2::bigint';
    const { rows } = await this.pool.query<Row>(
      `SELECT id, url, started_at, heartbeat_at, holds FROM nodes WHERE heartbeat_at > ${at} - $1 ORDER BY id`,
      now === undefined ? [withinMs] : [withinMs, now],
    );
    return rows.map((r) => ({
      id: r.id,
      ...(r.url ? { url: r.url } : {}),
      startedAt: Number(r.started_at),
      heartbeatAt: Number(r.heartbeat_at),
      holds: JSON.parse(r.holds) as Record<string, number>,
    }));
  }

  /** A node stopping cleanly says so: it leaves the list at once. */
  async leave(id: string): Promise<void> {
    await this.pool.query('DELETE FROM nodes WHERE id = $1', [id]);
  }
}
