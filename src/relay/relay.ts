import { checkAnswer, credentialRefused, sameAnswer } from '../cards/answer.js';
import { personalTokenCandidates } from '../cards/secrets.js';
import { newCard } from './new-card.js';
import type { Answer, AnsweredBy, Card, CardDraft, CardStatus, DeliveryTarget } from '../cards/model.js';
import { RelayError } from '../errors.js';
import type { AsyncCardStore, CardFilter } from '../store/store.js';
import { MAX_TIMER_MS, systemClock, type Clock } from './clock.js';
import { Deadlines } from './deadlines.js';
import { deliveryDue, sentAt, withDelivery, withLateAnswer } from './delivery.js';
import { RelayEvents, type CardEventName } from './events.js';
import { Waiters, type WaitOptions } from './waiters.js';
import { Escalations } from './escalations.js';
import { defaultAnswer } from '../routing/default-answer.js';
import type { Routing } from '../routing/match.js';

export type { WaitOptions } from './waiters.js';
export { cardIdFor } from './new-card.js';

// The relay core: the only place cards change. Every change is committed to the store
// first, then announced (events) and handed to whoever waits on the card. The store may be
// a networked database shared with other nodes, so every read and change is asynchronous
// and a card is always re-read rather than trusted from memory.

export interface RelayOptions {
  store: AsyncCardStore;
  clock?: Clock;
  events?: RelayEvents;
  /**
   * How long a card waits, in ms, when its draft gives no waitSeconds (ASKRELAY_WAIT). An
   * engine with a wait of its own (src/sessions/providers.ts) gives it in its drafts.
   */
  waits: { default: number };
  /**
   * Routes each new card (docs/routing.md): its session's labels under its own, and what the
   * first matching rule makes of it. None: every card goes to everyone.
   */
  router?: CardRouter;
  /**
   * Whether this is a live personal token (the user store, by its hash): an answer holding
   * one is refused however it is glued into the text (src/cards/secrets.ts).
   */
  isPersonalToken?: (candidate: string) => Promise<boolean>;
}

export interface CardRouter {
  route(card: Card): Promise<RoutedCard>;
  /** The store said the routes were replaced since (another node): read them again. */
  refresh(): Promise<void>;
}

/** What routing makes of a new card, and (several nodes) the version of the routes it used. */
export interface RoutedCard {
  fields: Routing & Pick<Card, 'labels'>;
  routesAt?: number | null;
}

/** Routings of one card retried because another node replaced the routes meanwhile, before the last goes in unchecked. */
const ROUTING_TRIES = 3;

export interface AnswerOptions {
  by?: AnsweredBy;
  idempotencyKey?: string;
}

export const EXPIRY_RETRY_MS = 1000;
export const HUMAN_API: AnsweredBy = { kind: 'human', id: 'operator', surface: 'api' };

export class Relay {
  readonly events: RelayEvents;
  private readonly store: AsyncCardStore;
  /** The relay's clock (a fake one in tests); the MCP calls' progress and grace timers run on it too. */
  readonly clock: Clock;
  private readonly waits: RelayOptions['waits'];
  private readonly deadlines: Deadlines;
  /** When each answer committed here counts as undelivered if nobody took it (delivery.ts). */
  private readonly dues: Deadlines;
  private readonly waiters: Waiters;
  private readonly escalations: Escalations;
  private readonly router?: CardRouter;
  private readonly isPersonalToken?: (candidate: string) => Promise<boolean>;
  /** Set by stop(): the store may be closed, so a failed expiry is not tried again. */
  private stopped = false;

  constructor(options: RelayOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.isPersonalToken = options.isPersonalToken;
    this.events = options.events ?? new RelayEvents();
    this.waits = options.waits;
    this.waiters = new Waiters(this.clock, (id) => this.get(id));
    this.router = options.router;
    this.escalations = new Escalations(this.clock, this.store, (card) => this.changed('card.escalated', card));
    // An expiry the store did not take (its file locked by another program, the database
    // away) is tried again a little later, rather than leaving the card open past its deadline.
    this.deadlines = new Deadlines(this.clock, (ids) =>
      ids.forEach((id) => void this.expire(id).catch(() => this.stopped || this.deadlines.add(id, this.clock.now() + EXPIRY_RETRY_MS))),
    );
    // Held in memory only: after a restart, the first read of such a card notices (settleIfDue).
    this.dues = new Deadlines(this.clock, (ids) =>
      ids.forEach((id) => void this.undeliverIfDue(id).catch(() => this.stopped || this.dues.add(id, this.clock.now() + EXPIRY_RETRY_MS))),
    );
  }

