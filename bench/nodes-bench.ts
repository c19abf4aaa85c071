// Several nodes as one relay: the same create → SSE / answer → release cycle on the embedded
// SQLite relay and on 1, 2 and 3 relay processes sharing one PostgreSQL database, first one
// cycle at a time (latency), then with concurrent clients (throughput).
//
// On N nodes a cycle crosses nodes the way an agent and a human on different nodes do: the
// card is created on node a (the agent's), its card.created is awaited on node b's event
// stream (the human's page), the agent's long poll waits on node a and the answer goes to
// node b. With one node a = b. What a cycle costs beyond one node is the price of "several
// nodes as one relay": the events travelling between nodes through the database.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { backendCpu, benchDatabase, cpuBetween, sampleActivity, type Activity, type BenchDatabase } from './bench-database.js';
import { Child, SseClient, request, stats, type SseEvent, type Stats } from './client.js';
import { BENCH_ANSWER, benchDraft } from './draft.js';

export type Column = { store: 'sqlite' } | { store: 'postgres'; nodes: number };

export interface NodesOptions {
  /** Sequential cycles measured for the latency rows (after `warmup` unmeasured ones). */
  iterations: number;
  warmup: number;
  /** Concurrent clients for the throughput rows, each running cycles back to back. */
  clients: number;
  /** How long the throughput phase runs (after a warm-up of a fifth of it). */
  seconds: number;
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
  /** The same two measurements, taken during the throughput phase. */
  loadSse?: Stats;
  loadRelease?: Stats;
  cycles?: number;
  perSecond?: number;
  /** CPU (ms, user + system) per throughput cycle: all relay processes, the database's backends, this harness. */
  cpu?: { nodes: number; database?: number; harness: number };
  /** pg_stat_activity sampled during the throughput phase (PostgreSQL columns). */
  activity?: Activity;
}

const AUDIT_KEY = 'bench-audit-key-0123456789abcdef';
const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / 1000;
type Times = { ok: true; times: Record<string, number[]>; cpu: NodeJS.CpuUsage };

export const columnLabel = (c: Column) => (c.store === 'sqlite' ? 'SQLite' : `PG ${c.nodes} node${c.nodes === 1 ? '' : 's'}`);

/** One event stream on a node, handing each card.created to whoever expects that title. */
class Watch {
  private readonly expected = new Map<string, (e: SseEvent) => void>();

  constructor(readonly sse: SseClient) {
    sse.on((e) => {
      if (e.event !== 'card.created') return;
      const title = (JSON.parse(e.data) as { title?: string }).title;
      const hit = title === undefined ? undefined : this.expected.get(title);
      if (!hit) return;
      this.expected.delete(title!);
      hit(e);
    });
  }

