import { EventEmitter } from 'node:events';
import type { Card } from '../cards/model.js';

// What surfaces (SSE, push, chat, terminal) listen to. The relay emits only after the
// change is committed to the store.
export interface RelayEventMap {
  'card.created': Card;
  'card.updated': Card;
  'session.updated': unknown;
}
export type RelayEventName = keyof RelayEventMap;

export class RelayEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  emit<K extends RelayEventName>(name: K, data: RelayEventMap[K]): void {
    this.emitter.emit(name, data);
  }

  /** Listens to every event; returns the function that stops listening. */
  subscribe(listener: <K extends RelayEventName>(name: K, data: RelayEventMap[K]) => void): () => void {
    const names: RelayEventName[] = ['card.created', 'card.updated', 'session.updated'];
    const handlers = names.map((name) => {
      const handler = (data: RelayEventMap[typeof name]) => listener(name, data);
      this.emitter.on(name, handler);
      return [name, handler] as const;
    });
    return () => handlers.forEach(([name, handler]) => this.emitter.off(name, handler));
  }
}
