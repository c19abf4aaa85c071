// askrelay against its floor (issue 20): the same keep-alive clients doing the same card
// cycles against the relay and against bench/floor-server.ts (the same routes and the same
// store work without the relay's logic), on SQLite and on PostgreSQL, side by side in one run.
//
// Blocks, each run against every column in turn (rounds, order reversed every other round, so
// a machine whose load drifts weighs on every column alike):
//   latency   one cycle at a time with one SSE stream: create → card.created on the stream,
//             then a long poll, answer → the long poll released;
//   plain     N clients doing create + answer back to back (no streams, no waiters), N = 1 and 8;
//   streams   the same 8 clients with 100 SSE streams open and a long poll on every card.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchDatabase, type BenchDatabase } from './bench-database.js';
import { Child, SseClient, request, stats, type Stats } from './client.js';
import { BENCH_ANSWER, benchDraft } from './draft.js';
import { Watch } from './node-cluster.js';

export type Impl = 'floor' | 'relay';
export type Store = 'sqlite' | 'postgres';

export interface ThroughputOptions {
  iterations: number;
  warmup: number;
  clients: number;
  streams: number;
  /** Seconds each throughput block runs, over all rounds. */
  seconds: number;
  rounds: number;
  stores: Store[];
  /** Diagnosis (a profile of one block): the blocks to run; the others report nothing. */
  blocks?: Block[];
  execArgv: string[];
}

export type Block = 'latency' | 'one' | 'many' | 'streamed';

export interface ThroughputRun {
  impl: Impl;
  store: Store;
  error?: string;
  sse?: Stats;
  release?: Stats;
  /** cycles per second, and relay CPU (ms) per cycle, for each block. */
  one?: Rate;
  many?: Rate;
  streamed?: Rate;
}

interface Rate {
  perSecond: number;
  cpuPerCycle: number;
}

type Times = { ok: true; times: Record<string, number[]>; cpu: NodeJS.CpuUsage };
const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / 1000;

function expectStatus(what: string, got: { status: number; text: string }, status: number) {
  if (got.status !== status) throw new Error(`${what}: HTTP ${got.status} ${got.text.slice(0, 300)}`);
}

class Target {
  serial = 0;
  latency: { sse: number; release: number }[] = [];
  tallies = { one: new Tally(), many: new Tally(), streamed: new Tally() };
  error?: string;

  private constructor(
    readonly impl: Impl,
    readonly store: Store,
    readonly child: Child,
    readonly watch: Watch,
    private readonly dir: string,
    private readonly db?: BenchDatabase,
  ) {}

  static async start(impl: Impl, store: Store, execArgv: string[]): Promise<Target> {
    const db = store === 'postgres' ? await benchDatabase() : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-throughput-'));
    try {
      const args = impl === 'floor' ? ['floor', store, ...(db ? [db.url] : [])] : ['relay', dir];
      const env: Record<string, string> = impl === 'relay' && db ? { BENCH_RELAY_ENV: JSON.stringify({ ASKRELAY_DATABASE_URL: db.url, ASKRELAY_NODE_ID: 'bench-0' }) } : {};
      const child = await Child.start(args, execArgv, env);
      const sse = new SseClient();
      await sse.open(child.url, '/api/events', child.token);
      return new Target(impl, store, child, new Watch(sse), dir, db);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      await db?.drop();
      throw err;
    }
  }

  get label() {
    return `${this.impl} ${this.store === 'sqlite' ? 'SQLite' : 'PG'}`;
  }

  private create(title: string) {
    return request(this.child.url, 'POST', '/api/cards', { token: this.child.token, json: benchDraft(title) });
  }

  private answer(id: string) {
    return request(this.child.url, 'POST', `/api/cards/${id}/answer`, { token: this.child.token, json: { answers: BENCH_ANSWER } });
  }

  /** create + answer, nothing waiting. */
  async plain(): Promise<void> {
    const post = await this.create(`${this.label} ${this.serial++}`);
    expectStatus('POST /api/cards', post, 201);
    expectStatus('POST /answer', await this.answer((JSON.parse(post.text) as { id: string }).id), 200);
  }

