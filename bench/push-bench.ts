// Web Push on the hot path: create → SSE / answer → release with 100 subscriptions on a push
// service that hangs, or that fails every push at once, against none (docs/performance.md,
// "Web Push"). Run by bench/run.ts, which hands over its cycle and settings.

import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_SUBSCRIPTIONS_PER_PRINCIPAL } from '../src/push/push-config.js';
import { Child, SseClient, request, stats, type Stats } from './client.js';

type Sample = { sse: number; createPost: number; release: number; answerPost: number; control: number };
type Cycle = (child: Child, bare: Child, sse: SseClient, title: string) => Promise<Sample>;
type Times = { ok: true; times: Record<string, number[]>; cpu: NodeJS.CpuUsage };
const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / 1000;
const PUSH_BLOCK_WARMUP = 20;

export interface PushOptions {
  iterations: number;
  warmup: number;
  subscriptions: number;
  rounds: number;
  execArgv: string[];
}

export type PushCondition = 'none' | 'hang' | 'fail';

export interface PushRun {
  subscriptions: number;
  /** Per condition, the samples of every block pooled. */
  byCondition: Record<PushCondition, { sse: Stats; createPost: Stats; release: Stats; answerPost: Stats; control: Stats; cpuPerIteration: number }>;
  /** What the misbehaving services saw over the whole run. */
  sinks: Record<'hang' | 'fail', { connections: number; requests: number; open: number }>;
  /** generateRequestDetails for every subscription of one card, on the relay's thread, per round. */
  encryptMs: Stats;
  encryptMainMs: Stats;
}

