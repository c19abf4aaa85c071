// The chat channels' cost on the hot path: create → SSE and answer → release on a relay with
// all four channels switched on and their platforms hanging (connections accepted, never
// answered), against a relay with none. The outbox works after the event (a SQLite insert per
// channel on the event, delivery later, one request in flight per channel), so a platform
// that hangs must not slow creating or answering a card.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child, SseClient, stats, type Stats } from './client.js';

export interface ChannelRun {
  /** Per relay: samples pooled over its blocks. */
  byRelay: Record<'none' | 'hang', { sse: Stats; release: Stats; control: Stats }>;
  /** What the hanging platform saw. */
  sink: { connections: number; requests: number };
}

type Sample = { sse: number; release: number; control: number };
type Cycle = (child: Child, bare: Child, sse: SseClient, title: string) => Promise<Sample>;

/** Every channel on, each pointed at `url` (a platform that never answers). */
function channelEnv(url: string): Record<string, string> {
  return {
    ASKRELAY_TELEGRAM_TOKEN: '1:bench',
    ASKRELAY_TELEGRAM_CHAT: '-1',
    ASKRELAY_TELEGRAM_ANSWERERS: '1',
    ASKRELAY_TELEGRAM_API_ROOT: url,
    ASKRELAY_SLACK_TOKEN: 'xoxb-bench',
    ASKRELAY_SLACK_CHANNEL: 'C1',
    ASKRELAY_SLACK_ANSWERERS: 'U1',
    ASKRELAY_SLACK_SIGNING_SECRET: 'bench',
    ASKRELAY_SLACK_API_URL: url,
    ASKRELAY_DISCORD_TOKEN: 'bench',
    ASKRELAY_DISCORD_CHANNEL: '1',
    ASKRELAY_DISCORD_ANSWERERS: '1',
    ASKRELAY_DISCORD_PUBLIC_KEY: 'a'.repeat(64),
    ASKRELAY_DISCORD_API_URL: url,
    ASKRELAY_MATTERMOST_TOKEN: 'bench',
    ASKRELAY_MATTERMOST_URL: url,
    ASKRELAY_MATTERMOST_CHANNEL: 'c1',
    ASKRELAY_MATTERMOST_ANSWERERS: 'u1',
  };
}

export async function channelLatencies(cycle: Cycle, iterations: number, warmup: number, rounds: number): Promise<ChannelRun> {
  const sink = await Child.start(['pushsink', 'hang']);
  const dirs = [mkdtempSync(join(tmpdir(), 'askrelay-bench-ch-')), mkdtempSync(join(tmpdir(), 'askrelay-bench-ch-'))];
  const relays = {
    none: await Child.start(['relay', dirs[0]]),
    hang: await Child.start(['relay', dirs[1]], [], { BENCH_RELAY_ENV: JSON.stringify(channelEnv(sink.url)), BENCH_PUSH_SILENT: '1' }),
  };
  const bare = await Child.start(['bare']);
  const streams = { none: new SseClient(), hang: new SseClient() };
  try {
    for (const key of ['none', 'hang'] as const) await streams[key].open(relays[key].url, '/api/events', relays[key].token);
    const samples: Record<'none' | 'hang', Sample[]> = { none: [], hang: [] };
    let serial = 0;
    const perBlock = Math.max(1, Math.round(iterations / rounds));
    for (let round = 0; round < rounds; round++) {
      // Alternate which relay goes first, so neither always runs on a warmer machine.
      for (const key of round % 2 === 0 ? (['none', 'hang'] as const) : (['hang', 'none'] as const)) {
        const once = () => cycle(relays[key], bare, streams[key], `channel bench ${serial++}`);
        for (let i = 0; i < warmup; i++) await once();
        for (let i = 0; i < perBlock; i++) samples[key].push(await once());
      }
    }
    const summary = (s: Sample[]) => ({ sse: stats(s.map((x) => x.sse)), release: stats(s.map((x) => x.release)), control: stats(s.map((x) => x.control)) });
    const seen = (await sink.call<{ ok: true; sink: { connections: number; requests: number; open: number } }>({ cmd: 'sinkStats' })).sink;
    return { byRelay: { none: summary(samples.none), hang: summary(samples.hang) }, sink: seen };
  } finally {
    streams.none.close();
    streams.hang.close();
    await Promise.all([relays.none.stop(), relays.hang.stop(), bare.stop(), sink.stop()]);
    dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
  }
}

export function channelTable(run: ChannelRun, target: number, ms: (v: number) => string, yes: (ok: boolean) => string): string[][] {
  const rows: string[][] = [['measurement (relay, 0 pending)', 'chat channels', 'p50', 'p99', 'p50 / none p50', 'target', 'met']];
  const none = run.byRelay.none;
  const hang = run.byRelay.hang;
  const factor = (a: Stats, b: Stats) => `${(a.p50 / b.p50).toFixed(2)}×`;
  for (const [label, r] of [['none', none], ['4 hanging', hang]] as const) {
    const isHang = r === hang;
    rows.push(['create → SSE card.created', label, ms(r.sse.p50), ms(r.sse.p99), factor(r.sse, none.sse), isHang ? `≤ ${target.toFixed(2)}×` : 'reference', isHang ? yes(r.sse.p50 / none.sse.p50 <= target) : '']);
    rows.push(['answer → wait released', label, ms(r.release.p50), ms(r.release.p99), factor(r.release, none.release), 'info', '']);
    rows.push(['  (bare GET, interleaved in this loop)', label, ms(r.control.p50), ms(r.control.p99), factor(r.control, none.control), 'info', '']);
  }
  rows.push(['  (hanging platform: connections, requests received)', '4 hanging', `${run.sink.connections} conn`, `${run.sink.requests} req`, '', 'info', '']);
  return rows;
}
