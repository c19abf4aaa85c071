import type { Answer, AnsweredBy, Card, CardStatus, Delivery } from '../cards/model.js';
import type { AmendKind } from './card-audit.js';

export type { AmendKind } from './card-audit.js';

// Storage behind one interface. The relay core only ever changes a card through
// closeCard, an atomic compare-and-set on "still pending": whoever commits first wins,
// whether the rivals are in this process or another one sharing the file. Every change
// commits together with its audit entry (src/store/card-audit.ts) and, on a database nodes
// share, with the event that tells the other nodes: one transaction, so a crash never
// leaves one without the other.

export interface CardFilter {
  status?: CardStatus;
  sessionId?: string;
  limit?: number;
  /** Oldest first unless told otherwise. */
  order?: 'oldest' | 'newest';
}

export interface CardClose {
  status: Exclude<CardStatus, 'pending'>;
  closedAt: string;
  answer?: Answer;
  answeredBy?: AnsweredBy;
  delivery?: Delivery;
  idempotencyKey?: string;
}

export interface CloseResult {
  changed: boolean;
  card: Card;
}

export interface InsertResult {
  card: Card;
  created: boolean;
  /** The routes it was routed by were replaced meanwhile: it was not stored. */
  stale?: true;
}

export interface PendingDeadline {
  id: string;
  expiresAt: number;
}

export interface CardStore {
  /**
   * Stores a new card; when one with the same id exists, returns that one untouched.
   * `routesAt`: on a database several nodes share, the version of the routes the card was
   * routed by (null: there were none). When they were replaced since, nothing is stored and
   * `stale` says so: the caller routes the card again (docs/routing.md, "Several nodes").
   */
  insertCard(card: Card, routesAt?: number | null): InsertResult;
  getCard(id: string): Card | undefined;
  listCards(filter?: CardFilter): Card[];
  /**
   * `read`: the card as the caller read it, still pending. A pending card changes only here,
   * so the store may skip its own read and go straight to the compare-and-set on its status
   * (one statement instead of a transaction; on a networked store one round trip, not two).
   */
  closeCard(id: string, close: CardClose, read?: Card): CloseResult | undefined;
  /**
   * Changes a closed card (its late answer, its delivery): `change` gets the card as stored and
   * returns the new one, or undefined to leave it as it is. Atomic against every other writer,
   * on this node or another: a change computed from a card that changed meanwhile is computed
   * again from the new one. `kind` says what the amendment is, for its audit entry.
   */
  amendCard(id: string, change: (card: Card) => Card | undefined, kind: AmendKind): CloseResult | undefined;
  /** The Idempotency-Key that came with a card's winning answer. */
  answerKey(id: string): string | undefined;
  /** Expires every pending card whose deadline is at or before `now`, in one transaction (but those with a route's default answer, onExpiry: the relay answers them). */
  expireOverdue(now: number): Card[];
  pendingDeadlines(): PendingDeadline[];
  close(): void;
}

/** An interface with every method's result a promise (what a networked store serves). */
export type Async<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K] };

/**
 * The card store as a networked database serves it: every call a promise. PostgreSQL
 * (src/store/postgres/) implements it; the relay core moves onto it next (issue 14), and
 * the embedded store joins through asyncCards until then.
 */
export type AsyncCardStore = Async<CardStore>;

/** The synchronous store behind the asynchronous interface (the same semantics, resolved at once). */
export function asyncCards(store: CardStore): AsyncCardStore {
  return {
    insertCard: async (card, routesAt) => store.insertCard(card, routesAt),
    getCard: async (id) => store.getCard(id),
    listCards: async (filter) => store.listCards(filter),
    closeCard: async (id, close, read) => store.closeCard(id, close, read),
    amendCard: async (id, change, kind) => store.amendCard(id, change, kind),
    answerKey: async (id) => store.answerKey(id),
    expireOverdue: async (now) => store.expireOverdue(now),
    pendingDeadlines: async () => store.pendingDeadlines(),
    close: async () => store.close(),
  };
}

/** The read a closeCard caller handed over, when it is of this card and still pending. */
export const pendingRead = (id: string, read: Card | undefined): Card | undefined => (read?.id === id && read.status === 'pending' ? read : undefined);

/** The pending card with the close's fields (its idempotency key is stored beside it, not in it). */
export function closed(card: Card, close: CardClose): Card {
  const { idempotencyKey: _key, ...fields } = close;
  return { ...card, ...fields };
}