/** A browser's PushSubscription.toJSON(): a real P-256 key pair and a 16-byte auth secret. */
function browserSubscription(endpoint: string) {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { endpoint, keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') } };
}

/**
 * One relay with no pending cards. Blocks of create → SSE / answer → release samples alternate
 * between no subscriptions, PUSH_SUBS subscriptions on a push service that accepts connections
 * and never answers, and PUSH_SUBS on one that answers 503 at once. Subscriptions go in through
 * POST /api/push/subscriptions and out through DELETE, as the page does.
 */
export async function pushLatencies(cycle: Cycle, options: PushOptions): Promise<PushRun> {
  const { iterations: ITER, warmup: WARMUP, subscriptions: PUSH_SUBS, rounds: PUSH_ROUNDS, execArgv: PROFILE } = options;
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-push-'));
  // The push sinks listen on loopback: a relay takes such endpoints only with this setting.
  const child = await Child.start(['relay', dir], PROFILE, { BENCH_RELAY_ENV: JSON.stringify({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1' }) });
  const bare = await Child.start(['bare']);
  const sinks = { hang: await Child.start(['pushsink', 'hang']), fail: await Child.start(['pushsink', 'fail']) };
  const sse = new SseClient();
  try {
    await sse.open(child.url, '/api/events', child.token);
    let serial = 0;
    const once = () => cycle(child, bare, sse, `push bench ${serial++}`);
    for (let i = 0; i < WARMUP; i++) await once();

    // One token holds at most MAX_SUBSCRIPTIONS_PER_PRINCIPAL subscriptions: the rest are
    // people's, whose browsers get every card of no route too (docs/routing.md).
    const holders = [child.token];
    for (let i = 1; i < Math.ceil(PUSH_SUBS / MAX_SUBSCRIPTIONS_PER_PRINCIPAL); i++) {
      const r = await request(child.url, 'POST', '/api/users', { token: child.token, json: { name: `bench${i}` } });
      if (r.status !== 201) throw new Error(`POST /api/users: HTTP ${r.status} ${r.text}`);
      holders.push((JSON.parse(r.text) as { token: string }).token);
    }
    const subscribe = async (sink: Child, block: number) => {
      const endpoints: string[] = [];
      for (let i = 0; i < PUSH_SUBS; i++) {
        const sub = browserSubscription(new URL(`push/b${block}/s${i}`, sink.url).href);
        const token = holders[Math.floor(i / MAX_SUBSCRIPTIONS_PER_PRINCIPAL)];
        const r = await request(child.url, 'POST', '/api/push/subscriptions', { token, json: sub });
        if (r.status !== 201) throw new Error(`POST /api/push/subscriptions: HTTP ${r.status} ${r.text}`);
        endpoints.push(sub.endpoint);
      }
      return endpoints;
    };
    const unsubscribe = async (endpoints: string[]) => {
      for (const endpoint of endpoints) {
        const token = holders[Math.floor(endpoints.indexOf(endpoint) / MAX_SUBSCRIPTIONS_PER_PRINCIPAL)];
        const r = await request(child.url, 'DELETE', '/api/push/subscriptions', { token, json: { endpoint } });
        if (r.status !== 200) throw new Error(`DELETE /api/push/subscriptions: HTTP ${r.status} ${r.text}`);
      }
    };

    const samples: Record<PushCondition, Awaited<ReturnType<typeof once>>[]> = { none: [], hang: [], fail: [] };
    const cpu: Record<PushCondition, number> = { none: 0, hang: 0, fail: 0 };
    const perBlock = Math.max(1, Math.round(ITER / PUSH_ROUNDS));
    let block = 0;
    for (let round = 0; round < PUSH_ROUNDS; round++) {
      // Alternate the order so that neither condition always follows the other.
      const order: PushCondition[] = round % 2 === 0 ? ['none', 'hang', 'fail'] : ['fail', 'hang', 'none'];
      for (const condition of order) {
        const endpoints = condition === 'none' ? [] : await subscribe(sinks[condition], block++);
        for (let i = 0; i < PUSH_BLOCK_WARMUP; i++) await once();
        const c0 = (await child.call<Times>({ cmd: 'serverTimes', reset: true })).cpu;
        // A failing service makes every iteration slow (see docs/performance.md): fewer samples.
        const count = condition === 'fail' ? Math.ceil(perBlock / 10) : perBlock;
        for (let i = 0; i < count; i++) samples[condition].push(await once());
        const c1 = (await child.call<Times>({ cmd: 'serverTimes', reset: true })).cpu;
        cpu[condition] += cpuMs(c0, c1);
        await unsubscribe(endpoints);
        // The relay's requests still hanging fail now (and find their subscription gone), so
        // they do not hold the sender's slots through the next block.
        if (condition !== 'none') await sinks[condition].call({ cmd: 'dropConnections' });
      }
    }
    const sinkStats = async (sink: Child) =>
      (await sink.call<{ ok: true; sink: { connections: number; requests: number; open: number } }>({ cmd: 'sinkStats' })).sink;
    const encrypt = await child.call<{ ok: true; msPerRound: number[]; mainMsPerRound: number[] }>({ cmd: 'encryptCost', subscriptions: PUSH_SUBS, rounds: 20 });
    const summary = (condition: PushCondition) => {
      const s = samples[condition];
      return {
        sse: stats(s.map((x) => x.sse)),
        createPost: stats(s.map((x) => x.createPost)),
        release: stats(s.map((x) => x.release)),
        answerPost: stats(s.map((x) => x.answerPost)),
        control: stats(s.map((x) => x.control)),
        cpuPerIteration: cpu[condition] / s.length,
      };
    };
    return {
      subscriptions: PUSH_SUBS,
      byCondition: { none: summary('none'), hang: summary('hang'), fail: summary('fail') },
      sinks: { hang: await sinkStats(sinks.hang), fail: await sinkStats(sinks.fail) },
      encryptMs: stats(encrypt.msPerRound),
      encryptMainMs: stats(encrypt.mainMsPerRound),
    };
  } finally {
    sse.close();
    await Promise.all([child.stop(), bare.stop(), sinks.hang.stop(), sinks.fail.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}


export function pushTable(push: PushRun, limits: Record<'hang' | 'fail', number>, ms: (v: number) => string, yes: (ok: boolean) => string): string[][] {
  const n = String(push.subscriptions);
  const none = push.byCondition.none;
  const label: Record<PushCondition, string> = { none: 'none', hang: `${n} hanging`, fail: `${n} failing (503)` };
  const rows: string[][] = [['measurement (relay, 0 pending)', 'push subscriptions', 'p50', 'p99', 'p50 / none p50', 'target', 'met']];
  const factor = (st: Stats, ref: Stats) => `${(st.p50 / ref.p50).toFixed(2)}×`;
  for (const c of ['none', 'hang', 'fail'] as const) {
    const r = push.byCondition[c];
    const limit = c === 'none' ? undefined : limits[c];
    const target = limit ? `≤ ${limit.toFixed(2)}×` : 'reference';
    const met = limit ? yes(r.sse.p50 / none.sse.p50 <= limit) : '';
    rows.push(['create → SSE card.created', label[c], ms(r.sse.p50), ms(r.sse.p99), factor(r.sse, none.sse), target, met]);
    rows.push(['  (POST /api/cards round trip)', label[c], ms(r.createPost.p50), ms(r.createPost.p99), factor(r.createPost, none.createPost), 'info', '']);
    rows.push(['answer → wait released', label[c], ms(r.release.p50), ms(r.release.p99), factor(r.release, none.release), 'info', '']);
    rows.push(['  (bare GET, interleaved in this loop)', label[c], ms(r.control.p50), ms(r.control.p99), factor(r.control, none.control), 'info', '']);
    rows.push(['  (relay CPU per create + wait + answer)', label[c], ms(r.cpuPerIteration), '', '', 'info', '']);
  }
  rows.push(['encrypting one push for every subscription (main thread, web-push)', n, ms(push.encryptMs.p50), ms(push.encryptMs.p99), '', 'info', '']);
  rows.push(['  the same on the sender\'s worker: main-thread busy time', n, ms(push.encryptMainMs.p50), ms(push.encryptMainMs.p99), '', 'info', '']);
  for (const c of ['hang', 'fail'] as const) {
    const s = push.sinks[c];
    rows.push([`  (${c} push service: connections, requests received)`, n, `${s.connections} conn`, `${s.requests} req`, '', 'info', '']);
  }
  return rows;
}
