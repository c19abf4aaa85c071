import { faultOwning } from './error-windows.js';
import type { Ask, ClientError, Closing, FinalState, History } from './history.js';

// The promises a chaos run checks, over its recorded history and the database at the end.
// Pure: no I/O, so each rule is tested on hand-made histories (test/chaos/invariants.test.ts).

export const VIOLATION_KINDS = {
  'lost-card': 'a card acknowledged with 201 is not in the database',
  'answer-not-final': 'an answer or skip acknowledged with 200 is not what the card ended with',
  'closed-twice': 'a card closed more than once (two closing audit entries)',
  'waiter-unserved': 'a waiter got neither its answer nor its expiry',
  'waiter-misled': 'a waiter was handed something other than how its card ended',
  'duplicate-card': 'one ask_user call (re-sent with its call key) made more than one card',
  'pending-overdue': 'a card still pending past its deadline plus the lease',
  'slow-recovery': 'a killed or frozen node not healthy again in time',
  'request-lost': 'a request left without a reply (or a 502/504) while no node had died',
  'no-node': 'the balancer had no node to send a request to (its own 503)',
  'poll-refused': 'a long poll ended with 503 instead of waiting on (docs/api.md)',
  'audit-broken': '`askrelay audit verify` did not say ok',
  'audit-missing': 'a card without its card.created entry, or a closed card without its closing entry',
} as const;

export type ViolationKind = keyof typeof VIOLATION_KINDS;

export interface Violation {
  kind: ViolationKind;
  detail: string;
}

export interface Limits {
  leaseMs: number;
  healthyWithinMs: number;
}

type FinalCard = FinalState['cards'][number];

const CLOSING = new Set(['card.answered', 'card.skipped', 'card.expired', 'card.cancelled']);
const sameLabels = (a: string[] = [], b: string[] = []) => a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
const describe = (c: Closing) => (c.outcome === 'answered' ? `answered ${JSON.stringify(c.labels ?? [])}` : c.outcome);

/** The card an ask made: by id when the agent learnt it, else by the tag in its question (all of them). */
function cardsOf(ask: Ask, final: FinalState): FinalCard[] {
  const tagged = final.cards.filter((c) => c.text.startsWith(`${ask.tag}:`));
  if (!ask.cardId) return tagged;
  const byId = final.cards.find((c) => c.id === ask.cardId);
  return byId ? [byId, ...tagged.filter((c) => c.id !== byId.id)] : tagged;
}

function checkAsks(history: History, final: FinalState, out: Violation[]): void {
  for (const ask of history.asks) {
    const found = cardsOf(ask, final);
    const card = found[0];
    if (ask.cardId && !final.cards.some((c) => c.id === ask.cardId)) {
      out.push({ kind: 'lost-card', detail: `${ask.tag}: card ${ask.cardId} (201 at ${iso(ask.at)}) is not in the database` });
      continue;
    }
    if (ask.via === 'mcp' && found.length > 1) {
      out.push({ kind: 'duplicate-card', detail: `${ask.tag}: ${found.length} cards (${found.map((c) => `${c.id} ${c.status}`).join(', ')}), the call got ${ask.cardId ?? 'none'}` });
    }
    if (!ask.got) {
      out.push({ kind: 'waiter-unserved', detail: `${ask.tag} (${ask.via}${card ? `, card ${card.id} ${card.status}` : ', no card'}): the waiter got nothing` });
      continue;
    }
    if (ask.got.outcome === 'cancelled') {
      // Nobody in the run cancels: a waiter told "cancelled" lost its question.
      out.push({ kind: 'waiter-unserved', detail: `${ask.tag} (${ask.via}): the waiter was told its card was cancelled` });
      continue;
    }
    if (!card) {
      out.push({ kind: 'waiter-misled', detail: `${ask.tag} (${ask.via}): handed ${describe(ask.got)} for a card the database does not hold` });
      continue;
    }
    const ended: Closing | undefined = card.status === 'pending' ? undefined : { outcome: card.status, labels: card.labels };
    if (!ended || ended.outcome !== ask.got.outcome || (ended.outcome === 'answered' && !sameLabels(ended.labels, ask.got.labels))) {
      out.push({ kind: 'waiter-misled', detail: `${ask.tag} (${ask.via}, card ${card.id}): handed ${describe(ask.got)}, but the card is ${ended ? describe(ended) : 'pending'}` });
    }
  }
}

