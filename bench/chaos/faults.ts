import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { waitUntil } from '../../test/support/wait-until.js';
import { databaseOf, type ChaosCluster } from './cluster.js';
import type { FaultKind, FaultRecord } from './history.js';
import type { ChaosOptions } from './options.js';
import type { Random } from './random.js';
import { pause } from './workload.js';

// The faults, one at a time. Each returns what it did and, for a node it took down, when
// that node answered /api/health again; each undoes itself in a finally (the node thawed,
// the folder writable, the lock released) whatever happens to the run.

export interface FaultContext {
  cluster: ChaosCluster;
  options: ChaosOptions;
  random: Random;
  signal: AbortSignal;
}

type Made = Omit<FaultRecord, 'kind' | 'at' | 'endedAt'>;

const run = promisify(execFile);

/** Tables every request or change touches: a lock on one slows the whole relay. */
const HOT_TABLES = ['cards', 'cards', 'audit', 'mcp_calls', 'nodes'];

/** Bind mounts made read-only and not yet undone: undone on the way out, however the run ends. */
const mounted = new Set<string>();
process.once('exit', () => {
  for (const dir of mounted) execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
});

async function healthyAgain(ctx: FaultContext, node: number, from: number): Promise<number | undefined> {
  try {
    await waitUntil(() => ctx.cluster.healthy(node), `node-${node} to answer /api/health`, 60_000);
    return Date.now() - from;
  } catch {
    return undefined;
  }
}

async function sigkill(ctx: FaultContext, node: number): Promise<Made> {
  const at = Date.now();
  await ctx.cluster.nodes.kill(node, 'SIGKILL');
  // Restarted at once, on its data folder, name and port (the balancer finds it again). Once:
  // a supervisor gets one try, so a refused start (the folder still locked, say) is no
  // recovery, and the run counts the node as never healthy again.
  try {
    await ctx.cluster.nodes.restart(node);
    return { node, detail: `node-${node}`, healthyAfterMs: Date.now() - at };
  } catch (err) {
    return { node, detail: `node-${node}, refused to start again (${(err as Error).message.split('\n')[0]})` };
  }
}

async function sigstop(ctx: FaultContext, node: number): Promise<Made> {
  const { pid } = ctx.cluster.nodes.nodes[node];
  process.kill(pid, 'SIGSTOP');
  try {
    await pause(ctx.options.stopMs, ctx.signal);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const healthyAfterMs = await healthyAgain(ctx, node, Date.now());
  return { node, detail: `node-${node}`, ...(healthyAfterMs === undefined ? {} : { healthyAfterMs }) };
}

async function terminate(ctx: FaultContext, node: number): Promise<Made> {
  const { rows } = await ctx.cluster.db.query<{ n: number }>(
    'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
    [databaseOf(ctx.cluster.nodes.db.url), ctx.cluster.appName(node)],
  );
  return { node, detail: `node-${node}, ${rows[0].n} connections` };
}

/**
 * Root ignores file modes, and the nodes run as root here, so a chmod would change nothing:
 * the folder is bind-mounted onto itself and the mount made read-only, which refuses root's
 * writes too (EROFS).
 */
async function readOnly(ctx: FaultContext, node: number): Promise<Made> {
  const dir = ctx.cluster.nodes.nodes[node].dataDir;
  try {
    await run('mount', ['--bind', dir, dir]);
  } catch (err) {
    return { node, detail: `node-${node}`, failed: `mount --bind refused (${(err as Error).message.split('\n')[0]}); run as root where mounts are allowed` };
  }
  mounted.add(dir);
  try {
    await run('mount', ['-o', 'remount,ro,bind', dir]);
    let refused = false;
    try {
      writeFileSync(join(dir, '.chaos-probe'), 'x');
    } catch (err) {
      refused = (err as NodeJS.ErrnoException).code === 'EROFS';
    }
    if (!refused) return { node, detail: `node-${node}`, failed: 'the folder stayed writable' };
    await pause(ctx.options.readOnlyMs, ctx.signal);
    return { node, detail: `node-${node}, ${dir}` };
  } finally {
    await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
    mounted.delete(dir);
  }
}

async function slowDb(ctx: FaultContext): Promise<Made> {
  const table = ctx.random.pick(HOT_TABLES);
  const client = await ctx.cluster.db.connect();
  try {
    await client.query("SET lock_timeout = '5s'");
    await client.query('BEGIN');
    try {
      await client.query(`LOCK TABLE ${pg.escapeIdentifier(table)} IN ACCESS EXCLUSIVE MODE`);
    } catch (err) {
      return { detail: table, failed: `could not lock ${table}: ${(err as Error).message}` };
    }
    await pause(ctx.options.lockMs, ctx.signal);
    return { detail: `${table} for ${ctx.options.lockMs / 1000} s` };
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
}

export async function makeFault(kind: FaultKind, ctx: FaultContext): Promise<FaultRecord> {
  const node = ctx.random.int(0, ctx.options.nodes - 1);
  const at = Date.now();
  const made =
    kind === 'sigkill' ? await sigkill(ctx, node)
    : kind === 'sigstop' ? await sigstop(ctx, node)
    : kind === 'terminate' ? await terminate(ctx, node)
    : kind === 'read-only' ? await readOnly(ctx, node)
    : await slowDb(ctx);
  return { kind, at, endedAt: Date.now(), ...made };
}

/** Every kind once in a shuffled order, then again in another: no kind waits long for its turn. */
export function faultOrder(random: Random, kinds: readonly FaultKind[]): () => FaultKind {
  let round: FaultKind[] = [];
  return () => {
    if (!round.length) round = random.shuffle(kinds);
    return round.shift()!;
  };
}
