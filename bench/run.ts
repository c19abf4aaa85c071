// npm run bench — latency, memory and restart numbers for the relay on loopback.
// Not part of `npm test`. See docs/performance.md for what each number means.
//
// Environment knobs (all optional):
//   BENCH_ITER=1000        measured iterations per relay latency (baseline: 2 × this)
//   BENCH_SIZES=1000,10000 pending-card counts to measure at (empty: none, only the push table)
//   BENCH_CPU_PROF=dir     run the relay processes with --cpu-prof, profiles written to dir
//   BENCH_JSON=1           also print every number as one JSON object at the end
//   BENCH_PUSH_SUBS=100    Web Push subscriptions pointed at the misbehaving push service
//   BENCH_PUSH_ROUNDS=2    rounds of (none, hanging, failing) blocks; each block ITER / rounds samples
//                          (failing blocks a tenth of that)
//   BENCH_PUSH_SILENT=1    diagnosis: the relay processes drop console.warn (the push sender's log lines)
//   BENCH_CHANNELS=0       skip the chat channel table (4 channels on a platform that hangs)
//   BENCH_PUSH=0           skip the Web Push table
//   BENCH_NODES=1,2,3      PostgreSQL node counts for the nodes table, beside SQLite (empty: no nodes table)
//   BENCH_CLIENTS=8        concurrent clients for the nodes table's throughput
//   BENCH_THROUGHPUT_S=15  seconds each column of the nodes table runs its clients (over all rounds)
//   BENCH_NODE_ROUNDS=3    rounds the nodes table's columns take turns in
//   BENCH_PG_ASYNC_COMMIT=1 diagnosis: the nodes table's databases commit without waiting for the WAL flush
//   ASKRELAY_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
//                          admin connection that creates (and drops) a database per column
//   BENCH_THROUGHPUT=sqlite,postgres  stores of the askrelay-against-its-floor table (empty: no table)
//   BENCH_STREAMS=100      SSE streams open during that table's streams block
//   BENCH_FLOOR_S=12       seconds each of that table's throughput blocks runs per column (over all rounds)
//   BENCH_FLOOR_BLOCKS=latency,one,many,streamed  diagnosis: that table's blocks to run (with BENCH_CPU_PROF)
//   BENCH_STARTS=5         `askrelay serve` starts measured (command → listening, RSS at rest); 0 skips
//   BENCH_WAITERS=10000    concurrent waiters (long polls, MCP calls, SSE streams) on one relay; 0 skips
//   BENCH_WAITERS_MIX=0.6,0.3,0.1  diagnosis: their shares (long polls, MCP calls, SSE streams)
//   BENCH_HEAP_SNAPSHOTS=dir  diagnosis: heap snapshots of that relay before and after its waiters attach
//   BENCH_QUICK=1          smoke run: every default above shrinks (explicit settings still win)

