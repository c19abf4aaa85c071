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
    return { ...base, event: 'card.created', actor: by ? { kind: by.kind, id: by.id } : SYSTEM, surface: by?.surface ?? card.provider, detail: { kind: card.kind, tool: card.tool } };
  }
  const by = card.answeredBy;
  const actor = by && (card.status === 'answered' || card.status === 'skipped') ? { kind: by.kind, id: by.id } : SYSTEM;
  return { ...base, event: `card.${card.status}`, actor, surface: by?.surface ?? 'relay' };
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
    audit.enqueue(name === 'card.late' ? lateAnswer(data as Card) : fromCard(data as Card));
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
