// Several nodes as one relay: the same create → SSE / answer → release cycle on the embedded
// SQLite relay and on 1, 2 and 3 relay processes sharing one PostgreSQL database, one cycle
// at a time (latency) and with concurrent clients (throughput). The cycles of N nodes cross
// nodes (bench/node-cluster.ts): what they cost beyond one node is the price of "several
// nodes as one relay", the events travelling between nodes through the database.
//
// Every cluster runs for the whole table and the columns take turns in rounds (the order
// reversed every other round), so that a machine whose load drifts, as a shared one does,
// weighs on every column alike instead of on whichever ran last.

import { performance } from 'node:perf_hooks';
import { addActivity, backendCpu, cpuBetween, sampleActivity, type Activity } from './bench-database.js';
import { stats, type Stats } from './client.js';
import { Cluster, columnLabel, concurrent, cycle, type Column, type Sample } from './node-cluster.js';

export { columnLabel, type Column } from './node-cluster.js';

export interface NodesOptions {
  /** Sequential cycles measured for the latency rows, over all rounds (after `warmup` unmeasured ones). */
  iterations: number;
  warmup: number;
  /** Concurrent clients for the throughput rows, each running cycles back to back. */
  clients: number;
  /** How long each column runs its clients, over all rounds (each block after a short warm-up). */
  seconds: number;
  rounds: number;
  /** How long a cycle waits for an event from another node before it fails the column. */
  crossNodeTimeoutMs: number;
  /** Extra node flags for the relay processes (BENCH_CPU_PROF). */
  execArgv: string[];
  /** Diagnosis: the bench databases commit without waiting for the WAL flush. */
  asyncCommit?: boolean;
}

export interface NodesRun {
  column: Column;
  label: string;
  /** Set when the column could not be measured (a cross-node event that never came, say). */
  error?: string;
  sse?: Stats;
  release?: Stats;
  /** The same two measurements, taken during the throughput blocks. */
  loadSse?: Stats;
  loadRelease?: Stats;
  cycles?: number;
  perSecond?: number;
  /** CPU (ms, user + system) per throughput cycle: all relay processes, the database's backends, this harness. */
  cpu?: { nodes: number; database?: number; harness: number };
  /** pg_stat_activity sampled during the throughput blocks (PostgreSQL columns). */
  activity?: Activity;
}

type Times = { ok: true; times: Record<string, number[]>; cpu: NodeJS.CpuUsage };
const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / 1000;

/** What one column gathers over its blocks. */
class Tally {
  serial = 0;
  latency: Sample[] = [];
  load: Sample[] = [];
  seconds = 0;
  /** Cycles per second in the last block, for the progress line. */
  lastRate = 0;
  cpu = { nodes: 0, database: 0, harness: 0 };
  activity?: Activity;
  error?: string;

  constructor(
    readonly column: Column,
    readonly cluster?: Cluster,
  ) {}

  /** One block: `iterations` cycles one at a time, then `ms` of `clients` concurrent ones. */
  async block(options: NodesOptions, iterations: number, ms: number, warmup: number): Promise<void> {
    const cluster = this.cluster!;
    const n = cluster.nodes.length;
    const label = columnLabel(this.column);
    const timeoutMs = options.crossNodeTimeoutMs;
    const once = () => {
      const a = this.serial % n;
      return cycle(cluster, a, (a + 1) % n, `nodes ${label} ${this.serial++}`, timeoutMs);
    };
    for (let i = 0; i < warmup; i++) await once();
    for (let i = 0; i < iterations; i++) this.latency.push(await once());

    await concurrent(cluster, options.clients, Math.min(1000, ms / 5), `warm ${label} ${this.serial++}`, timeoutMs);
    const nodeCpu = () => Promise.all(cluster.nodes.map(async (node) => (await node.call<Times>({ cmd: 'serverTimes', reset: true })).cpu));
    const db = cluster.db;
    const sampler = db ? await sampleActivity(db.name, 20) : undefined;
    const [n0, d0, h0] = [await nodeCpu(), db ? backendCpu(db.name) : undefined, process.cpuUsage()];
    let load: Awaited<ReturnType<typeof concurrent>>;
    try {
      load = await concurrent(cluster, options.clients, ms, `load ${label} ${this.serial++}`, timeoutMs);
    } finally {
      const activity = await sampler?.stop();
      if (activity) this.activity = addActivity(this.activity, activity);
    }
    const [n1, d1, h1] = [await nodeCpu(), db ? backendCpu(db.name) : undefined, process.cpuUsage()];
    this.load.push(...load.samples);
    this.seconds += load.seconds;
    this.lastRate = load.samples.length / load.seconds;
    this.cpu.nodes += n0.reduce((sum, c0, i) => sum + cpuMs(c0, n1[i]), 0);
    this.cpu.database += d0 && d1 ? cpuBetween(d0, d1) : 0;
    this.cpu.harness += cpuMs(h0, h1);
  }