  /** Recovers after a start: expires what ran out while down and re-arms the rest. */
  async start(): Promise<{ expired: Card[]; pending: number }> {
    const expired = await this.store.expireOverdue(this.clock.now());
    expired.forEach((card) => this.announce(card));
    const pending = await this.store.pendingDeadlines();
    pending.forEach(({ id, expiresAt }) => this.deadlines.add(id, expiresAt));
    // Routed cards' escalation steps are kept on the cards; only a relay with routes has any.
    if (this.router && pending.length) (await this.store.listCards({ status: 'pending' })).forEach((card) => this.escalations.track(card));
    return { expired, pending: pending.length };
  }

  /** The relay's clock (a fake one in tests). */
  now(): number {
    return this.clock.now();
  }

  stop(): void {
    this.stopped = true;
    this.deadlines.clear();
    this.dues.clear();
    this.escalations.stop();
  }

  /**
   * A change another node on the same database committed (heard through the database): its
   * deadline is kept here too, so the card expires on time whichever nodes are alive (each
   * node tries, the store's compare-and-set lets one win), and whoever waits here is told.
   */
  hear(name: CardEventName, card: Card): void {
    if (card.status === 'pending') this.deadlines.add(card.id, Date.parse(card.expiresAt));
    else this.deadlines.remove(card.id);
    this.escalations.track(card);
    if (card.delivery?.state !== 'sent') this.dues.remove(card.id);
    this.events.emit(name, card, true);
    if (card.status !== 'pending') this.release(card);
  }

  /**
   * After changes from other nodes may have gone unheard: re-reads the pending cards and
   * tells what differs from what this node knew, as if heard (a card it never heard of, one
   * closed meanwhile, whoever waits on one). `reset`: the connection to the others was lost,
   * so changes to any card may be missed: event streams end and their clients reload.
   */
  async resync({ reset }: { reset: boolean }): Promise<void> {
    const pending = await this.store.pendingDeadlines();
    const open = new Set(pending.map((p) => p.id));
    for (const { id } of pending) {
      if (this.deadlines.has(id)) continue;
      const card = await this.store.getCard(id);
      if (card?.status === 'pending') this.hear('card.created', card);
    }
    for (const id of new Set([...this.deadlines.ids(), ...this.waiters.ids()])) {
      if (open.has(id)) continue;
      const card = await this.store.getCard(id);
      if (card && card.status !== 'pending') this.hear('card.updated', card);
      else this.deadlines.remove(id);
    }
    if (reset) this.events.reset();
  }

  async create(draft: CardDraft): Promise<Card> {
    const drafted = newCard(draft, this.clock.now(), this.waits.default);
    let card = drafted;
    let stored;
    for (let tries = 1; ; tries++) {
      const routed = await this.router?.route(drafted);
      card = routed ? { ...drafted, ...routed.fields } : drafted;
      stored = await this.store.insertCard(card, tries < ROUTING_TRIES ? routed?.routesAt : undefined);
      if (!stored.stale) break;
      await this.router!.refresh();
    }
    if (stored.created) {
      this.deadlines.add(card.id, Date.parse(card.expiresAt));
      this.escalations.track(card);
      this.events.emit('card.created', card);
      await this.events.carried();
    }
    return stored.card;
  }

  async get(id: string): Promise<Card> {
    const card = await this.find(id);
    if (!card) throw new RelayError('not_found', `No card "${id}".`);
    return card;
  }

  async find(id: string): Promise<Card | undefined> {
    const card = await this.store.getCard(id);
    return card && this.settleIfDue(card);
  }

  async list(filter: CardFilter = {}): Promise<Card[]> {
    const cards = await Promise.all((await this.store.listCards(filter)).map((card) => this.settleIfDue(card)));
    return filter.status ? cards.filter((card) => card.status === filter.status) : cards;
  }

  async answer(id: string, answer: Answer, options: AnswerOptions = {}): Promise<Card> {
    const card = await this.get(id);
    refuseIfGone(card);
    const canonical = await this.checked(card, answer);
    if (card.status === 'answered') return this.judgeLateAnswer(card, canonical, options.idempotencyKey);
    const result = await this.close(
      id,
      { status: 'answered', answer: canonical, answeredBy: options.by ?? HUMAN_API, idempotencyKey: options.idempotencyKey },
      card,
    );
    if (result.changed) return result.card;
    // Someone else closed it between our read and our write (another process).
    refuseIfGone(result.card);
    return this.judgeLateAnswer(result.card, canonical, options.idempotencyKey);
  }

