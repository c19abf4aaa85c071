import { writeFileSync } from 'node:fs';
import { chaosOptions } from './options.js';
import { runChaos } from './run-chaos.js';
import { renderReport } from './table.js';

// npm run chaos: three relay nodes on one PostgreSQL behind HAProxy, broken one fault at a
// time for CHAOS_MINUTES (default 10), then the table. Exit 0 with no violations, 1 with
// any (or when the run itself failed), 130 after Ctrl+C. CHAOS_SEED repeats a run's choices.

const options = chaosOptions();
const interrupted = new AbortController();
const onSignal = () => {
  if (interrupted.signal.aborted) process.exit(130); // a second Ctrl+C: the children die with this process
  console.error('\nstopping: the faults end, the nodes and the balancer are stopped (Ctrl+C again to quit at once)');
  interrupted.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const started = new Date().toISOString().slice(11, 19);
console.log(`${started} askrelay chaos: ${options.runMs / 60_000} min, seed ${options.seed} (CHAOS_SEED=${options.seed} repeats its choices)`);
try {
  const report = await runChaos(options, { log: (line) => console.log(line), signal: interrupted.signal });
  console.log(`\n${renderReport(report)}`);
  // CHAOS_TRACE=<file>: the whole history as JSON, to look into what the table sums up.
  if (process.env.CHAOS_TRACE) writeFileSync(process.env.CHAOS_TRACE, JSON.stringify(report, null, 1));
  process.exitCode = interrupted.signal.aborted ? 130 : report.violations.length || report.problems.length ? 1 : 0;
} catch (err) {
  console.error(`askrelay chaos: the run failed: ${(err as Error).stack ?? err}`);
  process.exitCode = 1;
}
