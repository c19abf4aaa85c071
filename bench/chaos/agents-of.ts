import { pollAgent, streamAgent } from './agents.js';
import { mcpAgent } from './mcp-agent.js';
import type { Workload } from './workload.js';

/** The run's agents, named after how they wait: poll-1…, stream-1…, mcp-1…. */
export function agentsOf(w: Workload): { name: string; run(): Promise<void> }[] {
  const { polls, streams, mcp } = w.options.agents;
  const make = (n: number, prefix: string, run: (w: Workload, name: string) => Promise<void>) =>
    Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i + 1}`, run: () => run(w, `${prefix}-${i + 1}`) }));
  return [...make(polls, 'poll', pollAgent), ...make(streams, 'stream', streamAgent), ...make(mcp, 'mcp', mcpAgent)];
}
