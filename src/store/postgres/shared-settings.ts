import type pg from 'pg';
import type { SharedRoutes } from '../../routing/router.js';
import { parseRoutes, type Routes } from '../../routing/rules.js';

// Settings that every node on one database must share (the relay token, the keys): the
// first node to need one makes it and keeps it in the database, and every later node, or
// one starting at the same moment, reads that one. INSERT … ON CONFLICT DO NOTHING makes
// the first writer win without a lock.

export interface SharedSetting {
  value: string;
  /** Whether this call made it (the first node), or found it made by another. */
  made: boolean;
}

/** The setting `name`: the stored one, else `make()`'s value, stored for every other node. */
export async function sharedSetting(pool: pg.Pool, name: string, make: () => string, now = Date.now()): Promise<SharedSetting> {
  const candidate = make();
  const inserted = await pool.query('INSERT INTO relay_settings (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [name, candidate, now]);
  if (inserted.rowCount === 1) return { value: candidate, made: true };
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM relay_settings WHERE name = $1', [name]);
  return { value: rows[0].value, made: false };
}

/** The routes (docs/routing.md), kept as one setting every node reads; created_at says when they were last written. */
export function sharedRoutes(pool: pg.Pool): SharedRoutes {
  // Read for every new card: the text is parsed again only when another PUT changed it.
  let last: { text: string; routes: Routes } | undefined;
  return {
    read: async () => {
      const { rows } = await pool.query<{ value: string }>("SELECT value FROM relay_settings WHERE name = 'routes'");
      if (!rows[0]) return undefined;
      if (last?.text === rows[0].value) return last.routes;
      const parsed = parseRoutes(JSON.parse(rows[0].value));
      if ('error' in parsed) throw new Error(`The database's routes are not valid (${parsed.error}); replace them with PUT /api/routes.`);
      last = { text: rows[0].value, routes: parsed.routes };
      return parsed.routes;
    },
    write: async (routes) => {
      await pool.query(
        "INSERT INTO relay_settings (name, value, created_at) VALUES ('routes', $1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = excluded.created_at",
        [JSON.stringify(routes), Date.now()],
      );
    },
    writtenAt: async () => {
      const { rows } = await pool.query<{ at: string }>("SELECT created_at AS at FROM relay_settings WHERE name = 'routes'");
      return rows[0] ? Number(rows[0].at) : undefined;
    },
  };
}
