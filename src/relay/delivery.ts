import { sameAnswer } from '../cards/answer.js';
import type { Answer, AnsweredBy, Card, DeliveryState, DeliveryTarget } from '../cards/model.js';
import { RelayError } from '../errors.js';

// Late answers and where each answer got to (docs/api.md, "Late answers" and "Delivery"), as
// pure rules over a card: the relay core (relay.ts) stores what they return.
//
// An answer is `sent` once committed. Whoever was waiting for it says it was `delivered`
// (the session's runner, an MCP call's response, a long poll, `askrelay ask`). Nobody came
// back for it within the card's wait: `undelivered`, which a caller that comes back later
// (an MCP client re-sending its call) still turns into `delivered`.

/** The moves the relay makes; queued and failed live only on the page. */
const NEXT: Readonly<Record<DeliveryState, readonly DeliveryState[]>> = {
  queued: [],
  sent: ['delivered', 'undelivered'],
  undelivered: ['delivered'],
  delivered: [],
  failed: [],
};

/** How long after an answer's commit (at the earliest) nobody having taken it makes it undelivered. */
export const DELIVERY_GRACE_MS = 60_000;

/** The card with its delivery moved to `state`; undefined when that is no move from where it is. */
export function withDelivery(card: Card, state: DeliveryState, at: string, to?: DeliveryTarget): Card | undefined {
  const current = card.delivery?.state;
  if (!current || !NEXT[current].includes(state)) return undefined;
  return { ...card, delivery: { state, at, ...(to ? { to } : {}) } };
}

/** The delivery an answer starts with, committed with it. */
export const sentAt = (at: string) => ({ state: 'sent' as const, at });

/**
 * A card a session the relay runs asked (its runner stamps the engine): that session's manager
 * hands its late answer over when the turn ends, or calls it undelivered when the session ends.
 */
export const askedByRunner = (card: Card): boolean => card.sessionId !== null && card.engine !== undefined;

/** A late answer still to be handed to the session that asked (see askedByRunner). */
export const lateForSession = (card: Card): boolean => !!card.lateAnswer && card.delivery?.state === 'sent' && askedByRunner(card);

/**
 * When a sent answer nobody took counts as undelivered: after the card's wait, and never
 * before the grace. A late answer to a session the relay runs waits for the session instead.
 */
export function deliveryDue(card: Card): number | undefined {
  if (card.delivery?.state !== 'sent' || lateForSession(card)) return undefined;
  const sent = Date.parse(card.delivery.at);
  const wait = card.lateAnswer ? sent : Date.parse(card.expiresAt);
  return Math.max(wait, sent + DELIVERY_GRACE_MS);
}

/**
 * The card with the human's late answer (already checked against it), or undefined when it
 * holds this very answer already. A second, different late answer is refused with the first.
 */
export function withLateAnswer(card: Card, answer: Answer, by: AnsweredBy, at: string): Card | undefined {
  if (card.status === 'skipped') throw new RelayError('card_closed', 'The card was skipped; it takes no late answer.', { card });
  if (card.lateAnswer) {
    if (sameAnswer(card.lateAnswer.answer, answer)) return undefined;
    throw new RelayError('already_answered', 'The card already has a late answer; it takes one.', { card });
  }
  return { ...card, lateAnswer: { answer, answeredBy: by, lateAt: at }, delivery: sentAt(at) };
}
