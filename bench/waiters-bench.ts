// Ten thousand waiters on one node (issue 20): long polls (60 %), MCP calls (30 %) and SSE
// streams (10 %), all held open at once against one relay (SQLite). Measures what each costs the relay
// in memory (RSS after gc, before and after they attach, over their number) and how fast an
// answer releases its long poll while all the others keep waiting.
//
// Cards are made first (through the relay core, as in the memory table) so that their own
// memory is not counted; each long poll waits on one of them, each MCP call makes its own
// card through ask_user and waits on it, and each SSE stream is an open page.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Memory } from './child.js';
import { Child, request, sleep, stats, type Stats } from './client.js';
import { BENCH_ANSWER } from './draft.js';

export interface WaitersRun {
  mix: { longPolls: number; mcpCalls: number; streams: number };
  before: Memory;
  after: Memory;
  rssPerWaiter: number;
  heapPerWaiter: number;
  /** Answer sent → its long poll's response, one at a time while everything else waits. */
  release?: Stats;
  /** How long attaching every waiter took. */
  attachMs: number;
}

/** Long polls hold a socket each, outside the harness's keep-alive pool. */
const waitAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

function longPoll(base: string, token: string, id: string): Promise<{ status: number; at: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(`/api/cards/${id}/wait?timeout=3600`, base), { agent: waitAgent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, at: performance.now() }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** An open page's event stream: read and dropped (the harness parses none of it). */
function openStream(base: string, token: string): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL('/api/events', base), { agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`SSE: HTTP ${res.statusCode}`));
      res.on('error', () => {});
      res.resume();
      resolve(req);
    });
    req.on('error', reject);
  });
}

/** Runs `make` for every index, `batch` at a time (the relay's listen backlog is finite). */
async function inBatches<T>(count: number, batch: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += batch) out.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - i) }, (_, k) => make(i + k)))));
  return out;
}

/** `shares`: of long polls, MCP calls and SSE streams (BENCH_WAITERS_MIX, diagnosis), 0.6, 0.3 and 0.1 unless given. */
export async function waitersRun(total: number, releases: number, log: (line: string) => void, shares = [0.6, 0.3, 0.1], execArgv: string[] = []): Promise<WaitersRun> {
  const [polls, calls] = shares.map((share) => Math.round((total * share) / shares.reduce((a, b) => a + b, 0)));
  const mix = { longPolls: polls, mcpCalls: calls, streams: total - polls - calls };
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-waiters-'));
  const child = await Child.start(['relay', dir], execArgv, {
    BENCH_RELAY_ENV: JSON.stringify({ ASKRELAY_MAX_CONNECTIONS: String(total * 2) }),
  });
  const streams: http.ClientRequest[] = [];
  const mcp: Client[] = [];
  try {
    const { ids } = await child.call<{ ok: true; ids: string[] }>({ cmd: 'make', cards: mix.longPolls });
    await child.call({ cmd: 'warm', cards: 200 });
    const before = (await child.call<{ ok: true; memory: Memory }>({ cmd: 'mem' })).memory;
    // Diagnosis: heap snapshots before and after the waiters attach, for a diff by constructor.
    const snapshots = process.env.BENCH_HEAP_SNAPSHOTS;
    if (snapshots) await child.call({ cmd: 'heapSnapshot', file: join(snapshots, 'waiters-before.heapsnapshot') });

    const t0 = performance.now();
    log(`  ${mix.longPolls} long polls…`);
    const polls = new Map<string, Promise<{ status: number; at: number }>>();
    await inBatches(ids.length, 250, async (i) => {
      const poll = longPoll(child.url, child.token, ids[i]);
      poll.catch(() => {}); // the polls still waiting at the end are cut off
      polls.set(ids[i], poll);
    });
    log(`  ${mix.mcpCalls} MCP calls (ask_user)…`);
    const calls: Promise<unknown>[] = [];
    await inBatches(mix.mcpCalls, 50, async (i) => {
      const client = new Client({ name: 'bench', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', child.url), { requestInit: { headers: { authorization: `Bearer ${child.token}` } } }));
      mcp.push(client);
      const call = client.callTool({ name: 'ask_user', arguments: { questions: [{ question: `Bench question ${i}?`, options: [{ label: 'Yes' }, { label: 'No' }] }] } }, undefined, { timeout: 3_600_000 });
      calls.push(call.catch(() => undefined));
    });
    // Opened last, so that the MCP calls' card.created events are not sent to every one of them.
    log(`  ${mix.streams} SSE streams…`);
    streams.push(...(await inBatches(mix.streams, 100, () => openStream(child.url, child.token))));
    // Every waiter is in place once the relay counts them (the MCP calls' cards are made, their waits begun).
    for (let tries = 0; ; tries++) {
      const { waiting } = await child.call<{ ok: true; waiting: number }>({ cmd: 'waiting' });
      if (waiting >= mix.longPolls + mix.mcpCalls) break;
      if (tries > 600) throw new Error(`only ${waiting} of ${mix.longPolls + mix.mcpCalls} waits reached the relay`);
      await sleep(100);
    }
    const attachMs = performance.now() - t0;
    const after = (await child.call<{ ok: true; memory: Memory }>({ cmd: 'mem' })).memory;
    if (snapshots) await child.call({ cmd: 'heapSnapshot', file: join(snapshots, 'waiters-after.heapsnapshot') });

    log(`  ${releases} answers, one at a time, each releasing its long poll while the rest wait…`);
    const samples: number[] = [];
    for (const id of ids.slice(0, Math.min(releases, ids.length))) {
      const t1 = performance.now();
      const answer = await request(child.url, 'POST', `/api/cards/${id}/answer`, { token: child.token, json: { answers: BENCH_ANSWER } });
      if (answer.status !== 200) throw new Error(`POST /answer: HTTP ${answer.status} ${answer.text}`);
      const released = await polls.get(id)!;
      if (released.status !== 200) throw new Error(`the long poll of ${id} ended with HTTP ${released.status}`);
      samples.push(released.at - t1);
    }
    const waiters = total;
    return {
      mix,
      before,
      after,
      rssPerWaiter: (after.rss - before.rss) / waiters,
      heapPerWaiter: (after.heapUsed - before.heapUsed) / waiters,
      ...(samples.length ? { release: stats(samples) } : {}),
      attachMs,
    };
  } finally {
    streams.forEach((s) => s.destroy());
    await Promise.all(mcp.map((c) => c.close().catch(() => {})));
    waitAgent.destroy();
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
