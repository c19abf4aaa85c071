import type { AnswerEntry, Card } from '../cards/model.js';
import { lateForSession } from '../relay/delivery.js';
import type { Relay } from '../relay/relay.js';
import { CLOSED, type SessionBook } from './session-book.js';
import { runTurn, type TurnDeps } from './turns.js';

// A late answer to a card a running session asked (docs/api.md, "Late answers") becomes the
// session's next user message: at once when the session is idle (a manual session that
// ended its turn on the expiry starts its next turn with it), else when the current turn
// ends, never in the middle of one. A session that has ended leaves it undelivered. Every
// node hears every late answer; only the node running the session hands it over.

const hhmm = (iso: string) => `${iso.slice(11, 16)} UTC`;

function entryText(entry: AnswerEntry | undefined): string {
  const parts = [...(entry?.selected ?? []), ...(entry?.text ? [entry.text] : [])];
  return parts.length ? parts.join(', ') : '(no answer)';
}

const sentence = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`);

/** The user message that carries a late answer, in the words every provider's model reads. */
export function lateMessage(card: Card): string {
  const late = card.lateAnswer;
  if (!late) throw new Error(`card ${card.id} has no late answer`);
  const how = card.status === 'cancelled' ? 'was cancelled' : 'expired';
  const when = hhmm(card.closedAt ?? card.expiresAt);
  if (card.questions.length === 1) {
    const [q] = card.questions;
    // An approval's question is the relay's long account of the request; its title names it.
    const asked = card.kind === 'approval' ? `request "${card.title ?? q.header ?? q.text}"` : `question "${q.text}"`;
    return sentence(`Late answer to your ${asked} (it ${how} at ${when}; you went on without it): ${entryText(late.answer[q.id])}`);
  }
  const lines = card.questions.map((q) => `"${q.text}": ${entryText(late.answer[q.id])}`);
  return [`Late answers to your questions (they ${how === 'expired' ? 'expired' : 'were cancelled'} at ${when}; you went on without them):`, ...lines].join('\n');
}

export class LateAnswers {
  constructor(
    private readonly relay: Relay,
    private readonly book: SessionBook,
    private readonly turns: () => TurnDeps,
  ) {}

  /** Listens for late answers; returns the unsubscribe. */
  listen(): () => void {
    return this.relay.events.subscribe((name, data, remote) => {
      if (name !== 'card.late') return;
      const card = data as Card;
      if (!lateForSession(card)) return;
      if (this.book.live.has(card.sessionId!)) this.offer(card.sessionId!);
      // The node that stored it says when nobody will take it; a session alive on another
      // node hears it there, and one waiting to be adopted takes it after its next turn.
      else if (!remote) this.book.background(card.sessionId!, 'a late answer', () => this.ifEnded(card));
    });
  }

  /** After a turn ends (and when a late answer arrives): hands over what waits, if the session is idle. */
  offer(id: string): void {
    this.book.background(id, 'a late answer', () => this.handOver(id));
  }

  private async handOver(id: string): Promise<void> {
    const live = this.book.live.get(id);
    if (!live || (await this.book.status(id)) !== 'idle') return;
    const late = (await this.relay.list({ sessionId: id })).filter(lateForSession);
    if (!late.length) return;
    const text = late.map(lateMessage).join('\n\n');
    await this.book.log(id, 'user', text);
    await runTurn(this.turns(), id, () => live.runner.send(text));
    await Promise.all(late.map((card) => this.relay.delivered(card, 'session')));
  }

  private async ifEnded(card: Card): Promise<void> {
    const status = await this.book.status(card.sessionId!);
    if (!status || CLOSED.includes(status)) await this.relay.undelivered(card);
  }
}