  /**
   * The human's answer to a card that expired or was cancelled, kept as its lateAnswer (the
   * card keeps its status) and handed to whoever still waits for it. A card still open (or
   * answered) takes it as an ordinary answer.
   */
  async answerLate(id: string, answer: Answer, options: AnswerOptions = {}): Promise<Card> {
    const card = await this.get(id);
    if (card.status === 'pending' || card.status === 'answered') return this.answer(id, answer, options);
    const canonical = await this.checked(card, answer);
    const at = new Date(this.clock.now()).toISOString();
    const result = await this.store.amendCard(id, (current) => withLateAnswer(current, canonical, options.by ?? HUMAN_API, at), 'late');
    if (!result) throw new RelayError('not_found', `No card "${id}".`);
    if (result.changed) await this.changed('card.late', result.card);
    return result.card;
  }

  /** The answer checked against its card (checkAnswer), and refused when its text holds a live personal token. */
  private async checked(card: Card, answer: Answer): Promise<Answer> {
    const canonical = checkAnswer(card, answer);
    if (!this.isPersonalToken) return canonical;
    for (const q of card.questions) {
      const text = Object.hasOwn(canonical, q.id) ? canonical[q.id].text : undefined;
      for (const candidate of text ? personalTokenCandidates(text) : []) {
        if (await this.isPersonalToken(candidate)) throw credentialRefused(q, 'an askrelay personal token');
      }
    }
    return canonical;
  }

  /**
   * Whoever waited for the card's answer (or late answer) received it; `to` says who. Told
   * after the fact and never fails its caller: a delivery that cannot be stored is only not shown.
   */
  async delivered(card: Card, to: DeliveryTarget): Promise<Card> {
    if (!card.delivery || card.delivery.state === 'delivered') return card;
    return this.moveDelivery(card, 'delivered', to);
  }

  /** A late answer of a session that ended before it could be handed over: nobody will take it. */
  undelivered(card: Card): Promise<Card> {
    return this.moveDelivery(card, 'undelivered');
  }

  /**
   * For a waiter about to hand the card over in its response (a long poll): the card as
   * delivered, at once, its record in the store following right behind rather than ahead of
   * the response. The answer itself was committed long before; a delivery that cannot be
   * stored is only not shown, as with delivered().
   */
  handOver(card: Card, to: DeliveryTarget): Card {
    const at = new Date(this.clock.now()).toISOString();
    const moved = withDelivery(card, 'delivered', at, to); // undefined: nothing to move (no answer, or delivered already)
    if (!moved) return card;
    // After this turn, so that even a store that writes at once (SQLite) writes after the response.
    setImmediate(() => void this.moveDelivery(card, 'delivered', to, at).catch(() => {}));
    return moved;
  }

  /** Stores the card's delivery moved on (delivery.ts says which moves there are) and tells of it. */
  private async moveDelivery(card: Card, state: 'delivered' | 'undelivered', to?: DeliveryTarget, at = new Date(this.clock.now()).toISOString()): Promise<Card> {
    const result = await this.store.amendCard(card.id, (current) => withDelivery(current, state, at, to), 'delivery');
    if (!result?.changed) return result?.card ?? card;
    await this.changed('card.delivery', result.card);
    return result.card;
  }

  async skip(id: string, by: AnsweredBy = HUMAN_API): Promise<Card> {
    const card = await this.get(id);
    if (card.status === 'skipped') return card;
    const result = card.status === 'pending' ? await this.close(id, { status: 'skipped', answeredBy: by }, card) : { card };
    if (result.card.status === 'skipped') return result.card;
    refuseIfGone(result.card);
    throw new RelayError('already_answered', 'The card was already answered.', { card: result.card });
  }

  /** Closes a card nobody will answer any more (its session stopped). Idempotent. */
  async cancel(id: string): Promise<Card> {
    const card = await this.get(id);
    return card.status === 'pending' ? (await this.close(id, { status: 'cancelled' }, card)).card : card;
  }

  /** Resolves with the card once it is no longer pending (or, `late`, has an answer), or undefined after timeoutMs. */
  wait(id: string, timeoutMs: number, options: WaitOptions = {}): Promise<Card | undefined> {
    return this.waiters.wait(id, timeoutMs, options);
  }