  /** Registered before the POST is sent, so an event faster than its response is not missed. */
  expect(title: string) {
    let resolve!: (e: SseEvent) => void;
    const seen = new Promise<SseEvent>((r) => (resolve = r));
    this.expected.set(title, resolve);
    return {
      within: (ms: number, failure: string) => withTimeout(seen, ms, failure),
      cancel: () => this.expected.delete(title),
    };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, failure: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(failure)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

class Cluster {
  private constructor(
    readonly nodes: Child[],
    readonly watches: Watch[],
    readonly db: BenchDatabase | undefined,
    private readonly dirs: string[],
  ) {}

  static async start(column: Column, execArgv: string[], asyncCommit = false): Promise<Cluster> {
    const count = column.store === 'sqlite' ? 1 : column.nodes;
    const db = column.store === 'postgres' ? await benchDatabase({ asyncCommit }) : undefined;
    const dirs: string[] = [];
    const nodes: Child[] = [];
    const watches: Watch[] = [];
    const cluster = new Cluster(nodes, watches, db, dirs);
    try {
      // One after the other: the bench measures running nodes, not a concurrent start.
      for (let i = 0; i < count; i++) {
        dirs.push(mkdtempSync(join(tmpdir(), 'askrelay-bench-node-')));
        // Every node: its own data folder, the same token (the bench child sets it) and audit key.
        const env = db ? { ASKRELAY_DATABASE_URL: db.url, ASKRELAY_NODE_ID: `bench-${i}`, ASKRELAY_AUDIT_KEY: AUDIT_KEY } : {};
        nodes.push(await Child.start(['relay', dirs[i]], execArgv, { BENCH_RELAY_ENV: JSON.stringify(env) }));
      }
      for (const node of nodes) {
        const sse = new SseClient();
        watches.push(new Watch(sse));
        await sse.open(node.url, '/api/events', node.token);
      }
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.watches.forEach((w) => w.sse.close());
    await Promise.all(this.nodes.map((n) => n.stop()));
    this.dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
    await this.db?.drop();
  }
}

/** One cycle: create on node a, seen on node b's stream; long poll on a, answered on b. */
async function cycle(cluster: Cluster, a: number, b: number, title: string, timeoutMs: number) {
  const node = cluster.nodes[a];
  const other = cluster.nodes[b];
  const seconds = Math.ceil(timeoutMs / 1000);
  const expectation = cluster.watches[b].expect(title);
  const t0 = performance.now();
  const post = await request(node.url, 'POST', '/api/cards', { token: node.token, json: benchDraft(title) });
  if (post.status !== 201) {
    expectation.cancel();
    throw new Error(`POST /api/cards on node ${a}: HTTP ${post.status} ${post.text}`);
  }
  const created = await expectation.within(
    timeoutMs,
    `card.created of a card made on node ${a} did not reach node ${b}'s event stream within ${seconds} s` +
      (a === b ? '' : ': events do not cross nodes (is the event bus wired into the relay?)'),
  );
  const id = (JSON.parse(post.text) as { id: string }).id;

  // The server ends the long poll with 204 after `seconds`: a release that never comes fails
  // the column instead of hanging it.
  const wait = request(node.url, 'GET', `/api/cards/${id}/wait?timeout=${seconds}`, { token: node.token });
  // Barrier (see docs/performance.md): once node a answers this, it has read the long poll.
  const barrier = await request(node.url, 'GET', '/api/health');
  if (barrier.status !== 200) throw new Error(`health on node ${a}: HTTP ${barrier.status}`);
  const t1 = performance.now();
  const answer = await request(other.url, 'POST', `/api/cards/${id}/answer`, { token: other.token, json: { answers: BENCH_ANSWER } });
  const released = await wait;
  if (answer.status !== 200) throw new Error(`answer on node ${b}: HTTP ${answer.status} ${answer.text}`);
  if (released.status === 204) {
    throw new Error(
      `the answer on node ${b} did not release the long poll on node ${a} within ${seconds} s` +
        (a === b ? '' : ': events do not cross nodes (is the event bus wired into the relay?)'),
    );
  }
  if (released.status !== 200 || (JSON.parse(released.text) as { status: string }).status !== 'answered') {
    throw new Error(`wait on node ${a}: HTTP ${released.status} ${released.text}`);
  }
  return { sse: created.at - t0, release: released.at - t1 };
}

type Sample = Awaited<ReturnType<typeof cycle>>;

/** `clients` loops of back-to-back cycles until `ms` has passed; client k lives on node k mod N. */
async function concurrent(cluster: Cluster, clients: number, ms: number, tag: string, timeoutMs: number) {
  const n = cluster.nodes.length;
  const samples: Sample[] = [];
  const errors: unknown[] = [];
  const start = performance.now();
  const end = start + ms;
  let serial = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, k) => {
      const a = k % n;
      const b = (a + 1) % n;
      try {
        while (!errors.length && performance.now() < end) samples.push(await cycle(cluster, a, b, `${tag} c${k} ${serial++}`, timeoutMs));
      } catch (err) {
        errors.push(err);
      }
    }),
  );
  if (errors.length) throw errors[0];
  // Cycles started before the end finish after it: count them over the time they really took.
  return { samples, seconds: (performance.now() - start) / 1000 };
}

