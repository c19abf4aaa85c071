// `askrelay serve` as an operator starts it (issue 20): from the command to listening, and
// what the process holds at rest once it has listened, a few starts in a row on a new data
// folder each (SQLite, nothing configured).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sleep, stats, type Stats } from './client.js';

const BIN = fileURLToPath(new URL('../bin/askrelay.js', import.meta.url));

export interface StartRun {
  /** Spawn → the "askrelay is running" line. */
  listening: Stats;
  /** VmRSS of the serve process, 2 s after it listened. */
  rssAtRest: Stats;
}

function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

async function once(restMs: number): Promise<{ ms: number; rss: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-start-'));
  const t0 = performance.now();
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', dir], {
    env: { ...process.env, ASKRELAY_TOKEN: 'bench-token-0123456789abcdef' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('askrelay is running')) resolve(performance.now() - t0);
      });
      proc.once('exit', (code) => reject(new Error(`askrelay serve exited (${code}) before listening: ${out}`)));
    });
    await sleep(restMs);
    return { ms, rss: rssOf(proc.pid!) };
  } finally {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGINT');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `starts` starts, the first unmeasured (it may compile the cached bundle, see bin/compiled.js). */
export async function startTimes(starts: number, restMs = 2000): Promise<StartRun> {
  await once(0);
  const runs: { ms: number; rss: number }[] = [];
  for (let i = 0; i < starts; i++) runs.push(await once(restMs));
  return { listening: stats(runs.map((r) => r.ms)), rssAtRest: stats(runs.map((r) => r.rss)) };
}