  /**
   * Resolves once the card is closed, however long that takes (deadlines are hours, timers
   * cap at ~24 days, so it waits in slices up to the deadline). An abort returns the card
   * as it stands.
   */
  async settle(id: string, signal?: AbortSignal): Promise<Card> {
    for (;;) {
      const card = await this.get(id);
      if (card.status !== 'pending' || signal?.aborted) return card;
      const left = Date.parse(card.expiresAt) - this.clock.now();
      await this.wait(id, Math.min(Math.max(left, 0) + 50, MAX_TIMER_MS), { signal });
    }
  }

  /** Cards someone waits on here (long polls, MCP calls, sessions). */
  get waitedOn(): number {
    return this.waiters.size;
  }

  get pendingCount(): number {
    return this.deadlines.size;
  }

  private async expire(id: string): Promise<void> {
    const card = await this.store.getCard(id);
    if (card?.status === 'pending') await this.closeAtDeadline(card);
  }

  /** A card whose wait ran out: answered with its route's default (onExpiry), else expired. */
  private async closeAtDeadline(card: Card): Promise<Card> {
    const byRoute = card.onExpiry ? defaultAnswer(card) : undefined;
    if (byRoute) return (await this.close(card.id, { status: 'answered', ...byRoute }, card)).card;
    return (await this.close(card.id, { status: 'expired' }, card)).card;
  }

  /**
   * Reads can notice a deadline before the timer does (a busy loop, a slow timer), and a
   * delivery's after a restart (its timer was held in memory).
   */
  private async settleIfDue(card: Card): Promise<Card> {
    const now = this.clock.now();
    if (card.status === 'pending') return Date.parse(card.expiresAt) > now ? card : this.closeAtDeadline(card);
    return (deliveryDue(card) ?? Infinity) > now ? card : this.undelivered(card);
  }

  private async undeliverIfDue(id: string): Promise<void> {
    const card = await this.store.getCard(id);
    if (card) await this.settleIfDue(card);
  }

  /** `read`: the card as just read, still pending (the store then skips reading it again). */
  private async close(
    id: string,
    fields: { status: Exclude<CardStatus, 'pending'>; answer?: Answer; answeredBy?: AnsweredBy; idempotencyKey?: string },
    read?: Card,
  ) {
    const closedAt = fields.status === 'expired' ? undefined : new Date(this.clock.now()).toISOString();
    // An answer (or a skip, which the agent is told too) starts out sent, in the same write.
    const answered = fields.status === 'answered' || fields.status === 'skipped';
    const result = await this.store.closeCard(
      id,
      { ...fields, closedAt: closedAt ?? read?.expiresAt ?? (await this.expiredAt(id)), ...(answered && closedAt ? { delivery: sentAt(closedAt) } : {}) },
      // A card with escalation steps may have changed while pending (escalated): the store re-reads it.
      read?.escalations ? undefined : read,
    );
    if (!result) throw new RelayError('not_found', `No card "${id}".`);
    if (result.changed) {
      this.deadlines.remove(id);
      this.escalations.track(result.card);
      await this.changed('card.updated', result.card);
    }
    return result;
  }

  /** A committed change: its delivery's due time kept, then told to listeners, waiters and the other nodes. */
  private async changed(name: CardEventName, card: Card): Promise<void> {
    const due = deliveryDue(card);
    if (due !== undefined) this.dues.add(card.id, due);
    else this.dues.remove(card.id);
    this.events.emit(name, card);
    this.release(card);
    await this.events.carried();
  }

  private async expiredAt(id: string): Promise<string> {
    return (await this.store.getCard(id))?.expiresAt ?? new Date(this.clock.now()).toISOString();
  }

  private announce(card: Card): void {
    this.events.emit('card.updated', card);
    this.release(card);
  }

  private release(card: Card): void {
    this.waiters.release(card);
  }

  private async judgeLateAnswer(card: Card, answer: Answer, key: string | undefined): Promise<Card> {
    const same = sameAnswer(card.answer ?? {}, answer);
    if (key !== undefined && key === (await this.store.answerKey(card.id)) && !same) {
      throw new RelayError('idempotency_key_reused', 'This Idempotency-Key was already used with a different answer.');
    }
    if (same) return card;
    throw new RelayError('already_answered', 'The card was already answered with a different answer.', { card });
  }
}

function refuseIfGone(card: Card): void {
  if (card.status === 'expired' || card.status === 'skipped' || card.status === 'cancelled') {
    throw new RelayError('card_closed', `The card is ${card.status}; it no longer takes answers.`, { card });
  }
}
