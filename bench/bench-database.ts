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

export async function benchDatabase(): Promise<BenchDatabase> {
  const name = `askrelay_bench_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
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
