import type pg from 'pg';
import type { SharedRoutes } from '../../routing/router.js';
import { parseRoutes } from '../../routing/rules.js';

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

/**
 * The routes (docs/routing.md), kept as one setting every node reads. Its created_at is their
 * version: when they were last written (ms), always higher than the one before, so a card
 * store can tell whether the routes a card was routed by are still the database's.
 */
export function sharedRoutes(pool: pg.Pool): SharedRoutes {
  return {
    read: async () => {
      const { rows } = await pool.query<{ value: string; at: string }>("SELECT value, created_at AS at FROM relay_settings WHERE name = 'routes'");
      if (!rows[0]) return { routes: [], at: null };
      const parsed = parseRoutes(JSON.parse(rows[0].value));
      if ('error' in parsed) throw new Error(`The database's routes are not valid (${parsed.error}); replace them with PUT /api/routes.`);
      return { routes: parsed.routes, at: Number(rows[0].at) };
    },
    write: async (routes) => {
      const { rows } = await pool.query<{ at: string }>(
        `INSERT INTO relay_settings (name, value, created_at) VALUES ('routes', $1, $2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = GREATEST(relay_settings.created_at + 1, excluded.created_at)
         RETURNING created_at AS at`,
        [JSON.stringify(routes), Date.now()],
      );
      return Number(rows[0].at);
    },
  };
}