function checkAnswers(history: History, final: FinalState, out: Violation[]): void {
  for (const a of history.answers) {
    if (a.status !== 200) continue;
    const card = final.cards.find((c) => c.id === a.cardId);
    const wanted: Closing = a.action === 'skip' ? { outcome: 'skipped' } : { outcome: 'answered', labels: a.labels };
    const ok = card && card.status === wanted.outcome && (wanted.outcome === 'skipped' || sameLabels(card.labels, wanted.labels));
    if (!ok) {
      const now = card ? (card.status === 'pending' ? 'pending' : describe({ outcome: card.status, labels: card.labels })) : 'not in the database';
      out.push({ kind: 'answer-not-final', detail: `card ${a.cardId}: ${a.person}'s ${describe(wanted)} got 200 at ${iso(a.at)}, but the card is ${now}` });
    }
  }
}

function checkPending(history: History, final: FinalState, { leaseMs }: Limits, out: Violation[]): void {
  const seen = new Map<string, { expiresAt: number; seenAt: number }>();
  for (const s of history.overdue) if (s.seenAt > s.expiresAt + leaseMs) seen.set(s.cardId, s);
  for (const c of final.cards) if (c.status === 'pending' && final.at > c.expiresAt + leaseMs) seen.set(c.id, { expiresAt: c.expiresAt, seenAt: final.at });
  for (const [id, s] of seen) {
    out.push({ kind: 'pending-overdue', detail: `card ${id}: pending at ${iso(s.seenAt)}, ${((s.seenAt - s.expiresAt) / 1000).toFixed(1)} s past its deadline` });
  }
}

function checkFaults(history: History, { healthyWithinMs }: Limits, out: Violation[]): void {
  for (const f of history.faults) {
    if (f.kind !== 'sigkill' && f.kind !== 'sigstop') continue;
    if (f.healthyAfterMs === undefined || f.healthyAfterMs > healthyWithinMs) {
      const took = f.healthyAfterMs === undefined ? 'never healthy again' : `healthy after ${(f.healthyAfterMs / 1000).toFixed(1)} s`;
      out.push({ kind: 'slow-recovery', detail: `${f.kind} of ${f.detail} at ${iso(f.at)}: ${took}${f.failed ? ` (${f.failed})` : ''}` });
    }
  }
}

/**
 * Client errors that break a documented promise. A node killed mid-request loses that
 * request (the client asks again), and a stream or an MCP call cut off is re-opened or
 * re-sent; but a node that only froze or lost its database connections loses no request,
 * the balancer always has a node, and a long poll waits through the database being away.
 */
function checkErrors(history: History, out: Violation[]): void {
  const ownerOf = faultOwning(history);
  const at = (e: ClientError) => `${e.client} at ${iso(e.at)}: ${e.what}`;
  for (const e of history.errors) {
    if (e.cause === 'http' && e.status === 503 && !e.code) out.push({ kind: 'no-node', detail: at(e) });
    else if (e.cause === 'http' && e.status === 503 && e.route === 'GET /api/cards/:id/wait') out.push({ kind: 'poll-refused', detail: at(e) });
    else if (e.cause === 'no-reply' || (e.cause === 'http' && (e.status === 502 || e.status === 504))) {
      const owner = ownerOf(e.at)?.fault;
      if (owner?.kind !== 'sigkill') out.push({ kind: 'request-lost', detail: `${at(e)} (${owner ? `after ${owner.kind} of ${owner.detail}` : 'before any fault'})` });
    }
  }
}

function checkAudit(final: FinalState, out: Violation[]): void {
  if ('error' in final.verify) out.push({ kind: 'audit-broken', detail: `audit verify failed: ${final.verify.error}` });
  else if (!final.verify.ok) out.push({ kind: 'audit-broken', detail: `audit verify: ${final.verify.problems.join('; ') || 'not ok'}` });
  const created = new Set<string>();
  const closings = new Map<string, string[]>();
  for (const e of final.audit) {
    if (!e.cardId) continue;
    if (e.event === 'card.created') created.add(e.cardId);
    if (CLOSING.has(e.event)) closings.set(e.cardId, [...(closings.get(e.cardId) ?? []), e.event]);
  }
  for (const c of final.cards) {
    if (!created.has(c.id)) out.push({ kind: 'audit-missing', detail: `card ${c.id} (${c.status}) has no card.created entry` });
    const closed = closings.get(c.id) ?? [];
    if (c.status !== 'pending' && !closed.includes(`card.${c.status}`)) out.push({ kind: 'audit-missing', detail: `card ${c.id} is ${c.status} but has no card.${c.status} entry` });
    if (closed.length > 1) out.push({ kind: 'closed-twice', detail: `card ${c.id}: ${closed.join(', ')}` });
  }
}

/** Every broken promise of the run, in the order of VIOLATION_KINDS. */
export function checkRun(history: History, final: FinalState, limits: Limits): Violation[] {
  const out: Violation[] = [];
  checkAsks(history, final, out);
  checkAnswers(history, final, out);
  checkPending(history, final, limits, out);
  checkFaults(history, limits, out);
  checkErrors(history, out);
  checkAudit(final, out);
  const order = Object.keys(VIOLATION_KINDS);
  return out.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