  /** create, a long poll on the card, answer, the long poll released; with `see`, card.created awaited on the stream. */
  async waited(see: boolean): Promise<{ sse: number; release: number }> {
    const title = `${this.label} ${this.serial++}`;
    const expectation = see ? this.watch.expect(title) : undefined;
    const t0 = performance.now();
    const post = await this.create(title);
    if (post.status !== 201) expectation?.cancel();
    expectStatus('POST /api/cards', post, 201);
    const seen = expectation ? (await expectation.within(10_000, `card.created did not reach the stream of ${this.label}`)).at : post.at;
    const id = (JSON.parse(post.text) as { id: string }).id;
    const wait = request(this.child.url, 'GET', `/api/cards/${id}/wait?timeout=10`, { token: this.child.token });
    // Once the server answers this, it has read the long poll (requests on one agent are read in order).
    expectStatus('GET /api/health', await request(this.child.url, 'GET', '/api/health'), 200);
    const t1 = performance.now();
    expectStatus('POST /answer', await this.answer(id), 200);
    const released = await wait;
    expectStatus(`GET /api/cards/${id}/wait`, released, 200);
    return { sse: seen - t0, release: released.at - t1 };
  }

  async cpu(): Promise<NodeJS.CpuUsage> {
    return (await this.child.call<Times>({ cmd: 'serverTimes', reset: true })).cpu;
  }

  async stop(): Promise<void> {
    this.watch.sse.close();
    await this.child.stop();
    rmSync(this.dir, { recursive: true, force: true });
    await this.db?.drop();
  }
}

class Tally {
  cycles = 0;
  seconds = 0;
  cpu = 0;
  add(cycles: number, seconds: number, cpu: number) {
    this.cycles += cycles;
    this.seconds += seconds;
    this.cpu += cpu;
  }
  rate(): Rate | undefined {
    return this.cycles ? { perSecond: this.cycles / this.seconds, cpuPerCycle: this.cpu / this.cycles } : undefined;
  }
}

/** `clients` loops running `cycle` back to back for `ms`; returns cycles done and seconds taken. */
async function loops(clients: number, ms: number, cycle: () => Promise<unknown>) {
  const start = performance.now();
  const end = start + ms;
  let cycles = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        await cycle();
        cycles++;
      }
    }),
  );
  return { cycles, seconds: (performance.now() - start) / 1000 };
}

async function measure(target: Target, tally: Tally, clients: number, ms: number, cycle: () => Promise<unknown>) {
  await loops(clients, Math.min(500, ms / 5), cycle);
  const c0 = await target.cpu();
  const { cycles, seconds } = await loops(clients, ms, cycle);
  tally.add(cycles, seconds, cpuMs(c0, await target.cpu()));
}

async function block(target: Target, options: ThroughputOptions, iterations: number, ms: number, warmup: number) {
  const runs = (b: Block) => !options.blocks || options.blocks.includes(b);
  if (runs('latency')) {
    for (let i = 0; i < warmup; i++) await target.waited(true);
    for (let i = 0; i < iterations; i++) target.latency.push(await target.waited(true));
  }
  if (runs('one')) await measure(target, target.tallies.one, 1, ms, () => target.plain());
  if (runs('many')) await measure(target, target.tallies.many, options.clients, ms, () => target.plain());
  if (!runs('streamed')) return;
  const streams = await Promise.all(
    Array.from({ length: options.streams }, async () => {
      const sse = new SseClient();
      await sse.open(target.child.url, '/api/events', target.child.token);
      return sse;
    }),
  );
  try {
    await measure(target, target.tallies.streamed, options.clients, ms, () => target.waited(false));
  } finally {
    streams.forEach((s) => s.close());
  }
}

