import { waitedFor } from '../cards/answer.js';
import type { Card } from '../cards/model.js';
import { storeUnavailable } from '../errors.js';
import type { Clock } from './clock.js';

// Who waits on which card on this node (long polls, MCP calls, session runners), and handing
// each the card once it has what it waits for. The relay core (relay.ts) releases them after
// every committed change, its own or one heard from another node.

export interface WaitOptions {
  signal?: AbortSignal;
  /** Keep waiting past an expiry or cancellation, for a late answer (`askrelay ask --accept-late`). */
  late?: boolean;
}

export class Waiters {
  private readonly byCard = new Map<string, Set<(card: Card) => void>>();

  constructor(
    private readonly clock: Clock,
    /** Reads the card as the relay serves it (expired once its deadline passed). */
    private readonly read: (id: string) => Promise<Card>,
  ) {}

  /** Resolves with the card once it is no longer pending (or, `late`, has an answer), or undefined after timeoutMs. */
  wait(id: string, timeoutMs: number, { signal, late = false }: WaitOptions = {}): Promise<Card | undefined> {
    // The waiter is in place before the card is read: a close committed while the read is
    // on its way still reaches it.
    return new Promise((resolve, reject) => {
      const set = this.byCard.get(id) ?? new Set();
      this.byCard.set(id, set);
      let finished = false;
      const done = (result: Card | undefined, error?: unknown) => {
        if (finished) return;
        finished = true;
        this.clock.clearTimer(timer);
        signal?.removeEventListener('abort', onAbort);
        set.delete(settle);
        if (set.size === 0 && this.byCard.get(id) === set) this.byCard.delete(id);
        if (error !== undefined) reject(error);
        else resolve(result);
      };
      const settle = (closed: Card) => waitedFor(closed, late) && done(closed);
      const onAbort = () => done(undefined);
      const timer = this.clock.setTimer(() => done(undefined), timeoutMs);
      set.add(settle);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) return onAbort(); // an abort event that came before the listener
      this.read(id).then(
        (card) => waitedFor(card, late) && done(card),
        // The database went away during this read: the waiter stays, released when this node
        // hears the change or re-reads what it missed once it is back (resync), or at its
        // timeout. A card that does not exist still fails the wait.
        (err: unknown) => storeUnavailable(err) === undefined && done(undefined, err),
      );
    });
  }

  /** Hands the card to everyone waiting on it who has what they wait for. */
  release(card: Card): void {
    const set = this.byCard.get(card.id);
    if (set) [...set].forEach((settle) => settle(card));
  }

  /** The cards waited on. */
  ids(): IterableIterator<string> {
    return this.byCard.keys();
  }

  get size(): number {
    return this.byCard.size;
  }
}
