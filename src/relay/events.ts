import { EventEmitter } from 'node:events';
import type { Card } from '../cards/model.js';

// What surfaces (SSE, push, chat, terminal) listen to. The relay emits only after the
// change is committed to the store. With several nodes on one database, a change another
// node made is emitted here too, marked `remote`: surfaces show it like any other, while
// work that must happen once per change (the audit entry, the chat outbox's jobs) is done by
// the node that made it.

// A closed card changes twice more at most: a late answer (card.late) and its delivery
// (card.delivery); a pending one may escalate (card.escalated). Clients see all three as
// card.updated (publicName); the relay's own listeners tell them apart (the audit logs the
// late answer, the push service ignores deliveries and notifies an escalation's people).
export interface RelayEventMap {
  'card.created': Card;
  'card.updated': Card;
  'card.late': Card;
  'card.delivery': Card;
  /** A pending card's route reached an escalation step: routedTo grew (docs/routing.md). */
  'card.escalated': Card;
  'session.updated': unknown;
}
export type RelayEventName = keyof RelayEventMap;
export type CardEventName = Exclude<RelayEventName, 'session.updated'>;
export const RELAY_EVENT_NAMES: readonly RelayEventName[] = ['card.created', 'card.updated', 'card.late', 'card.delivery', 'card.escalated', 'session.updated'];

/** The name an event goes out under (event streams, the other nodes' clients): the contract's three. */
export function publicName(name: RelayEventName): 'card.created' | 'card.updated' | 'session.updated' {
  return name === 'card.late' || name === 'card.delivery' || name === 'card.escalated' ? 'card.updated' : name;
}

const RESET = 'relay.reset';

export type RelayListener = <K extends RelayEventName>(name: K, data: RelayEventMap[K], remote: boolean) => void;

export class RelayEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly carriers = new Set<() => Promise<void>>();

  /** `remote`: another node made the change (it arrived through the database). */
  emit<K extends RelayEventName>(name: K, data: RelayEventMap[K], remote = false): void {
    this.emitter.emit(name, data, remote);
  }

  /**
   * Events may have been missed (this node was cut off from the others): listeners that
   * show lists (event streams) end, so their clients reconnect and reload.
   */
  reset(): void {
    this.emitter.emit(RESET);
  }

  /** Called on reset(); returns the function that stops listening. */
  onReset(listener: () => void): () => void {
    this.emitter.on(RESET, listener);
    return () => this.emitter.off(RESET, listener);
  }

  /** Listens to every event; returns the function that stops listening. */
  subscribe(listener: RelayListener): () => void {
    const handlers = RELAY_EVENT_NAMES.map((name) => {
      const handler = (data: RelayEventMap[typeof name], remote: boolean) => listener(name, data, remote);
      this.emitter.on(name, handler);
      return [name, handler] as const;
    });
    return () => handlers.forEach(([name, handler]) => this.emitter.off(name, handler));
  }

  /**
   * What carries events further (to the other nodes) says when the events emitted so far
   * left; returns the function that removes it.
   */
  carry(carrier: () => Promise<void>): () => void {
    this.carriers.add(carrier);
    return () => this.carriers.delete(carrier);
  }

  /**
   * Resolves once the events emitted so far went on to wherever they are carried. A change is
   * acknowledged only then: a node that died right after acknowledging must not leave the
   * other nodes unaware of it (its card's deadline, the waits on it).
   */
  async carried(): Promise<void> {
    await Promise.all([...this.carriers].map((carrier) => carrier()));
  }
}
