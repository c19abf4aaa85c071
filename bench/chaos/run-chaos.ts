import { setMaxListeners } from 'node:events';
import { agentsOf } from './agents-of.js';
import { startChaosCluster } from './cluster.js';
import { faultOrder, makeFault } from './faults.js';
import { Recorder } from './history.js';
import { checkRun } from './invariants.js';
import { finalState, watchOverdue } from './monitor.js';
import type { ChaosOptions } from './options.js';
import { people } from './people.js';
import { Random } from './random.js';
import { RelayClient, clientAgent } from './relay-client.js';
import type { ChaosReport } from './table.js';
import { pause, type Workload } from './workload.js';

// One chaos run: the cluster up, agents asking and people answering through the balancer,
// faults one at a time until the time is up; then no new cards, the waiters drain (each
// gives up by itself past its card's deadline, the lease and a margin), the database is read
// and the history checked. Everything it started is stopped however it ends.

export interface RunHooks {
  /** Progress lines (a fault made, the drain begun). */
  log?: (line: string) => void;
  /** Aborting it (Ctrl+C) ends the faults and the drain at once; the run still cleans up and reports. */
  signal?: AbortSignal;
}

/** After the run, the waiters have this long past the longest card wait to settle. */
const drainMs = (o: ChaosOptions) => Math.max(o.mcpWaitMs, o.cardWaitMs[1]) + o.leaseMs + 45_000;

export async function runChaos(options: ChaosOptions, { log = () => {}, signal }: RunHooks = {}): Promise<ChaosReport> {
  const random = new Random(options.seed);
  const cluster = await startChaosCluster(options);
  const recorder = new Recorder(options.seed);
  const stop = new AbortController();
  // Every waiting worker listens for the stop.
  setMaxListeners(0, stop.signal);
  const abort = () => stop.abort();
  signal?.addEventListener('abort', abort, { once: true });
  let asking = true;
  const agent = clientAgent();
  const w: Workload = {
    options,
    recorder,
    random,
    url: cluster.url,
    token: cluster.token,
    client: (name) => new RelayClient(cluster.url, cluster.token, recorder, agent, name),
    asking: () => asking && !stop.signal.aborted,
    stopped: stop.signal,
  };
  const monitor = new AbortController();
  try {
    log(`seed ${options.seed}; nodes ${cluster.nodes.nodes.map((n) => n.url).join(', ')}; balancer ${cluster.url}`);
    const overdue = watchOverdue(cluster, recorder, options.leaseMs, monitor.signal);
    const agents = agentsOf(w);
    // An agent that stops on its own (an answer it did not expect) is a problem of the run: said, never swallowed.
    const problems: string[] = [];
    const agentsDone = Promise.all(agents.map((a) => a.run().catch((err: Error) => void problems.push(`${a.name} stopped: ${err.message}`))));
    let waitersDone = false;
    void agentsDone.then(() => (waitersDone = true));
    const answering = people(w, () => waitersDone);

    const next = faultOrder(random.fork(), options.faults);
    const faultRandom = random.fork();
    const end = Date.now() + options.runMs;
    await pause(faultRandom.between(options.quietMs), stop.signal);
    while (Date.now() < end && !stop.signal.aborted) {
      const kind = next();
      const fault = await makeFault(kind, { cluster, options, random: faultRandom, signal: stop.signal });
      recorder.fault(fault);
      log(`${new Date(fault.at).toISOString().slice(11, 19)} ${kind} ${fault.detail}${fault.failed ? ` (not made: ${fault.failed})` : ''}${fault.healthyAfterMs !== undefined ? `, healthy after ${(fault.healthyAfterMs / 1000).toFixed(1)} s` : ''}`);
      await pause(faultRandom.between(options.quietMs), stop.signal);
    }

    asking = false;
    log('no new cards; the waiters drain');
    const drained = await Promise.race([agentsDone.then(() => true), pause(drainMs(options), stop.signal).then(() => false)]);
    if (!drained) stop.abort();
    await agentsDone;
    await answering;
    monitor.abort();
    await overdue;
    recorder.history.endedAt = Date.now();
    log('reading the database and checking the audit log');
    // Interrupted: no waiting for the last audit entries either.
    const final = await finalState(cluster, signal?.aborted ? 0 : 15_000);
    const violations = checkRun(recorder.history, final, { leaseMs: options.leaseMs, healthyWithinMs: options.healthyWithinMs });
    return { options, history: recorder.history, violations, problems, final, ...(signal?.aborted ? { interrupted: true } : {}) };
  } finally {
    stop.abort();
    monitor.abort();
    signal?.removeEventListener('abort', abort);
    agent.destroy();
    await cluster.stop();
  }
}
