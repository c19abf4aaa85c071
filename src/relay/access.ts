import type { AnsweredBy, Card } from '../cards/model.js';
import { RelayError } from '../errors.js';
import { humanSees, routedPeople } from '../routing/match.js';

// Who may see and answer which card: one pure table, used by every surface (HTTP routes,
// the relay tool, MCP). See docs/cross-session.md for the matrix.
//
// - The operator (the relay token, or the page's cookie) is the human: sees and answers all.
//   A person (a personal token, docs/routing.md) sees every card but those a route
//   restricts to others (routing/match.ts humanSees); a chat user, the cards routed to the chat.
// - An agent is a session's agent (its own agent token, or the relay tool inside the
//   session) or an MCP client (sessionId null). It sees the cards of its own session, of
//   sessions whose human let agents answer (agentsMayAnswer), and of sessions the human let
//   it watch. A card it may not see does not exist for it (404).
// - Only the human gives a late answer (to a card that expired or was cancelled).
// - An agent never answers an approval card (start / watch a session, plan approvals, tool
//   permissions): 403 human_only, whatever the settings; nor a card of its own session
//   (403 own_session); nor a card of a session that does not let agents answer (403
//   agents_not_allowed, when it may see it through a watch).
// - An approval card whose Approve does what only the operator may do (the relay tool's
//   start_session: a person's token is 403 operator_only on POST /api/sessions) is the
//   operator's to answer or skip, and of the people its route names: any other person or
//   chat user is 403 operator_only, so nobody gets the operator's power through a card.

export type Principal =
  // id: 'operator', or a chat user the channel's config lets answer ("telegram:123").
  | { kind: 'human'; id: string; surface: string }
  | { kind: 'agent'; id: string; sessionId: string | null; surface: string };

export const HUMAN_OPERATOR = (surface: string): Principal => ({ kind: 'human', id: 'operator', surface });

/**
 * The facts about sessions the rules read, resolved beforehand for the sessions in question
 * (resolveFacts): the rules below stay pure and synchronous.
 */
export interface KnownFacts {
  agentsMayAnswer(sessionId: string): boolean;
  /** Whether the human approved watch_session on `target` for `watcher` (an agent's id). */
  watches(watcher: string, target: string): boolean;
}

/** The facts about sessions as the session store answers them (asynchronously, as PostgreSQL does). */
export interface AccessFacts {
  agentsMayAnswer(sessionId: string): Promise<boolean>;
  /** Whether the human approved watch_session on `target` for `watcher` (an agent's id). */
  watches(watcher: string, target: string): Promise<boolean>;
}

/**
 * The facts `who` needs about these sessions, read once per session however many cards
 * name it: the human needs none, and an agent's own session is free. Asking the result
 * about a session not resolved here is a mistake in the caller, and throws.
 */
export async function resolveFacts(facts: AccessFacts, who: Principal, sessionIds: Iterable<string | null | undefined>): Promise<KnownFacts> {
  const mayAnswer = new Map<string, boolean>();
  const watched = new Map<string, boolean>();
  if (who.kind === 'agent') {
    const others = [...new Set(sessionIds)].filter((id): id is string => !!id && id !== who.sessionId);
    await Promise.all(
      others.map(async (id) => {
        const [may, watches] = await Promise.all([facts.agentsMayAnswer(id), facts.watches(who.id, id)]);
        mayAnswer.set(id, may);
        watched.set(id, watches);
      }),
    );
  }
  const known = (map: Map<string, boolean>, id: string) => {
    const value = map.get(id);
    if (value === undefined) throw new Error(`The access facts about session ${id} were not resolved.`);
    return value;
  };
  return {
    agentsMayAnswer: (id) => known(mayAnswer, id),
    watches: (watcher, target) => {
      if (who.kind !== 'agent' || watcher !== who.id) throw new Error(`The access facts were resolved for ${who.id}, not ${watcher}.`);
      return known(watched, target);
    },
  };
}

