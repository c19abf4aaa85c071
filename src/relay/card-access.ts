import { waitedFor } from '../cards/answer.js';
import type { Answer, Card, CardDraft } from '../cards/model.js';
import { parseReply, type ReplyOptions } from '../cards/reply-parser.js';
import { RelayError, storeUnavailable } from '../errors.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { CardFilter } from '../store/store.js';
import { answerRefusal, answeredBy, canSee, canSeeSession, notVisible, resolveFacts, type AccessFacts, type KnownFacts, type Principal } from './access.js';
import { auditRefusal } from './audit.js';
import { pause } from './clock.js';
import { humanSees } from '../routing/match.js';
import type { Relay, WaitOptions } from './relay.js';

/** A long poll's permission read that met the database away is tried again after this, then twice as long, up to the max. */
const READ_RETRY_MS = 100;
const READ_RETRY_MAX_MS = 2000;

interface LateOption {
  late?: boolean;
}

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
    if (who.kind === 'human') return cards.filter((card) => humanSees(who, card));
    const known = await this.known(who, cards.map((card) => card.sessionId));
    return cards.filter((card) => canSee(who, card, known));
  }

  async canSee(who: Principal, card: Card): Promise<boolean> {
    return who.kind === 'human' ? humanSees(who, card) : canSee(who, card, await this.known(who, [card.sessionId]));
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
    const known = await this.known(who, cards.map((card) => card.sessionId));
    return cards.map((card) => answerRefusal(who, card, known));
  }

  /** `late`: the human's answer to a card that expired or was cancelled (relay.answerLate). */
  async answer(who: Principal, id: string, answer: Answer, idempotencyKey?: string, { late = false }: LateOption = {}): Promise<Card> {
    // The operator may answer any card: relay.answer's own read is the only one.
    if (who.kind !== 'human' || who.id !== 'operator') this.check(who, await this.visible(who, id, 'answer'), 'answer', late);
    const options = { idempotencyKey, by: answeredBy(who) };
    return late ? this.relay.answerLate(id, answer, options) : this.relay.answer(id, answer, options);
  }

  /** What a person (or agent) typed, read with the plain-text rules (`asText`: as typed words), then answered like answer(). */
  async reply(who: Principal, id: string, text: string, idempotencyKey?: string, options: ReplyOptions & LateOption = {}): Promise<Card> {
    const seen = await this.visible(who, id, 'answer');
    const late = options.late ?? false;
    this.check(who, seen, 'answer', late);
    const { card } = seen;
    const by = answeredBy(who);
    // A closed card refuses (410) before its text is read; relay.answer says so.
    if (card.status !== 'pending' && card.status !== 'answered' && !late) return this.relay.answer(id, {}, { by });
    const answer = parseReply(card, text, options);
    return late ? this.relay.answerLate(id, answer, { idempotencyKey, by }) : this.relay.answer(id, answer, { idempotencyKey, by });
  }

  async skip(who: Principal, id: string): Promise<Card> {
    if (who.kind !== 'human' || who.id !== 'operator') this.check(who, await this.visible(who, id, 'skip'), 'skip');
    return this.relay.skip(id, answeredBy(who));
  }

  /**
   * The long poll: the card once closed (`late`: once it has an answer of any kind), its
   * answer then counted as delivered to the poller (`client`: which one, e.g. `askrelay ask`).
   */
  async wait(who: Principal, id: string, timeoutMs: number, options: WaitOptions & { client?: 'ask' } = {}): Promise<Card | undefined> {
    const end = this.relay.now() + timeoutMs;
    if (!(await this.readableBy(who, id, end, options.signal))) return undefined;
    const card = await this.relay.wait(id, Math.max(0, end - this.relay.now()), options);
    // A poller that does not wait for late answers does not take one it happens to see.
    const takes = card && (options.late ? waitedFor(card, true) : card.status === 'answered' || card.status === 'skipped');
    if (!card || !takes) return card;
    return this.relay.handOver(card, options.client ?? 'long-poll');
  }

  /**
   * Whether `who` may see the card, for a poll that keeps waiting while the database is away
   * (docs/api.md): a read that meets it away (a connection PostgreSQL terminated, a restart)
   * is tried again until it passes or the poll's time is up (false), rather than ending the
   * poll with 503 at once. A refusal (404) still ends it.
   */
  private async readableBy(who: Principal, id: string, end: number, signal?: AbortSignal): Promise<boolean> {
    for (let wait = READ_RETRY_MS; ; wait = Math.min(wait * 2, READ_RETRY_MAX_MS)) {
      try {
        await this.get(who, id);
        return true;
      } catch (err) {
        if (!storeUnavailable(err)) throw err;
      }
      const left = end - this.relay.now();
      if (left <= 0 || signal?.aborted) return false;
      await pause(this.relay.clock, Math.min(wait, left), signal);
    }
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
  private check(who: Principal, { card, known }: { card: Card; known: KnownFacts }, action: 'answer' | 'skip', late = false): void {
    const refused = answerRefusal(who, card, known, late);
    if (refused) this.refuse(who, card, action, refused);
  }

  private refuse(who: Principal, card: Card, action: string, error: RelayError): never {
    auditRefusal(this.audit, who, card, action, error.code, new Date(this.relay.now()));
    throw error;
  }
}
