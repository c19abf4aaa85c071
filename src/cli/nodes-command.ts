import { parseArgs } from 'node:util';
import { RelayClient, findRelay, type NodeList } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags } from './flags.js';

export const NODES_HELP = `askrelay nodes — the relay's nodes: who is alive and what each holds

Usage: askrelay nodes [--json] [--url URL]

  --json       print GET /api/nodes as the relay returns it

One row per node heard from within a lease (ASKRELAY_LEASE, default 15s): its name, its
last heartbeat, the agent sessions it runs, the MCP calls waiting on it, its open event
streams, and the work it holds (push, channels; its sessions are counted, not named). An
embedded relay (SQLite) is one node.

${CLIENT_ENV_HELP}`;

export async function nodesCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('nodes', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...CLIENT_OPTIONS } }));
  if (values.help) {
    console.log(NODES_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay nodes --help".`);
  const list = await new RelayClient(findRelay(values.url)).nodes();
  console.log(values.json ? JSON.stringify(list, null, 2) : nodesTable(list, Date.now()));
  return 0;
}

/** The node list as a table (pure: `now` says how long ago each heartbeat was). */
export function nodesTable(list: NodeList, now: number): string {
  const head = ['NODE', 'HEARTBEAT', 'SESSIONS', 'MCP CALLS', 'STREAMS', 'HOLDS', 'URL'];
  const rows = list.nodes.map((n) => [
    n.id === list.node ? `${n.id} *` : n.id,
    `${Math.max(0, Math.round((now - Date.parse(n.heartbeatAt)) / 1000))}s ago`,
    String(n.holds.sessions ?? 0),
    String(n.holds.mcpCalls ?? 0),
    String(n.holds.streams ?? 0),
    n.leases.filter((l) => !l.startsWith('session:')).join(', ') || '-',
    n.url ?? '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  const count = `${list.nodes.length} node${list.nodes.length === 1 ? '' : 's'} on ${list.store}; * is the one that answered.`;
  return [line(head), ...rows.map(line), count].join('\n');
}
