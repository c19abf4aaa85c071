import type { Clock } from './clock.js';

// Every pending card has a deadline; one timer for the earliest serves them all, so ten
// thousand waiting cards cost a heap entry each rather than a timer each.
export class Deadlines {
  private heap: { id: string; at: number }[] = [];
  private readonly current = new Map<string, number>();
  private timer: unknown;
  private armedFor = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (ids: string[]) => void,
  ) {}

  get size(): number {
    return this.current.size;
  }

  add(id: string, at: number): void {
    this.current.set(id, at);
    this.push({ id, at });
    if (at < this.armedFor) this.arm();
  }

  has(id: string): boolean {
    return this.current.has(id);
  }

  ids(): IterableIterator<string> {
    return this.current.keys();
  }

  /** Forgets a deadline; its heap entry is dropped lazily when it reaches the top. */
  remove(id: string): void {
    this.current.delete(id);
  }

  clear(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
    this.heap = [];
    this.current.clear();
  }

  private arm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.dropStale();
    const next = this.heap[0];
    this.armedFor = next ? next.at : Infinity;
    if (next) this.timer = this.clock.setTimer(() => this.fire(), next.at - this.clock.now());
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    const due: string[] = [];
    for (this.dropStale(); this.heap.length && this.heap[0].at <= now; this.dropStale()) {
      const { id } = this.pop();
      this.current.delete(id);
      due.push(id);
    }
    this.arm();
    if (due.length) this.onDue(due);
  }

  private dropStale(): void {
    while (this.heap.length && this.current.get(this.heap[0].id) !== this.heap[0].at) this.pop();
  }

  private push(entry: { id: string; at: number }): void {
    const h = this.heap;
    h.push(entry);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (h[parent].at <= h[i].at) break;
      [h[parent], h[i]] = [h[i], h[parent]];
      i = parent;
    }
  }

  private pop(): { id: string; at: number } {
    const h = this.heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l].at < h[m].at) m = l;
        if (r < h.length && h[r].at < h[m].at) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }
}