import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Child, SseClient, agent, request, stats, type SseEvent, type Stats } from './client.js';
import type { Memory } from './child.js';
import { BENCH_ANSWER, benchDraft } from './draft.js';
import { channelLatencies, channelTable } from './channel-bench.js';
import { probeBenchDatabase } from './bench-database.js';
import { nodesColumns, nodesTable, type Column } from './nodes-bench.js';
import { pushLatencies, pushTable } from './push-bench.js';
import { startTimes } from './start-bench.js';
import { waitersRun } from './waiters-bench.js';
import { throughputColumns, throughputTable, type Block, type Store } from './throughput-bench.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ITER = Number(process.env.BENCH_ITER ?? (QUICK ? 50 : 1000));
const BASELINE_ITER = 2 * ITER;
const WARMUP = QUICK ? 20 : 200;
const SIZES = (process.env.BENCH_SIZES ?? (QUICK ? '1000' : '1000,10000')).split(',').filter(Boolean).map(Number);
const PROFILE = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`] : [];

const PUSH_SUBS = Number(process.env.BENCH_PUSH_SUBS ?? (QUICK ? 10 : 100));
const PUSH_ROUNDS = Number(process.env.BENCH_PUSH_ROUNDS ?? 2);
const NODE_COUNTS = (process.env.BENCH_NODES ?? '1,2,3').split(',').filter(Boolean).map(Number);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const THROUGHPUT_S = Number(process.env.BENCH_THROUGHPUT_S ?? (QUICK ? 2 : 15));
const NODE_ROUNDS = Number(process.env.BENCH_NODE_ROUNDS ?? (QUICK ? 1 : 3));
const WAITERS = Number(process.env.BENCH_WAITERS ?? (QUICK ? 1000 : 10_000));
const STARTS = Number(process.env.BENCH_STARTS ?? (QUICK ? 2 : 5));
const FLOOR_STORES = (process.env.BENCH_THROUGHPUT ?? 'sqlite,postgres').split(',').filter(Boolean) as Store[];
const STREAMS = Number(process.env.BENCH_STREAMS ?? (QUICK ? 20 : 100));
const FLOOR_S = Number(process.env.BENCH_FLOOR_S ?? (QUICK ? 2 : 12));

const TARGET = { latencyFactor: 2, bytesPerCard: 10 * 1024, restartMs: 1000, pushFactor: 1.1, failingPushFactor: 1.2, startMs: 1000, restBytes: 120 * 1024 * 1024, bytesPerWaiter: 16 * 1024, releaseP99: 50 };

const log = (line: string) => process.stderr.write(`${line}\n`);

// ---- measurements ----------------------------------------------------------------------

type Times = { ok: true; times: Record<string, number[]>; cpu: NodeJS.CpuUsage };
const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / 1000;

interface Baseline {
  get: Stats;
  post: Stats;
  serverGet: Stats;
  serverPost: Stats;
  cpuGet: number;
  cpuPost: number;
  /** The floor: bare hono that commits the body to SQLite and fans it out over SSE. */
  floorSse: Stats;
  floorPost: Stats;
}

/** Sends POST `path` and waits for the `card.created` event whose title matches, on `sse`. */
async function createAndSee(url: string, path: string, token: string, sse: SseClient, title: string) {
  const marker = `"title":${JSON.stringify(title)}`;
  let created!: (e: SseEvent) => void;
  const event = new Promise<SseEvent>((r) => (created = r));
  const off = sse.on((e) => {
    if (e.event === 'card.created' && e.data.includes(marker)) created(e);
  });
  try {
    const t0 = performance.now();
    const post = await request(url, 'POST', path, { token, json: benchDraft(title) });
    if (post.status !== 201) throw new Error(`POST ${path}: HTTP ${post.status} ${post.text}`);
    const got = await event;
    return { post, sse: got.at - t0, postMs: post.at - t0 };
  } finally {
    off();
  }
}

async function baseline(): Promise<Baseline> {
  const child = await Child.start(['bare']);
  const sse = new SseClient();
  try {
    const get = async () => {
      const t0 = performance.now();
      const r = await request(child.url, 'GET', '/ping');
      if (r.status !== 200) throw new Error(`bare GET: HTTP ${r.status}`);
      return r.at - t0;
    };
    const post = async () => {
      const t0 = performance.now();
      const r = await request(child.url, 'POST', '/echo', { json: benchDraft('echo') });
      if (r.status !== 200) throw new Error(`bare POST: HTTP ${r.status}`);
      return r.at - t0;
    };
    for (let i = 0; i < WARMUP; i++) await get(), await post();
    const c0 = (await child.call<Times>({ cmd: 'serverTimes', reset: true })).cpu;
    const g: number[] = [];
    for (let i = 0; i < BASELINE_ITER; i++) g.push(await get());
    const c1 = (await child.call<Times>({ cmd: 'serverTimes' })).cpu;
    const p: number[] = [];
    for (let i = 0; i < BASELINE_ITER; i++) p.push(await post());
    const { times, cpu: c2 } = await child.call<Times>({ cmd: 'serverTimes' });

    await sse.open(child.url, '/events', '');
    const floor = async (i: number) => createAndSee(child.url, '/floor', '', sse, `floor ${i}`);
    for (let i = 0; i < WARMUP; i++) await floor(i);
    const f: { sse: number; postMs: number }[] = [];
    for (let i = 0; i < ITER; i++) f.push(await floor(WARMUP + i));
    return {
      floorSse: stats(f.map((x) => x.sse)),
      floorPost: stats(f.map((x) => x.postMs)),
      get: stats(g),
      post: stats(p),
      serverGet: stats(times['GET /ping']),
      serverPost: stats(times['POST /echo']),
      cpuGet: cpuMs(c0, c1) / BASELINE_ITER,
      cpuPost: cpuMs(c1, c2) / BASELINE_ITER,
    };
  } finally {
    sse.close();
    await child.stop();
  }
}

interface RelayRun {
  pending: number;
  fillMs: number;
  sse: Stats;
  createPost: Stats;
  release: Stats;
  answerPost: Stats;
  serverCreate: Stats;
  serverAnswer: Stats;
  /** Bare GET round trips sampled in the same loop: the baseline under the same machine load. */
  control: Stats;
  /** Relay process CPU (user + system) per iteration: one create, one long poll, one answer, two SSE events. */
  cpuPerIteration: number;
  restart: { ms: number; recovered: { expired: number; pending: number } };
  restartOverdue: { ms: number; recovered: { expired: number; pending: number } };
}

/**
 * One create → SSE sample, then one answer → long-poll release sample on that same card, so
 * the number of pending cards stays where it was.
 */
async function cycle(child: Child, bare: Child, sse: SseClient, title: string) {
  const created = await createAndSee(child.url, '/api/cards', child.token, sse, title);
  const post = created.post;
  const id = (JSON.parse(post.text) as { id: string }).id;

  const wait = request(child.url, 'GET', `/api/cards/${id}/wait?timeout=60`, { token: child.token });
  // Barrier: the long poll's bytes were already in the relay's socket buffer when this
  // request was sent, and the relay registers a waiter synchronously while handling the
  // request, so once /api/health answers the long poll is outstanding. (No sleep: an
  // idle gap would let the CPUs go cold, which the baseline loop never does.)
  const barrier = await request(child.url, 'GET', '/api/health');
  if (barrier.status !== 200) throw new Error(`health: HTTP ${barrier.status}`);
  const t1 = performance.now();
  const answer = await request(child.url, 'POST', `/api/cards/${id}/answer`, { token: child.token, json: { answers: BENCH_ANSWER } });
  const released = await wait;
  if (answer.status !== 200) throw new Error(`answer: HTTP ${answer.status} ${answer.text}`);
  if (released.status !== 200 || (JSON.parse(released.text) as { status: string }).status !== 'answered') {
    throw new Error(`wait: HTTP ${released.status} ${released.text}`);
  }

  const t2 = performance.now();
  const control = await request(bare.url, 'GET', '/ping');
  return { sse: created.sse, createPost: created.postMs, release: released.at - t1, answerPost: answer.at - t1, control: control.at - t2 };
}

async function relayLatencies(pending: number): Promise<RelayRun> {
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-'));
  const child = await Child.start(['relay', dir], PROFILE);
  const bare = await Child.start(['bare']);
  const sse = new SseClient();
  try {
    const fill = await child.call<{ ok: true; pending: number; ms: number }>({ cmd: 'fill', pending });
    log(`  ${fill.pending} pending cards created in ${fill.ms.toFixed(0)} ms (relay.create, no HTTP)`);
    await sse.open(child.url, '/api/events', child.token);

    let serial = 0;
    const once = () => cycle(child, bare, sse, `bench ${serial++}`);

    for (let i = 0; i < WARMUP; i++) await once();
    const c0 = (await child.call<Times>({ cmd: 'serverTimes', reset: true })).cpu;
    const samples: Awaited<ReturnType<typeof once>>[] = [];
    for (let i = 0; i < ITER; i++) samples.push(await once());
    sse.close();
    const { times, cpu: c1 } = await child.call<Times>({ cmd: 'serverTimes', reset: true });

    const restart = await child.call<{ ok: true; ms: number; url: string; recovered: RelayRun['restart']['recovered'] }>({ cmd: 'restart' });
    if (restart.recovered.pending !== pending) throw new Error(`restart recovered ${restart.recovered.pending} pending, expected ${pending}`);
    const overdue = await child.call<{ ok: true; ms: number; url: string; recovered: RelayRun['restart']['recovered'] }>({
      cmd: 'restart',
      makeOverdue: true,
    });
    if (overdue.recovered.expired !== pending) throw new Error(`restart expired ${overdue.recovered.expired}, expected ${pending}`);
    return {
      pending,
      fillMs: fill.ms,
      sse: stats(samples.map((s) => s.sse)),
      createPost: stats(samples.map((s) => s.createPost)),
      release: stats(samples.map((s) => s.release)),
      answerPost: stats(samples.map((s) => s.answerPost)),
      serverCreate: stats(times['POST /api/cards']),
      serverAnswer: stats(times['POST /api/cards/:id/answer']),
      control: stats(samples.map((s) => s.control)),
      cpuPerIteration: cpuMs(c0, c1) / ITER,
      restart: { ms: restart.ms, recovered: restart.recovered },
      restartOverdue: { ms: overdue.ms, recovered: overdue.recovered },
    };
  } finally {
    sse.close();
    await Promise.all([child.stop(), bare.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

interface MemoryRun {
  pending: number;
  before: Memory;
  after: Memory;
  rssPerCard: number;
  heapPerCard: number;
}

/** A fresh relay process: warm it up, measure, add `pending` cards, measure again. */
async function memoryPerCard(pending: number): Promise<MemoryRun> {
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-mem-'));
  const child = await Child.start(['relay', dir]);
  try {
    await child.call({ cmd: 'warm', cards: 500 });
    const before = (await child.call<{ ok: true; memory: Memory }>({ cmd: 'mem' })).memory;
    await child.call({ cmd: 'fill', pending });
    const after = (await child.call<{ ok: true; memory: Memory }>({ cmd: 'mem' })).memory;
    return {
      pending,
      before,
      after,
      rssPerCard: (after.rss - before.rss) / pending,
      heapPerCard: (after.heapUsed - before.heapUsed) / pending,
    };
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- report ---------------------------------------------------------------------------

const ms = (v: number) => `${v.toFixed(3)} ms`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const yes = (ok: boolean) => (ok ? 'yes' : 'NO');

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (c ?? '').padEnd(widths[i])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

async function main() {
  const started = performance.now();
  const loadStart = loadavg();
  log(`askrelay bench: node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${ITER} iterations${QUICK ? ' (BENCH_QUICK)' : ''}`);
  // Before minutes of SQLite measurements: a PostgreSQL server that is not there fails now.
  if (NODE_COUNTS.length || FLOOR_STORES.includes('postgres')) await probeBenchDatabase();
  const floorOptions = { iterations: ITER, warmup: WARMUP, clients: CLIENTS, streams: STREAMS, seconds: FLOOR_S, rounds: NODE_ROUNDS, stores: FLOOR_STORES, execArgv: PROFILE, ...(process.env.BENCH_FLOOR_BLOCKS ? { blocks: process.env.BENCH_FLOOR_BLOCKS.split(',') as Block[] } : {}) };
  if (FLOOR_STORES.length) log(`askrelay against its floor on ${FLOOR_STORES.join(', ')}: ${ITER} cycles one at a time, then ${FLOOR_S} s each of 1 and ${CLIENTS} clients and of ${CLIENTS} clients with ${STREAMS} streams, per column, in ${NODE_ROUNDS} rounds…`);
  const floor = FLOOR_STORES.length ? await throughputColumns(floorOptions, log) : undefined;
  const start = STARTS > 0 ? (log(`askrelay serve: ${STARTS} starts, command → listening and RSS at rest…`), await startTimes(STARTS)) : undefined;
  const waiters = WAITERS > 0 ? (log(`${WAITERS} concurrent waiters on one relay…`), await waitersRun(WAITERS, Math.min(ITER, 500), log, process.env.BENCH_WAITERS_MIX?.split(',').map(Number), PROFILE)) : undefined;
  log('baseline: bare hono on @hono/node-server…');
  const base = await baseline();
  const runs: RelayRun[] = [];
  const mems: MemoryRun[] = [];
  for (const n of SIZES) {
    log(`relay with ${n} pending cards: latencies and restart…`);
    runs.push(await relayLatencies(n));
    log(`relay with ${n} pending cards: memory…`);
    mems.push(await memoryPerCard(n));
  }
  const push = process.env.BENCH_PUSH === '0' ? undefined : (log(`relay with ${PUSH_SUBS} Web Push subscriptions on a hanging / failing push service…`), await pushLatencies(cycle, { iterations: ITER, warmup: WARMUP, subscriptions: PUSH_SUBS, rounds: PUSH_ROUNDS, execArgv: PROFILE }));
  const channels = process.env.BENCH_CHANNELS === '0' ? undefined : (log('relay with 4 chat channels on a platform that hangs…'), await channelLatencies(cycle, ITER, WARMUP, PUSH_ROUNDS));
  const columns: Column[] = NODE_COUNTS.length ? [{ store: 'sqlite' }, ...NODE_COUNTS.map((nodes) => ({ store: 'postgres' as const, nodes }))] : [];
  if (columns.length) log(`SQLite and PostgreSQL with ${NODE_COUNTS.join(', ')} nodes on one database: ${ITER} cycles one at a time and ${THROUGHPUT_S} s of ${CLIENTS} clients per column, in ${NODE_ROUNDS} rounds…`);
  const nodes = columns.length
    ? await nodesColumns(columns, { iterations: ITER, warmup: WARMUP, clients: CLIENTS, seconds: THROUGHPUT_S, rounds: NODE_ROUNDS, crossNodeTimeoutMs: 5000, execArgv: PROFILE, asyncCommit: process.env.BENCH_PG_ASYNC_COMMIT === '1' }, log)
    : undefined;
  agent.destroy();

  const limit = TARGET.latencyFactor * base.get.p50;
  const rows: string[][] = [['measurement', 'pending', 'p50', 'p99', 'p50 / bare p50', 'target', 'met']];
  const info = (name: string, pending: string, st: Stats) => rows.push([name, pending, ms(st.p50), ms(st.p99), '', 'info', '']);
  rows.push(['bare hono GET round trip (baseline)', '-', ms(base.get.p50), ms(base.get.p99), '1.00', 'reference', '']);
  info("  (server side: 'request' → 'finish')", '-', base.serverGet);
  rows.push(['  (server CPU per GET)', '-', ms(base.cpuGet), '', '', 'info', '']);
  info('bare hono POST JSON round trip', '-', base.post);
  info('  (server side)', '-', base.serverPost);
  rows.push([
    'floor: bare hono + SQLite insert + SSE, create → SSE',
    '-',
    ms(base.floorSse.p50),
    ms(base.floorSse.p99),
    (base.floorSse.p50 / base.get.p50).toFixed(2),
    'info',
    '',
  ]);
  info('  (floor POST round trip)', '-', base.floorPost);
  for (const r of runs) {
    const n = String(r.pending);
    const ratio = (st: Stats) => `${(st.p50 / base.get.p50).toFixed(2)} (${(st.p50 / r.control.p50).toFixed(2)} vs interleaved)`;
    rows.push(['create → SSE card.created', n, ms(r.sse.p50), ms(r.sse.p99), ratio(r.sse), `p50 ≤ ${ms(limit)}`, yes(r.sse.p50 <= limit)]);
    info('  (POST /api/cards round trip)', n, r.createPost);
    info("  (server side of POST /api/cards, to 'finish')", n, r.serverCreate);
    rows.push(['answer → wait released', n, ms(r.release.p50), ms(r.release.p99), ratio(r.release), `p50 ≤ ${ms(limit)}`, yes(r.release.p50 <= limit)]);
    info('  (POST /answer round trip)', n, r.answerPost);
    info("  (server side of POST /answer, to 'finish')", n, r.serverAnswer);
    info('  (bare GET, interleaved in this loop)', n, r.control);
    rows.push(['  (relay CPU per create + wait + answer)', n, ms(r.cpuPerIteration), '', '', 'info', '']);
  }
  const rows2: string[][] = [['measurement', 'pending', 'value', 'target', 'met']];
  if (start) {
    const { listening: l, rssAtRest: r } = start;
    rows2.push([`askrelay serve: command → listening, median of ${l.n}`, '0', `${ms(l.p50)} (max ${ms(l.p99)})`, `< ${TARGET.startMs} ms`, yes(l.p50 < TARGET.startMs)]);
    rows2.push(['askrelay serve: RSS at rest (2 s after listening), median', '0', `${mb(r.p50)} (max ${mb(r.p99)})`, `≤ ${mb(TARGET.restBytes)}`, yes(r.p50 <= TARGET.restBytes)]);
  }
  if (waiters) {
    const { mix, release: rel } = waiters;
    const n = String(mix.longPolls + mix.mcpCalls);
    const what = `${mix.longPolls} long polls + ${mix.mcpCalls} MCP calls + ${mix.streams} SSE streams`;
    rows2.push([`RSS per waiter (${what})`, n, kb(waiters.rssPerWaiter), `≤ ${kb(TARGET.bytesPerWaiter)}`, yes(waiters.rssPerWaiter <= TARGET.bytesPerWaiter)]);
    rows2.push(['  JS heap per waiter', n, kb(waiters.heapPerWaiter), 'info', '']);
    rows2.push(['  RSS before → after the waiters attached (after gc)', n, `${mb(waiters.before.rss)} → ${mb(waiters.after.rss)}`, 'info', '']);
    if (rel) rows2.push([`answer → its long poll released while the rest wait, p99 (p50) of ${rel.n}`, n, `${ms(rel.p99)} (${ms(rel.p50)})`, `p99 ≤ ${TARGET.releaseP99} ms`, yes(rel.p99 <= TARGET.releaseP99)]);
    rows2.push(['  attaching every waiter took', n, ms(waiters.attachMs), 'info', '']);
  }
  for (const m of mems) {
    rows2.push(['RSS per pending card', String(m.pending), kb(m.rssPerCard), `< ${kb(TARGET.bytesPerCard)}`, yes(m.rssPerCard < TARGET.bytesPerCard)]);
    rows2.push(['  JS heap per pending card', String(m.pending), kb(m.heapPerCard), 'info', '']);
    rows2.push(['  RSS before → after (after gc)', String(m.pending), `${mb(m.before.rss)} → ${mb(m.after.rss)}`, 'info', '']);
    rows2.push(['  SQLite file + WAL before → after', String(m.pending), `${mb(m.before.dbBytes ?? 0)} → ${mb(m.after.dbBytes ?? 0)}`, 'info', '']);
  }
  for (const r of runs) {
    const big = r.pending >= 10_000;
    rows2.push([
      'restart, all pending (start → listening)',
      String(r.pending),
      ms(r.restart.ms),
      big ? `< ${TARGET.restartMs} ms` : 'info',
      big ? yes(r.restart.ms < TARGET.restartMs) : '',
    ]);
    rows2.push(['  restart, all overdue (expires them)', String(r.pending), ms(r.restartOverdue.ms), 'info', '']);
    rows2.push(['  fill via relay.create', String(r.pending), `${((r.fillMs * 1000) / r.pending).toFixed(1)} µs/card`, 'info', '']);
  }

  console.log(`\naskrelay bench — node ${process.version}, ${cpus().length} CPUs, loopback, node:http keep-alive client`);
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(`latency: ${BASELINE_ITER} baseline / ${ITER} relay samples after ${WARMUP} warm-up; load average ${load(loadStart)} at start, ${load(loadavg())} at end\n`);
  console.log(table(rows));
  if (rows2.length > 1) console.log(`\n${table(rows2)}`);
  const floorReport = floor && throughputTable(floor, floorOptions, ms, yes);
  if (floorReport) {
    console.log(`\n${table(floorReport.rows)}`);
    for (const line of floorReport.failures) console.log(line);
  }
  if (push) console.log(`\n${table(pushTable(push, { hang: TARGET.pushFactor, fail: TARGET.failingPushFactor }, ms, yes))}`);
  if (channels) console.log(`\n${table(channelTable(channels, TARGET.pushFactor, ms, yes))}`);
  const nodesReport = nodes && nodesTable(nodes, CLIENTS, ms);
  if (nodesReport) {
    console.log(`\n${table(nodesReport.rows)}`);
    for (const line of [...nodesReport.notes, ...nodesReport.failures]) console.log(line);
  }
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  if (process.env.BENCH_JSON) console.log(JSON.stringify({ node: process.version, cpus: cpus().length, base, start, waiters, runs, mems, floor, push, channels, nodes }));
  // Every table is printed; a column that could not be measured still fails the run.
  if (nodesReport?.failures.length || floorReport?.failures.length) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
