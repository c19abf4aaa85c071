import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

// The PostgreSQL side of the benchmark: a database of its own for each cluster of nodes, made
// from the admin connection and dropped afterwards (the same few lines as
// test/support/postgres.ts, which bench code does not import), and the CPU its server
// processes spend on it.

/** The admin connection: CREATE / DROP DATABASE run here. */
export const BENCH_ADMIN_URL = process.env.ASKRELAY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_ADMIN_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Fails at once, with the URL in the message, when the server does not answer. */
export async function probeBenchDatabase(): Promise<void> {
  try {
    await admin((c) => c.query('SELECT 1'));
  } catch (err) {
    const shown = BENCH_ADMIN_URL.replace(/\/\/[^@/]*@/, '//…@');
    throw new Error(`PostgreSQL at ${shown} (ASKRELAY_BENCH_DATABASE_URL) did not answer: ${(err as Error).message}. Start it, or set BENCH_NODES= to skip the PostgreSQL columns.`);
  }
}

/** `asyncCommit`: diagnosis only, the database's commits do not wait for the WAL flush (synchronous_commit = off). */
export async function benchDatabase(options: { asyncCommit?: boolean } = {}): Promise<BenchDatabase> {
  const name = `askrelay_bench_${randomBytes(6).toString('hex')}`;
  await admin(async (c) => {
    await c.query(`CREATE DATABASE ${name}`);
    if (options.asyncCommit) await c.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    // WITH (FORCE): a node that did not stop cleanly does not keep the database.
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/**
 * CPU (user + system, ms) of the server processes serving `database`, by pid: each backend's
 * title names its database. Only when the server runs on this machine and /proc is readable;
 * otherwise empty. The shared processes (WAL writer, checkpointer) are not counted.
 */
export function backendCpu(database: string): Map<number, number> {
  const out = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  const tickMs = 1000 / 100; // USER_HZ is 100 on Linux
  for (const pid of pids) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      if (!cmdline.startsWith('postgres:') || !cmdline.includes(` ${database} `)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      // Fields after the command name (which may hold spaces): utime is the 14th, stime the 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(pid), (Number(fields[11]) + Number(fields[12])) * tickMs);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

/** CPU spent between two backendCpu() readings; a backend that ended meanwhile is lost. */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** Sums over the samples (divide by `samples` for the means), so that blocks add up. */
export interface Activity {
  samples: number;
  /** Connections to the database, summed over the samples. */
  connections: number;
  /** Backends in each busy state, summed over the samples: `CPU` (active, no wait), `Type:Event` (active, waiting), `idle in transaction`. */
  busy: Record<string, number>;
}

export function addActivity(a: Activity | undefined, b: Activity): Activity {
  if (!a) return b;
  const busy = { ...a.busy };
  for (const [k, v] of Object.entries(b.busy)) busy[k] = (busy[k] ?? 0) + v;
  return { samples: a.samples + b.samples, connections: a.connections + b.connections, busy };
}

/**
 * Samples pg_stat_activity for `database` every `everyMs` from the admin connection (which is
 * not counted): where the backends spend their time (running, waiting on a lock, on the WAL,
 * or idle inside a transaction while its client works).
 */
export async function sampleActivity(database: string, everyMs: number): Promise<{ stop(): Promise<Activity> }> {
  const client = new pg.Client({ connectionString: BENCH_ADMIN_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  const busy: Record<string, number> = {};
  let samples = 0;
  let connections = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ state: string | null; wait_event_type: string | null; wait_event: string | null }>(
        `SELECT state, wait_event_type, wait_event FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
        [database],
      );
      samples++;
      connections += rows.length;
      for (const row of rows) {
        const key =
          row.state === 'active' ? (row.wait_event_type ? `${row.wait_event_type}:${row.wait_event}` : 'CPU') : row.state?.startsWith('idle in transaction') ? 'idle in transaction' : undefined;
        // A LISTEN connection waits in ClientRead while idle: only the busy states count.
        if (key && key !== 'Client:ClientRead') busy[key] = (busy[key] ?? 0) + 1;
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop.finally(() => client.end());
      return { samples, connections, busy };
    },
  };
}
