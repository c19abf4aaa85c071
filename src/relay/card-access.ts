import type { Answer, Card, CardDraft } from '../cards/model.js';
import { parseReply } from '../cards/reply-parser.js';
import { RelayError } from '../errors.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { CardFilter } from '../store/store.js';
import { answerRefusal, answeredBy, canSee, canSeeSession, notVisible, type AccessFacts, type Principal } from './access.js';
import { auditRefusal } from './audit.js';
import type { Relay } from './relay.js';

// The relay core as one principal sees it: every surface (HTTP routes, the relay tool,
// MCP) reads and answers cards through here, so the access rules (access.ts) hold
// everywhere and every refusal is audited. A refusal changes nothing.

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
    const card = await this.relay.get(id);
    if (canSee(who, card, this.facts)) return card;
    this.refuse(who, card, action, notVisible(id));
  }

  async list(who: Principal, filter: CardFilter = {}): Promise<Card[]> {
    const cards = await this.relay.list(filter);
    return who.kind === 'human' ? cards : cards.filter((card) => canSee(who, card, this.facts));
  }

  canSee(who: Principal, card: Card): boolean {
    return canSee(who, card, this.facts);
  }

  canSeeSession(who: Principal, sessionId: string): boolean {
    return canSeeSession(who, sessionId, this.facts);
  }

  /** Whether `who` may answer the card (it can see it); the refusal otherwise. */
  refusal(who: Principal, card: Card): RelayError | undefined {
    return answerRefusal(who, card, this.facts);
  }

  async answer(who: Principal, id: string, answer: Answer, idempotencyKey?: string): Promise<Card> {
    // The human may answer any card: relay.answer's own read is the only one.
    if (who.kind !== 'human') this.check(who, await this.get(who, id, 'answer'), 'answer');
    return this.relay.answer(id, answer, { idempotencyKey, by: answeredBy(who) });
  }

  /** What a person (or agent) typed, read with the plain-text rules, then answered like answer(). */
  async reply(who: Principal, id: string, text: string, idempotencyKey?: string): Promise<Card> {
    const card = await this.get(who, id, 'answer');
    this.check(who, card, 'answer');
    const by = answeredBy(who);
    // A closed card refuses (410) before its text is read; relay.answer says so.
    if (card.status !== 'pending' && card.status !== 'answered') return this.relay.answer(id, {}, { by });
    return this.relay.answer(id, parseReply(card, text), { idempotencyKey, by });
  }

  async skip(who: Principal, id: string): Promise<Card> {
    if (who.kind !== 'human') this.check(who, await this.get(who, id, 'skip'), 'skip');
    return this.relay.skip(id, answeredBy(who));
  }

  async wait(who: Principal, id: string, timeoutMs: number, signal?: AbortSignal): Promise<Card | undefined> {
    await this.get(who, id);
    return this.relay.wait(id, timeoutMs, signal);
  }

  private check(who: Principal, card: Card, action: 'answer' | 'skip'): void {
    const refused = answerRefusal(who, card, this.facts);
    if (refused) this.refuse(who, card, action, refused);
  }

  private refuse(who: Principal, card: Card, action: string, error: RelayError): never {
    auditRefusal(this.audit, who, card, action, error.code, new Date(this.relay.now()));
    throw error;
  }
}