  result(): NodesRun {
    const label = columnLabel(this.column);
    if (this.error) return { column: this.column, label, error: this.error };
    const cycles = this.load.length;
    return {
      column: this.column,
      label,
      sse: stats(this.latency.map((s) => s.sse)),
      release: stats(this.latency.map((s) => s.release)),
      loadSse: stats(this.load.map((s) => s.sse)),
      loadRelease: stats(this.load.map((s) => s.release)),
      cycles,
      perSecond: cycles / this.seconds,
      cpu: {
        nodes: this.cpu.nodes / cycles,
        // backendCpu reads /proc: none when the server runs elsewhere.
        ...(this.column.store === 'postgres' && this.cpu.database > 0 ? { database: this.cpu.database / cycles } : {}),
        harness: this.cpu.harness / cycles,
      },
      ...(this.activity ? { activity: this.activity } : {}),
    };
  }
}

/** Every column, in rounds; a column that fails is reported as failed and the others go on. */
export async function nodesColumns(columns: Column[], options: NodesOptions, log: (line: string) => void): Promise<NodesRun[]> {
  const tallies: Tally[] = [];
  try {
    for (const column of columns) {
      try {
        tallies.push(new Tally(column, await Cluster.start(column, options.execArgv, options.asyncCommit)));
      } catch (err) {
        log(`  ${columnLabel(column)} did not start: ${(err as Error).message}`);
        const failed = new Tally(column);
        failed.error = `did not start: ${(err as Error).message}`;
        tallies.push(failed);
      }
    }
    const rounds = Math.max(1, options.rounds);
    const iterations = Math.max(1, Math.round(options.iterations / rounds));
    const ms = (options.seconds * 1000) / rounds;
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      for (const tally of round % 2 === 0 ? tallies : [...tallies].reverse()) {
        if (tally.error) continue;
        try {
          await tally.block(options, iterations, ms, round === 0 ? options.warmup : Math.ceil(options.warmup / 10));
        } catch (err) {
          tally.error = (err as Error).message;
          log(`  ${columnLabel(tally.column)} failed: ${tally.error}`);
        }
      }
      const line = tallies.map((t) => `${columnLabel(t.column)} ${t.error ? 'failed' : `${t.lastRate.toFixed(0)}/s`}`).join(', ');
      log(`  round ${round + 1}/${rounds} (${((performance.now() - started) / 1000).toFixed(0)} s): ${line}`);
    }
    return tallies.map((t) => t.result());
  } finally {
    await Promise.all(tallies.map((t) => t.cluster?.stop()));
  }
}

export function nodesTable(runs: NodesRun[], clients: number, ms: (v: number) => string): { rows: string[][]; notes: string[]; failures: string[] } {
  type Measured = Required<Omit<NodesRun, 'error' | 'activity'>> & Pick<NodesRun, 'activity'>;
  const one = runs.find((r) => r.column.store === 'postgres' && r.column.nodes === 1 && !r.error);
  const pair = (s: Stats) => `${ms(s.p50)} / ${ms(s.p99)}`;
  const row = (name: string, f: (r: Measured) => string) => [name, ...runs.map((r) => (r.error ? 'failed' : f(r as Measured)))];
  const rows: string[][] = [
    ['measurement (0 pending)', ...runs.map((r) => r.label)],
    row('create → SSE card.created, p50 / p99', (r) => pair(r.sse)),
    row('answer → wait released, p50 / p99', (r) => pair(r.release)),
    row(`cycles/s, ${clients} clients`, (r) => r.perSecond.toFixed(0)),
    row('  ratio to PG 1 node', (r) => (one ? `${(r.perSecond / one.perSecond!).toFixed(2)}×` : '-')),
    row(`  (create → SSE under ${clients} clients, p50 / p99)`, (r) => pair(r.loadSse)),
    row(`  (answer → release under ${clients} clients, p50 / p99)`, (r) => pair(r.loadRelease)),
    row('  (relay CPU per cycle, all nodes)', (r) => ms(r.cpu.nodes)),
    row('  (PostgreSQL backends CPU per cycle)', (r) => (r.cpu.database === undefined ? '-' : ms(r.cpu.database))),
    row('  (bench client CPU per cycle)', (r) => ms(r.cpu.harness)),
    row('  (PostgreSQL backends busy, mean)', (r) => (r.activity ? (busySum(r.activity) / r.activity.samples).toFixed(2) : '-')),
  ];
  const notes = runs.flatMap((r) => (r.activity && !r.error ? [`${r.label}, PostgreSQL during the ${clients}-client blocks: ${describe(r.activity)}`] : []));
  const failures = runs.filter((r) => r.error).map((r) => `${r.label} failed: ${r.error}`);
  return { rows, notes, failures };
}

const busySum = (a: Activity) => Object.values(a.busy).reduce((x, y) => x + y, 0);

/** "20.0 connections; backends busy 2.10 on average = CPU 1.20, IO:WALSync 0.50, …". */
function describe(a: Activity): string {
  const mean = (v: number) => (a.samples ? v / a.samples : 0);
  const parts = Object.entries(a.busy)
    .sort((x, y) => y[1] - x[1])
    .filter(([, v]) => mean(v) >= 0.01)
    .map(([k, v]) => `${k} ${mean(v).toFixed(2)}`);
  return `${mean(a.connections).toFixed(1)} connections; backends busy ${mean(busySum(a)).toFixed(2)} on average${parts.length ? ` = ${parts.join(', ')}` : ''} (${a.samples} samples)`;
}
