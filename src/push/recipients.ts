import type { Card } from '../cards/model.js';
import { routedPeople, toEveryone } from '../routing/match.js';
import { EVERYONE, peopleIn } from '../routing/rules.js';
import type { PushSubscriptionRecord } from '../store/push-subscription-store.js';

// Pure: whose browsers a card event is pushed to (docs/routing.md). A card routed to everyone
// (or matching no route) goes to every subscription, the operator's included; a routed card
// only to its people's; an escalation only to the people its latest step added (its close,
// later, to everyone it went to).

export function pushedTo(card: Card, subscriptions: PushSubscriptionRecord[], escalated = false): PushSubscriptionRecord[] {
  if (escalated) {
    const step = [...(card.escalations ?? [])].reverse().find((s) => s.done);
    if (!step) return [];
    const before = new Set(card.routedTo?.filter((t) => !step.to.includes(t)));
    if (step.to.includes(EVERYONE)) return subscriptions.filter((s) => !s.who || !before.has(s.who));
    const added = new Set(peopleIn(step.to).filter((name) => !before.has(name)));
    return subscriptions.filter((s) => s.who !== undefined && added.has(s.who));
  }
  if (toEveryone(card)) return subscriptions;
  const people = new Set(routedPeople(card));
  return subscriptions.filter((s) => s.who !== undefined && people.has(s.who));
}
