// A node's own changes handed back in the order they committed. Changes that take the audit's
// append lock commit one after the other, and the other nodes hear them in that order (their
// NOTIFYs are delivered at commit). This node tells its own surfaces when a change returns,
// and two commits can return in the other order: the server wakes the next lock holder
// before it answers the one that committed, and on a loaded machine the next one can commit
// and be answered first. Then this node's streams would show two cards in one order and
// every other node's streams in the other. Each change that took the lock therefore returns
// only after the change that held the lock before it on this node returned, and after the
// callers of that one ran what they do at once (told their listeners): a turn of the event
// loop later.

export interface Turn {
  /** Waits for the change before this one to have returned; then lets the next one return. */
  end(): Promise<void>;
}

export class CommitOrder {
  private last: Promise<void> = Promise.resolve();

  /** Called holding the append lock: every earlier holder on this node has committed or rolled back. */
  take(): Turn {
    const before = this.last;
    let settled = false;
    void before.then(() => (settled = true));
    let done!: () => void;
    this.last = new Promise<void>((resolve) => (done = resolve));
    return {
      end: async () => {
        if (!settled) {
          await before;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        done();
      },
    };
  }
}
