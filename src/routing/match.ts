import type { Card } from '../cards/model.js';
import { parseDuration } from '../config.js';
import { EVERYONE, namesChannel, peopleIn, type RouteMatch, type RouteRule, type Routes } from './rules.js';

// Pure: which rule a new card matches and what that makes of it (the fields the card keeps,
// so that its escalation and default answer hold even if the rules change while it waits),
// and who may see a restricted card. The first rule that matches wins; none: everyone.

/** The card's fields a route sets. */
export type Routing = Pick<Card, 'route' | 'routedTo' | 'restricted' | 'escalations' | 'onExpiry'>;

const anyOf = (want: string | string[] | undefined, have: string | null | undefined) =>
  want === undefined || (have != null && (Array.isArray(want) ? want.includes(have) : want === have));

export function matches(match: RouteMatch, card: Card): boolean {
  return (
    anyOf(match.provider, card.provider) &&
    anyOf(match.engine, card.engine) &&
    anyOf(match.kind, card.kind) &&
    anyOf(match.tool, card.tool) &&
    anyOf(match.session, card.sessionId) &&
    Object.entries(match.labels ?? {}).every(([key, value]) => card.labels?.[key] === value)
  );
}

/** The routing of a new card (created at `card.createdAt`): empty when no rule matches. */
export function routeCard(routes: Routes, card: Card): Routing {
  const rule = routes.find((r) => matches(r.match, card));
  return rule ? routingOf(rule, Date.parse(card.createdAt)) : {};
}

export function routingOf(rule: RouteRule, createdAt: number): Routing {
  return {
    route: rule.name,
    routedTo: [...new Set(rule.to)],
    ...(rule.restrict ? { restricted: true } : {}),
    ...(rule.escalate?.length
      ? { escalations: rule.escalate.map((step) => ({ at: new Date(createdAt + parseDuration(step.after)).toISOString(), to: [...new Set(step.to)] })).sort((a, b) => a.at.localeCompare(b.at)) }
      : {}),
    ...(rule.onExpiry ? { onExpiry: { answer: rule.onExpiry.answer } } : {}),
  };
}

/** The next escalation step still to come, and when (ms). */
export function nextEscalation(card: Card): { index: number; at: number } | undefined {
  const index = card.escalations?.findIndex((step) => !step.done) ?? -1;
  return index < 0 ? undefined : { index, at: Date.parse(card.escalations![index].at) };
}

/**
 * The card with its escalation step `index` reached: its targets added to routedTo, the
 * step marked done. Undefined when there is nothing to do (closed, or reached already by
 * another node), so the store's compare-and-set writes once.
 */
export function escalated(card: Card, index: number, at: string): Card | undefined {
  const step = card.escalations?.[index];
  if (card.status !== 'pending' || !step || step.done) return undefined;
  const escalations = card.escalations!.map((s, i) => (i === index ? { ...s, done: at } : s));
  return { ...card, routedTo: [...new Set([...(card.routedTo ?? []), ...step.to])], escalations };
}

/** Whether the card goes to everyone (no route, or a route naming "everyone"). */
export const toEveryone = (card: Pick<Card, 'routedTo'>) => !card.routedTo || card.routedTo.includes(EVERYONE);

/** The people a card goes to by name (everyone's cards name none). */
export const routedPeople = (card: Pick<Card, 'routedTo'>) => peopleIn(card.routedTo ?? []);

/**
 * Whether a human sees a card: any card that is not restricted; a restricted one only the
 * operator, the people it is routed to, and whoever acts in a chat it was routed to.
 */
export function humanSees(who: { id: string; surface: string }, card: Pick<Card, 'restricted' | 'routedTo'>): boolean {
  if (!card.restricted || who.id === 'operator' || toEveryone(card)) return true;
  return card.routedTo!.includes(who.id) || namesChannel(card.routedTo!, who.surface);
}
