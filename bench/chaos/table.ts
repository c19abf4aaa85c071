import { summarizeFaults } from './error-windows.js';
import type { FaultKind, FinalState, History } from './history.js';
import { VIOLATION_KINDS, type Violation } from './invariants.js';
import type { ChaosOptions } from './options.js';

// The table a chaos run prints (and docs/reliability.md keeps one of): what was done, each
// kind of fault with what clients felt after it, and every broken promise. Pure text.

export interface ChaosReport {
  options: Pick<ChaosOptions, 'seed' | 'nodes' | 'runMs' | 'stopMs' | 'lockMs' | 'readOnlyMs' | 'leaseMs'>;
  history: History;
  violations: Violation[];
  /** What went wrong with the run itself (an agent that stopped): the run then failed, whatever it found. */
  problems: string[];
  /** Stopped early (Ctrl+C): the waiters were cut short, so their violations say little. */
  interrupted?: boolean;
  /** The database at the end, for CHAOS_TRACE (the table does not show it). */
  final?: FinalState;
}

/** Counted operations, in the order and words the table shows them. */
const OPERATIONS: [string, string][] = [
  ['requests', 'HTTP requests through the balancer'],
  ['cards.asked', 'cards asked (POST, 201)'],
  ['polls', 'long polls'],
  ['streams.opened', 'event streams opened (reconnects too)'],
  ['mcp.calls', 'ask_user calls (MCP SDK client)'],
  ['mcp.resent', 'ask_user calls re-sent with their call key'],
  ['answers.200', 'answers accepted (200)'],
  ['answers.409', 'answers refused, another won (409)'],
  ['answers.410', 'answers too late, card closed (410)'],
  ['skips.200', 'skips accepted (200)'],
  ['races', 'cards two people answered at once'],
];

const FAULT_LABEL = (o: ChaosReport['options']): Record<FaultKind, string> => ({
  sigkill: 'SIGKILL a node, restart at once',
  sigstop: `SIGSTOP a node for ${o.stopMs / 1000} s`,
  terminate: "pg_terminate_backend a node's connections",
  'read-only': `a node's data folder read-only ${o.readOnlyMs / 1000} s`,
  'slow-db': `a hot table locked ${o.lockMs / 1000} s`,
});

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Columns padded to their widest cell; the first left-aligned, the rest right-aligned. */
export function columns(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('   ').trimEnd()).join('\n');
}

function waiters(history: History): string[][] {
  const rows: string[][] = [];
  for (const via of ['poll', 'stream', 'mcp'] as const) {
    const asks = history.asks.filter((a) => a.via === via);
    const by = (o: string) => String(asks.filter((a) => a.got?.outcome === o).length);
    rows.push([`  waiters on ${via === 'poll' ? 'long polls' : via === 'stream' ? 'event streams' : 'MCP calls'}`, String(asks.length), by('answered'), by('skipped'), by('expired'), String(asks.filter((a) => !a.got || a.got.outcome === 'cancelled').length)]);
  }
  return rows;
}

/** The errors clients saw, grouped by their text, most frequent first (the first 10). */
function commonErrors(history: History): [string, number][] {
  const counts = new Map<string, number>();
  for (const e of history.errors) counts.set(e.what, (counts.get(e.what) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 10);
}

export function renderReport({ options, history, violations, problems, interrupted }: ChaosReport): string {
  const { kinds, calm } = summarizeFaults(history);
  const label = FAULT_LABEL(options);
  const out: string[] = [];
  const minutes = ((history.endedAt - history.startedAt) / 60_000).toFixed(1);
  out.push(`askrelay chaos: ${options.nodes} nodes on one PostgreSQL behind HAProxy, ${minutes} min (seed ${options.seed}, lease ${options.leaseMs / 1000} s)`);
  out.push(`${new Date(history.startedAt).toISOString()} to ${new Date(history.endedAt).toISOString()}`);
  if (interrupted) out.push('INTERRUPTED: the waiters were cut short, so "a waiter got neither its answer nor its expiry" is expected below');
  out.push('');
  out.push(columns([['operations', 'count'], ...OPERATIONS.map(([key, text]) => [`  ${text}`, String(history.counts[key] ?? 0)])]));
  out.push('');
  out.push(columns([['waiters', 'cards', 'answered', 'skipped', 'expired', 'nothing'], ...waiters(history)]));
  out.push('');
  const faultRows = kinds.map((s) => [
    `  ${label[s.kind]}`,
    String(s.made) + (s.failed.length ? ` (+${s.failed.length} not made)` : ''),
    String(s.errors),
    seconds(s.longestWindowMs),
    seconds(s.slowestReplyMs),
    s.slowestRecoveryMs === undefined ? '-' : seconds(s.slowestRecoveryMs),
  ]);
  faultRows.push(['  (before any fault)', '-', String(calm.errors), '-', seconds(calm.slowestReplyMs), '-']);
  out.push(columns([['faults', 'made', 'client errors', 'longest error window', 'slowest reply', 'healthy again'], ...faultRows]));
  for (const s of kinds) for (const why of new Set(s.failed)) out.push(`  not made (${s.kind}): ${why}`);
  out.push('');
  const said = commonErrors(history);
  if (said.length) out.push(columns([['client errors, by what they said', 'count'], ...said.map(([what, n]) => [`  ${what}`, String(n)])]), '');
  out.push(columns([[`violations`, String(violations.length)], ...Object.entries(VIOLATION_KINDS).map(([kind, text]) => [`  ${text}`, String(violations.filter((v) => v.kind === kind).length)])]));
  for (const v of violations.slice(0, 20)) out.push(`  ${v.kind}: ${v.detail}`);
  if (violations.length > 20) out.push(`  … and ${violations.length - 20} more`);
  for (const p of problems) out.push(`run problem: ${p}`);
  return out.join('\n');
}
