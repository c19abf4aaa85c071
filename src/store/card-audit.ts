import type { Card } from '../cards/model.js';
import type { AuditRecord } from './audit-chain.js';

// What the audit log records of each change of a card, as a pure function of the change and
// the card as it was stored. Each store writes the record in the same transaction as the
// change, so that a crash at any instant leaves neither a change without its entry nor an
// entry without its change. A change another node made, that node records.

/**
 * How a card changed: made, closed (answered, skipped, expired, cancelled), or amended
 * after (a late answer, an escalation step, where its answer got to).
 */
export type CardChange = 'created' | 'closed' | AmendKind;
/** What an amendment of a card is; a delivery is a fact about the waiter, not a decision, and is not recorded. */
export type AmendKind = 'late' | 'escalated' | 'delivery';

const SYSTEM = { kind: 'system' as const, id: 'relay' };

function created(card: Card): AuditRecord {
  const by = card.askedBy;
  const routed = card.route ? { route: card.route, routedTo: card.routedTo, ...(card.restricted ? { restricted: true } : {}) } : {};
  return {
    at: card.createdAt,
    cardId: card.id,
    sessionId: card.sessionId,
    event: 'card.created',
    actor: by ? { kind: by.kind, id: by.id } : SYSTEM,
    surface: by?.surface ?? card.provider,
    detail: { kind: card.kind, tool: card.tool, ...routed },
  };
}

function closed(card: Card): AuditRecord {
  const by = card.answeredBy;
  const actor = by && (card.status === 'answered' || card.status === 'skipped') ? { kind: by.kind, id: by.id } : SYSTEM;
  // A route's default at expiry says so: nobody answered, the rule did.
  const byDefault = card.status === 'answered' && by?.kind === 'system' && card.route ? { detail: { default: true, route: card.route, reply: card.onExpiry?.answer } } : {};
  return { at: card.closedAt ?? card.createdAt, cardId: card.id, sessionId: card.sessionId, event: `card.${card.status as Exclude<Card['status'], 'pending'>}`, actor, surface: by?.surface ?? 'relay', ...byDefault };
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

/** The entry recording `change` of `card` (the card as stored after it), or undefined when it is not recorded. */
export function cardAuditRecord(change: CardChange, card: Card): AuditRecord | undefined {
  switch (change) {
    case 'created':
      return created(card);
    case 'closed':
      return closed(card);
    case 'escalated':
      return escalation(card);
    case 'late':
      return lateAnswer(card);
    case 'delivery':
      return undefined;
  }
}
