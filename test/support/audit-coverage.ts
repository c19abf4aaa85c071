import type { Card } from '../../src/cards/model.js';
import type { AuditEntry } from '../../src/store/audit-store.js';

// Cards held against the audit log's entries: every change has its entry and every entry its
// change. One sentence per mismatch (none: the two agree).

const CLOSING = new Set(['card.answered', 'card.skipped', 'card.expired', 'card.cancelled']);

export function auditCoverage(cards: Card[], entries: AuditEntry[]): string[] {
  const problems: string[] = [];
  const byCard = new Map<string, string[]>();
  for (const entry of entries) {
    if (!entry.cardId || entry.event === 'card.refused' || !entry.event.startsWith('card.')) continue;
    byCard.set(entry.cardId, [...(byCard.get(entry.cardId) ?? []), entry.event]);
  }
  const count = (events: string[], event: string) => events.filter((e) => e === event).length;
  for (const card of cards) {
    const events = byCard.get(card.id) ?? [];
    byCard.delete(card.id);
    if (count(events, 'card.created') !== 1) problems.push(`card ${card.id} has ${count(events, 'card.created')} card.created entries`);
    const closing = events.filter((e) => CLOSING.has(e));
    const expected = card.status === 'pending' ? [] : [`card.${card.status}`];
    if (closing.join() !== expected.join()) problems.push(`card ${card.id} is ${card.status}, its closing entries are [${closing.join(', ')}]`);
    if (count(events, 'card.late_answer') !== (card.lateAnswer ? 1 : 0)) problems.push(`card ${card.id} has ${count(events, 'card.late_answer')} late answer entries`);
  }
  for (const [id, events] of byCard) problems.push(`entries [${events.join(', ')}] name card ${id}, which does not exist`);
  return problems;
}
