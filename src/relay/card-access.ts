import type { Answer, Card, CardDraft } from '../cards/model.js';
import { parseReply, type ReplyOptions } from '../cards/reply-parser.js';
import { RelayError } from '../errors.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { CardFilter } from '../store/store.js';
import { answerRefusal, answeredBy, canSee, canSeeSession, notVisible, resolveFacts, type AccessFacts, type KnownFacts, type Principal } from './access.js';
import { auditRefusal } from './audit.js';
import type { Relay } from './relay.js';

// The relay core as one principal sees it: every surface (HTTP routes, the relay tool,
// MCP) reads and answers cards through here, so the access rules (access.ts) hold
// everywhere and every refusal is audited. A refusal changes nothing. The session facts the
// rules read are resolved first, once per call (once per session for a whole list), and the
// pure rules then decide on that one reading.

export class CardAccess {
  constructor(
    readonly relay: Relay,
    private readonly facts: AccessFacts,
    private readonly audit: AuditWriter,
  ) {}

  /** A card asked by `who`; an agent's card belongs to its session. */
  create(who: Principal, draft: CardDraft): Promise<Card> {
    const sessionId = who.kind === 'agent' ? who.sessionId : (draft.sessionId ?? null);
    return this.relay.create({ ...draft, sessionId, askedBy: draft.askedBy ?? answeredBy(who) });
  }

  async get(who: Principal, id: string, action: 'read' | 'answer' | 'skip' = 'read'): Promise<Card> {
    return (await this.visible(who, id, action)).card;
  }

  async list(who: Principal, filter: CardFilter = {}): Promise<Card[]> {
    const cards = await this.relay.list(filter);
    if (who.kind === 'human') return cards;
    const known = await this.known(who, cards.map((card) => card.sessionId));
    return cards.filter((card) => canSee(who, card, known));
  }

  async canSee(who: Principal, card: Card): Promise<boolean> {
    return who.kind === 'human' || canSee(who, card, await this.known(who, [card.sessionId]));
  }

  async canSeeSession(who: Principal, sessionId: string): Promise<boolean> {
    return who.kind === 'human' || canSeeSession(who, sessionId, await this.known(who, [sessionId]));
  }

  /** The sessions (of these) that `who` may read, in their order. */
  async visibleSessions<T extends { id: string }>(who: Principal, sessions: T[]): Promise<T[]> {
    if (who.kind === 'human') return sessions;
    const known = await this.known(who, sessions.map((s) => s.id));
    return sessions.filter((s) => canSeeSession(who, s.id, known));
  }

  /** Whether `who` may answer each card (it can see them); the refusal where not. */
  async refusals(who: Principal, cards: Card[]): Promise<(RelayError | undefined)[]> {
    if (who.kind === 'human') return cards.map(() => undefined);
    const known = await this.known(who, cards.map((card) => card.sessionId));
    return cards.map((card) => answerRefusal(who, card, known));
  }

  async answer(who: Principal, id: string, answer: Answer, idempotencyKey?: string): Promise<Card> {
    // The human may answer any card: relay.answer's own read is the only one.
    if (who.kind !== 'human') this.check(who, await this.visible(who, id, 'answer'), 'answer');
    return this.relay.answer(id, answer, { idempotencyKey, by: answeredBy(who) });
  }

  /** What a person (or agent) typed, read with the plain-text rules (`asText`: as typed words), then answered like answer(). */
  async reply(who: Principal, id: string, text: string, idempotencyKey?: string, options: ReplyOptions = {}): Promise<Card> {
    const seen = await this.visible(who, id, 'answer');
    this.check(who, seen, 'answer');
    const { card } = seen;
    const by = answeredBy(who);
    // A closed card refuses (410) before its text is read; relay.answer says so.
    if (card.status !== 'pending' && card.status !== 'answered') return this.relay.answer(id, {}, { by });
    return this.relay.answer(id, parseReply(card, text, options), { idempotencyKey, by });
  }

  async skip(who: Principal, id: string): Promise<Card> {
    if (who.kind !== 'human') this.check(who, await this.visible(who, id, 'skip'), 'skip');
    return this.relay.skip(id, answeredBy(who));
  }

  async wait(who: Principal, id: string, timeoutMs: number, signal?: AbortSignal): Promise<Card | undefined> {
    await this.get(who, id);
    return this.relay.wait(id, timeoutMs, signal);
  }

  /** The card, with the facts it was judged on; refused (404, audited) when `who` may not see it. */
  private async visible(who: Principal, id: string, action: 'read' | 'answer' | 'skip'): Promise<{ card: Card; known: KnownFacts }> {
    const card = await this.relay.get(id);
    const known = await this.known(who, [card.sessionId]);
    if (canSee(who, card, known)) return { card, known };
    this.refuse(who, card, action, notVisible(id));
  }

  private known(who: Principal, sessionIds: (string | null)[]): Promise<KnownFacts> {
    return resolveFacts(this.facts, who, sessionIds);
  }

  /** Judged on the same reading of the facts that let `who` see the card. */
  private check(who: Principal, { card, known }: { card: Card; known: KnownFacts }, action: 'answer' | 'skip'): void {
    const refused = answerRefusal(who, card, known);
    if (refused) this.refuse(who, card, action, refused);
  }

  private refuse(who: Principal, card: Card, action: string, error: RelayError): never {
    auditRefusal(this.audit, who, card, action, error.code, new Date(this.relay.now()));
    throw error;
  }
}
