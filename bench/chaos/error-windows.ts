import { FAULT_KINDS, type FaultKind, type FaultRecord, type History } from './history.js';

// What clients felt after each kind of fault. Each fault owns the time from its start to the
// next fault's start (the last one: to the end of the run); a client error or a slow reply
// in that time is counted against it. Its error window is how long after its start clients
// still saw errors: from the fault's start to the last error it owns (0 with none).

export interface FaultSummary {
  kind: FaultKind;
  made: number;
  /** Faults that could not be made (e.g. no mount permission), with why. */
  failed: string[];
  errors: number;
  longestWindowMs: number;
  /** The slowest reply to a request sent while it owned the time. */
  slowestReplyMs: number;
  /** sigkill, sigstop: the longest a node took to answer /api/health again. */
  slowestRecoveryMs?: number;
}

export interface Calm {
  /** Errors before the first fault: with nothing broken, there should be none. */
  errors: number;
  slowestReplyMs: number;
}

/** The fault that owns the moment `at` (see the top of this file); undefined before the first. */
export function faultOwning(history: Pick<History, 'faults' | 'endedAt'>): (at: number) => { fault: FaultRecord; until: number } | undefined {
  const made = history.faults.filter((f) => !f.failed).sort((a, b) => a.at - b.at);
  const periods = made.map((fault, i) => ({ fault, until: made[i + 1]?.at ?? history.endedAt }));
  return (at) => periods.find((p) => at >= p.fault.at && at < p.until);
}

export function summarizeFaults(history: History): { kinds: FaultSummary[]; calm: Calm } {
  const ownerOf = faultOwning(history);
  const kinds = new Map<FaultKind, FaultSummary>(FAULT_KINDS.map((kind) => [kind, { kind, made: 0, failed: [], errors: 0, longestWindowMs: 0, slowestReplyMs: 0 }]));
  const calm: Calm = { errors: 0, slowestReplyMs: 0 };
  for (const f of history.faults) {
    const s = kinds.get(f.kind)!;
    if (f.failed) s.failed.push(f.failed);
    else s.made++;
    if (f.healthyAfterMs !== undefined) s.slowestRecoveryMs = Math.max(s.slowestRecoveryMs ?? 0, f.healthyAfterMs);
  }
  for (const e of history.errors) {
    const p = ownerOf(e.at);
    if (!p) {
      calm.errors++;
      continue;
    }
    const s = kinds.get(p.fault.kind)!;
    s.errors++;
    s.longestWindowMs = Math.max(s.longestWindowMs, e.at - p.fault.at);
  }
  for (const r of history.slow) {
    const p = ownerOf(r.at);
    if (p) kinds.get(p.fault.kind)!.slowestReplyMs = Math.max(kinds.get(p.fault.kind)!.slowestReplyMs, r.ms);
    else calm.slowestReplyMs = Math.max(calm.slowestReplyMs, r.ms);
  }
  return { kinds: [...kinds.values()], calm };
}
