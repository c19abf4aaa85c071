import { asAnswered } from '../../cards/answer.js';
import type { Card } from '../../cards/model.js';
import { DELIVERED_TO, entryText } from '../format.js';

// Cards the terminal UI no longer lists, pure like the reducer (state.ts): the line each keeps
// says where its answer got to as the relay's events tell it (docs/api.md, "Delivery"), and a
// card that expired or was cancelled takes a late answer with `/late <card-id> <answer>`.

export interface Resolution {
  cardId: string;
  /** "Answered c_…: sqlite", "Card c_… expired before it was answered.", … */
  base: string;
  /** The base and where the answer got to: "Answered c_…: sqlite · delivered to the session". */
  line: string;
}

export const LATE_USAGE = '/late <card-id> <answer> answers a card that expired or was cancelled (a late answer).';

/** " · delivered to the session", " · answered late: sqlite · sent", or nothing before an answer. */
export function deliverySuffix(card: Card): string {
  const late = card.lateAnswer ? ` · answered late: ${answerSummary(asAnswered(card))}` : '';
  const d = card.delivery;
  if (!d) return late;
  const where = d.state === 'delivered' ? `delivered${d.to ? ` to ${DELIVERED_TO[d.to]}` : ''}` : d.state === 'undelivered' ? 'not delivered (nobody was waiting)' : d.state;
  return `${late} · ${where}`;
}

/** A closed card's answer in one line: "sqlite", "ts, rust", "db: sqlite; name: askrelay". */
export function answerSummary(card: Card): string {
  const answer = card.answer ?? {};
  if (card.questions.length === 1) return entryText(answer[card.questions[0].id]);
  return card.questions.map((q) => `${q.header || q.id}: ${entryText(answer[q.id])}`).join('; ');
}

/** The line kept for a closed card: how it closed (`base`), then where its answer got to. */
export const resolution = (card: Card, base: string): Resolution => ({ cardId: card.id, base, line: `${base}${deliverySuffix(card)}` });

/** A closed card's later news (its late answer, its delivery): its kept line follows; undefined when none is kept. */
export function withNews(resolved: Resolution[], card: Card): Resolution[] | undefined {
  const kept = resolved.find((r) => r.cardId === card.id);
  return kept && resolved.map((r) => (r === kept ? resolution(card, kept.base) : r));
}

/** `/late <card-id> <answer>`: the words, read like a typed reply, to send as a late answer; or why not. */
export function lateCommand(arg: string): { notice: string; reply?: { cardId: string; text: string } } {
  const [, id, text] = /^(\S+)\s+([\s\S]+)$/.exec(arg.trim()) ?? [];
  if (!id || !text?.trim()) return { notice: `Give the card and the answer. ${LATE_USAGE}` };
  return { notice: `Sending the late answer "${text.trim()}" to ${id}…`, reply: { cardId: id, text: text.trim() } };
}