export function canSee(who: Principal, card: Card, facts: KnownFacts): boolean {
  if (who.kind === 'human') return humanSees(who, card);
  const owner = card.sessionId;
  if (!owner) return false;
  // Its own session first: free, where the other two read the session store. A restricted
  // card (its route's restrict) is its own session's agent's and its routed people's only.
  if (owner === who.sessionId) return true;
  return !card.restricted && (facts.agentsMayAnswer(owner) || facts.watches(who.id, owner));
}

/** An agent reads its own session and the sessions it was allowed to watch; the human, all. */
export function canSeeSession(who: Principal, sessionId: string, facts: KnownFacts): boolean {
  return who.kind === 'human' || sessionId === who.sessionId || facts.watches(who.id, sessionId);
}

/** The relay tool's approvals whose Approve uses a power of the operator's alone (src/server/auth.ts operatorOnly). */
const OPERATOR_POWER_TOOLS: ReadonlySet<string> = new Set(['start_session']);

export const grantsOperatorPower = (card: Pick<Card, 'kind' | 'origin' | 'tool'>) => card.kind === 'approval' && card.origin === 'relay' && OPERATOR_POWER_TOOLS.has(card.tool);

/** Why `who` may not answer or skip a card it can see (`late`: after it closed); undefined when it may. */
export function answerRefusal(who: Principal, card: Card, facts: KnownFacts, late = false): RelayError | undefined {
  if (who.kind === 'human') {
    if (who.id === 'operator' || !grantsOperatorPower(card) || routedPeople(card).includes(who.id)) return undefined;
    return new RelayError('operator_only', `Card ${card.id} approves ${card.tool}, which only the operator may do; only the operator (or a person its route names) can answer it.`);
  }
  if (late) {
    return new RelayError('human_only', `Card ${card.id} is closed; only the human can give it a late answer.`);
  }
  if (card.kind === 'approval') {
    return new RelayError('human_only', `Card ${card.id} is an approval; only the human can answer it. Wait for them, or ask them.`);
  }
  if (card.sessionId !== null && card.sessionId === who.sessionId) {
    return new RelayError('own_session', `Card ${card.id} was asked in your own session; only the human (or another agent they allow) can answer it.`);
  }
  if (!card.sessionId || !facts.agentsMayAnswer(card.sessionId)) {
    return new RelayError(
      'agents_not_allowed',
      `The human has not allowed agents to answer the cards of session ${card.sessionId ?? '(none)'}; ask the human instead.`,
    );
  }
  return undefined;
}

/**
 * What only the operator (the relay token) may do, beyond what any human may: manage people,
 * routes and sessions, and read what spans every card and person (the audit log and its
 * verification, the nodes, the chat channels' state: a person would read there the ids,
 * routes and targets of cards restricted to others). A person (or chat user): 403
 * operator_only; an agent: 403 human_only. Enforced by src/server/auth.ts operatorOnly.
 */
export function operatorRefusal(who: Principal): RelayError | undefined {
  if (who.kind !== 'human') return new RelayError('human_only', 'Only the human (the relay token) can do this; an agent token cannot.');
  if (who.id !== 'operator') return new RelayError('operator_only', 'Only the operator (the relay token) can do this; a personal token cannot.');
  return undefined;
}

/** 404 for a card `who` may not see, exactly like a card that does not exist. */
export const notVisible = (id: string) => new RelayError('not_found', `No card "${id}".`);

export const answeredBy = (who: Principal): AnsweredBy => ({ kind: who.kind, id: who.id, surface: who.surface });

/** The facts from the stored sessions. */
export function sessionFacts(sessions: {
  get(id: string): Promise<{ agentsMayAnswer: boolean } | undefined>;
  watches(watcher: string, target: string): Promise<boolean>;
}): AccessFacts {
  return {
    agentsMayAnswer: async (id) => (await sessions.get(id))?.agentsMayAnswer ?? false,
    watches: (watcher, target) => sessions.watches(watcher, target),
  };
}
