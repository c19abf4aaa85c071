import { expect, it } from 'vitest';
import { FAULT_KINDS } from '../../bench/chaos/history.js';
import { smokeOptions } from '../../bench/chaos/options.js';
import { runChaos } from '../../bench/chaos/run-chaos.js';
import { renderReport } from '../../bench/chaos/table.js';

// The chaos suite (npm run chaos, bench/chaos/) for about a minute: three real nodes on one
// PostgreSQL behind a real HAProxy, agents and people at work, and every kind of fault made
// for real (shorter freezes, locks and waits than the ten-minute run). It fails on any
// violation, and when a fault could not be made. CHAOS_SEED repeats a failing run's choices.

it('a minute of faults of every kind breaks none of the relay\'s promises', async () => {
  const options = smokeOptions(process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : undefined);
  const log: string[] = [];
  const report = await runChaos(options, { log: (line) => log.push(line) });
  const table = `${log.join('\n')}\n\n${renderReport(report)}`;
  for (const kind of FAULT_KINDS) {
    const made = report.history.faults.filter((f) => f.kind === kind);
    expect(made.length, `${kind} was made\n${table}`).toBeGreaterThan(0);
    expect(made.filter((f) => f.failed), `${kind} could be made\n${table}`).toEqual([]);
  }
  expect(report.history.counts['cards.asked'], table).toBeGreaterThan(10);
  expect(report.history.counts['mcp.calls'], table).toBeGreaterThan(2);
  expect(report.problems, table).toEqual([]);
  expect(report.violations, table).toEqual([]);
}, 240_000);
