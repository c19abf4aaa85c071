import type { Card } from '../cards/model.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { Principal } from './access.js';

// The refusals the access rules make go to the audit log from here: they change nothing, so
// no store transaction records them. Every change of a card is recorded by the store, in the
// change's own transaction (src/store/card-audit.ts).

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