async function measure(column: Column, options: NodesOptions): Promise<NodesRun> {
  const label = columnLabel(column);
  const cluster = await Cluster.start(column, options.execArgv, options.asyncCommit);
  try {
    const n = cluster.nodes.length;
    const { warmup, iterations, crossNodeTimeoutMs: timeoutMs } = options;
    let serial = 0;
    const once = () => {
      const a = serial % n;
      return cycle(cluster, a, (a + 1) % n, `nodes ${label} ${serial++}`, timeoutMs);
    };
    for (let i = 0; i < warmup; i++) await once();
    const samples: Sample[] = [];
    for (let i = 0; i < iterations; i++) samples.push(await once());

    await concurrent(cluster, options.clients, (options.seconds * 1000) / 5, `warm ${label}`, timeoutMs);
    const nodeCpu = () => Promise.all(cluster.nodes.map(async (node) => (await node.call<Times>({ cmd: 'serverTimes', reset: true })).cpu));
    const sampler = cluster.db ? await sampleActivity(cluster.db.name, 20) : undefined;
    const [n0, d0, h0] = [await nodeCpu(), cluster.db ? backendCpu(cluster.db.name) : undefined, process.cpuUsage()];
    let load: Awaited<ReturnType<typeof concurrent>>;
    let activity: Activity | undefined;
    try {
      load = await concurrent(cluster, options.clients, options.seconds * 1000, `load ${label}`, timeoutMs);
    } finally {
      activity = await sampler?.stop();
    }
    const [n1, d1, h1] = [await nodeCpu(), cluster.db ? backendCpu(cluster.db.name) : undefined, process.cpuUsage()];
    const cycles = load.samples.length;
    const database = d0 && d1 && d1.size ? cpuBetween(d0, d1) / cycles : undefined;
    return {
      column,
      label,
      sse: stats(samples.map((s) => s.sse)),
      release: stats(samples.map((s) => s.release)),
      loadSse: stats(load.samples.map((s) => s.sse)),
      loadRelease: stats(load.samples.map((s) => s.release)),
      cycles,
      perSecond: cycles / load.seconds,
      cpu: {
        nodes: n0.reduce((sum, c0, i) => sum + cpuMs(c0, n1[i]), 0) / cycles,
        ...(database !== undefined ? { database } : {}),
        harness: cpuMs(h0, h1) / cycles,
      },
      ...(activity ? { activity } : {}),
    };
  } finally {
    await cluster.stop();
  }
}

/** Every column in turn; a column that fails is reported as failed and the next one still runs. */
export async function nodesColumns(columns: Column[], options: NodesOptions, log: (line: string) => void): Promise<NodesRun[]> {
  const runs: NodesRun[] = [];
  for (const column of columns) {
    const label = columnLabel(column);
    log(`${label}: ${options.iterations} cycles one at a time, then ${options.clients} clients for ${options.seconds} s…`);
    try {
      const run = await measure(column, options);
      log(`  ${run.perSecond!.toFixed(0)} cycles/s`);
      runs.push(run);
    } catch (err) {
      log(`  ${label} failed: ${(err as Error).message}`);
      runs.push({ column, label, error: (err as Error).message });
    }
  }
  return runs;
}

export function nodesTable(runs: NodesRun[], clients: number, ms: (v: number) => string): { rows: string[][]; notes: string[] } {
  const one = runs.find((r) => r.column.store === 'postgres' && r.column.nodes === 1 && !r.error);
  const cell = (r: NodesRun, f: (r: Required<Omit<NodesRun, 'error'>>) => string) => (r.error ? 'failed' : f(r as Required<Omit<NodesRun, 'error'>>));
  const pair = (s: Stats) => `${ms(s.p50)} / ${ms(s.p99)}`;
  const row = (name: string, f: (r: Required<Omit<NodesRun, 'error'>>) => string) => [name, ...runs.map((r) => cell(r, f))];
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
    row('  (PostgreSQL backends busy, mean)', (r) => (r.activity ? sum(r.activity.busy).toFixed(2) : '-')),
  ];
  const notes = runs.flatMap((r) => (r.activity ? [`${r.label}, PostgreSQL during the ${clients}-client run: ${describe(r.activity)}`] : []));
  notes.push(...runs.filter((r) => r.error).map((r) => `${r.label} failed: ${r.error}`));
  return { rows, notes };
}

const sum = (busy: Record<string, number>) => Object.values(busy).reduce((a, b) => a + b, 0);

/** "20.0 connections; busy 2.10 = CPU 1.20, IO:WALSync 0.50, …" (means over the samples). */
function describe(a: Activity): string {
  const parts = Object.entries(a.busy)
    .sort((x, y) => y[1] - x[1])
    .filter(([, v]) => v >= 0.01)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`);
  return `${a.connections.toFixed(1)} connections; backends busy ${sum(a.busy).toFixed(2)} on average${parts.length ? ` = ${parts.join(', ')}` : ''} (${a.samples} samples)`;
}
