import type { Card } from '../cards/model.js';
import type { AuditRecord, AuditWriter } from '../store/audit-store.js';
import type { Principal } from './access.js';
import type { RelayEvents } from './events.js';

// Feeds the audit log from the relay's events (every change of a card, after its commit)
// and from the refusals the access rules make (which change nothing, so make no event).

const SYSTEM = { kind: 'system' as const, id: 'relay' };

function fromCard(card: Card): AuditRecord {
  const base = { at: card.closedAt ?? card.createdAt, cardId: card.id, sessionId: card.sessionId };
  if (card.status === 'pending') {
    const by = card.askedBy;
    const routed = card.route ? { route: card.route, routedTo: card.routedTo, ...(card.restricted ? { restricted: true } : {}) } : {};
    return { ...base, event: 'card.created', actor: by ? { kind: by.kind, id: by.id } : SYSTEM, surface: by?.surface ?? card.provider, detail: { kind: card.kind, tool: card.tool, ...routed } };
  }
  const by = card.answeredBy;
  const actor = by && (card.status === 'answered' || card.status === 'skipped') ? { kind: by.kind, id: by.id } : SYSTEM;
  // A route's default at expiry says so: nobody answered, the rule did.
  const byDefault = card.status === 'answered' && by?.kind === 'system' && card.route ? { detail: { default: true, route: card.route, reply: card.onExpiry?.answer } } : {};
  return { ...base, event: `card.${card.status}`, actor, surface: by?.surface ?? 'relay', ...byDefault };
}

/** An escalation step reached: who the card goes to now (the step just done is the latest). */
function escalation(card: Card): AuditRecord {
  const step = [...(card.escalations ?? [])].reverse().find((s) => s.done);
  return {
    at: step?.done ?? card.createdAt,
    cardId: card.id,
    sessionId: card.sessionId,
    event: 'card.escalated',
    actor: { kind: 'system', id: `route:${card.route}` },
    surface: 'route',
    detail: { added: step?.to, routedTo: card.routedTo },
  };
}

function lateAnswer(card: Card): AuditRecord {
  const { answeredBy: by, lateAt } = card.lateAnswer!;
  return { at: lateAt, cardId: card.id, sessionId: card.sessionId, event: 'card.late_answer', actor: { kind: by.kind, id: by.id }, surface: by.surface };
}

/**
 * Appends every change of a card to the log (a change another node made, that node logs):
 * not where its answer got to (delivery), which is a fact about the waiter, not a decision.
 * Returns the unsubscribe.
 */
export function auditCardEvents(events: RelayEvents, audit: AuditWriter): () => void {
  return events.subscribe((name, data, remote) => {
    if (name === 'session.updated' || name === 'card.delivery' || remote) return;
    const card = data as Card;
    audit.enqueue(name === 'card.late' ? lateAnswer(card) : name === 'card.escalated' ? escalation(card) : fromCard(card));
  });
}

/** A refused attempt: who tried what on which card, and the code it was refused with. */
export function auditRefusal(audit: AuditWriter, who: Principal, card: Pick<Card, 'id' | 'sessionId'>, action: string, code: string, now: Date): void {
  audit.enqueue({
    at: now.toISOString(),
    event: 'card.refused',
    cardId: card.id,
    sessionId: card.sessionId,
    actor: { kind: who.kind, id: who.id },
    surface: who.surface,
    detail: { action, code },
  });
}
