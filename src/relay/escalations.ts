import type { Card } from '../cards/model.js';
import { escalated, nextEscalation } from '../routing/match.js';
import type { AsyncCardStore } from '../store/store.js';
import type { Clock } from './clock.js';
import { Deadlines } from './deadlines.js';

// A routed card's escalation steps (docs/routing.md): when a step's time comes and the card
// is still pending, its targets are added to the card's routedTo, in one compare-and-set
// write (each node arms the step, like a deadline; the first to write it wins), and the
// change is told (card.escalated: push and the chat channels notify the new targets). The
// steps are kept on the card, so a restart re-arms them from the store.

const RETRY_MS = 1000;

export class Escalations {
  private readonly due: Deadlines;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly store: Pick<AsyncCardStore, 'getCard' | 'amendCard'>,
    private readonly escalatedTo: (card: Card) => Promise<void>,
  ) {
    this.due = new Deadlines(clock, (ids) =>
      ids.forEach((id) => void this.escalate(id).catch(() => this.stopped || this.due.add(id, this.clock.now() + RETRY_MS))),
    );
  }

  /** Arms the card's next step (or forgets it: closed, or none left). */
  track(card: Card): void {
    const next = card.status === 'pending' ? nextEscalation(card) : undefined;
    if (next) this.due.add(card.id, next.at);
    else this.due.remove(card.id);
  }

  stop(): void {
    this.stopped = true;
    this.due.clear();
  }

  private async escalate(id: string): Promise<void> {
    const card = await this.store.getCard(id);
    const next = card?.status === 'pending' ? nextEscalation(card) : undefined;
    if (!card || !next) return;
    if (next.at > this.clock.now()) return this.track(card);
    const result = await this.store.amendCard(id, (current) => escalated(current, next.index, new Date(this.clock.now()).toISOString()), 'escalated');
    if (!result) return;
    if (result.changed) await this.escalatedTo(result.card);
    this.track(result.card);
  }
}
