import type { Clock } from '../../src/relay/clock.js';

/** A clock that moves only when a test says so; due timers fire in deadline order. */
export class FakeClock implements Clock {
  private timers = new Map<number, { at: number; ms: number; fn: () => void }>();
  private nextId = 1;

  constructor(private time = Date.parse('2026-01-01T00:00:00.000Z')) {}

  now(): number {
    return this.time;
  }

  setTimer(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + Math.max(0, ms), ms, fn });
    return id;
  }

  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get timerCount(): number {
    return this.timers.size;
  }

  /**
   * How many timers set for exactly `ms` are waiting to fire: that the code under test has
   * started a wait of that length (an MCP grace, a progress beat) before the test moves time.
   */
  armed(ms: number): number {
    return [...this.timers.values()].filter((t) => t.ms === ms).length;
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = Math.max(this.time, due[1].at);
      due[1].fn();
    }
    this.time = end;
  }
}