export async function throughputColumns(options: ThroughputOptions, log: (line: string) => void): Promise<ThroughputRun[]> {
  const targets: (Target | ThroughputRun)[] = [];
  try {
    for (const store of options.stores) {
      for (const impl of ['floor', 'relay'] as const) {
        try {
          targets.push(await Target.start(impl, store, options.execArgv));
        } catch (err) {
          log(`  ${impl} ${store} did not start: ${(err as Error).message}`);
          targets.push({ impl, store, error: `did not start: ${(err as Error).message}` });
        }
      }
    }
    const rounds = Math.max(1, options.rounds);
    const iterations = Math.max(1, Math.round(options.iterations / rounds));
    const ms = (options.seconds * 1000) / rounds;
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
        if (!(target instanceof Target) || target.error) continue;
        try {
          await block(target, options, iterations, ms, round === 0 ? options.warmup : Math.ceil(options.warmup / 10));
        } catch (err) {
          target.error = (err as Error).message;
          log(`  ${target.label} failed: ${target.error}`);
        }
      }
      const line = targets.map((t) => (t instanceof Target ? `${t.label} ${t.error ? 'failed' : `${t.tallies.many.rate()?.perSecond.toFixed(0) ?? '-'}/s`}` : `${t.impl} ${t.store} failed`));
      log(`  round ${round + 1}/${rounds} (${((performance.now() - started) / 1000).toFixed(0)} s): ${options.clients} clients ${line.join(', ')}`);
    }
    return targets.map((t) =>
      !(t instanceof Target)
        ? t
        : t.error
          ? { impl: t.impl, store: t.store, error: t.error }
          : {
              impl: t.impl,
              store: t.store,
              ...(t.latency.length ? { sse: stats(t.latency.map((s) => s.sse)), release: stats(t.latency.map((s) => s.release)) } : {}),
              one: t.tallies.one.rate(),
              many: t.tallies.many.rate(),
              streamed: t.tallies.streamed.rate(),
            },
    );
  } finally {
    await Promise.all(targets.map((t) => (t instanceof Target ? t.stop() : undefined)));
  }
}

export const THROUGHPUT_TARGET = { many: 0.8, streamed: 0.6, latency: 1.3 };

/** One row per measurement and store: floor, askrelay, their ratio, the target, met. */
export function throughputTable(runs: ThroughputRun[], options: Pick<ThroughputOptions, 'clients' | 'streams'>, ms: (v: number) => string, yes: (ok: boolean) => string) {
  const rows: string[][] = [['measurement (0 pending)', 'store', 'floor', 'askrelay', 'askrelay / floor', 'target', 'met']];
  const failures: string[] = [];
  for (const store of [...new Set(runs.map((r) => r.store))]) {
    const floor = runs.find((r) => r.store === store && r.impl === 'floor')!;
    const relay = runs.find((r) => r.store === store && r.impl === 'relay')!;
    const name = store === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    for (const r of [floor, relay]) if (r.error) failures.push(`${r.impl} on ${name} failed: ${r.error}`);
    if (floor.error || relay.error) continue;
    const rate = (label: string, pick: (r: ThroughputRun) => Rate | undefined, target?: number) => {
      const [f, r] = [pick(floor), pick(relay)];
      if (!f || !r) return;
      const ratio = r.perSecond / f.perSecond;
      rows.push([label, name, f.perSecond.toFixed(0), r.perSecond.toFixed(0), `${ratio.toFixed(2)}×`, target ? `≥ ${target.toFixed(2)}×` : 'info', target ? yes(ratio >= target) : '']);
      rows.push(['  (server CPU per cycle)', name, ms(f.cpuPerCycle), ms(r.cpuPerCycle), `${(r.cpuPerCycle / f.cpuPerCycle).toFixed(2)}×`, 'info', '']);
    };
    const latency = (label: string, pick: (r: ThroughputRun) => Stats | undefined) => {
      const [f, r] = [pick(floor), pick(relay)];
      if (!f || !r) return;
      const ratio = r.p50 / f.p50;
      rows.push([label, name, ms(f.p50), ms(r.p50), `${ratio.toFixed(2)}×`, `≤ ${THROUGHPUT_TARGET.latency.toFixed(2)}×`, yes(ratio <= THROUGHPUT_TARGET.latency)]);
      rows.push(['  (p99)', name, ms(f.p99), ms(r.p99), `${(r.p99 / f.p99).toFixed(2)}×`, 'info', '']);
    };
    rate('create + answer cycles/s, 1 client', (r) => r.one);
    rate(`create + answer cycles/s, ${options.clients} clients`, (r) => r.many, THROUGHPUT_TARGET.many);
    rate(`  the same with ${options.streams} SSE streams and a long poll per card`, (r) => r.streamed, THROUGHPUT_TARGET.streamed);
    latency('create → SSE card.created p50, 1 client', (r) => r.sse);
    latency('answer → long poll released p50, 1 client', (r) => r.release);
  }
  return { rows, failures };
}
