import type { Answer, AnsweredBy, Card } from '../cards/model.js';
import { parseReply } from '../cards/reply-parser.js';

// A route's default at expiry (docs/routing.md): the rule's plain-text reply, read like a
// person's reply in a chat (a number or an option's label picks it; other words are typed
// text where the question takes it), answered as the system principal "route:<name>".

export const routeAnswerer = (route: string): AnsweredBy => ({ kind: 'system', id: `route:${route}`, surface: 'route' });

/** The card's default answer, or undefined when the reply does not fit it (the card then expires as usual). */
export function defaultAnswer(card: Card): { answer: Answer; answeredBy: AnsweredBy } | undefined {
  if (!card.onExpiry) return undefined;
  const answeredBy = routeAnswerer(card.route ?? 'default');
  for (const asText of [false, true]) {
    try {
      return { answer: parseReply(card, card.onExpiry.answer, { asText }), answeredBy };
    } catch {
      // Not as a pick: try it as typed words.
    }
  }
  return undefined;
}
