// Time comes from a Clock so tests can move it by hand instead of sleeping.
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

// setTimeout fires at once for delays above 2^31-1 ms; longer waits re-arm on firing.
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
    t.unref?.();
    return t;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Resolves after `ms` on `clock`, or at once when `signal` aborts (a poller gone, a service stopping). */
export function pause(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimer(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The system clock read `ms` ahead (ASKRELAY_TEST_CLOCK_OFFSET): a test that restarts a real
 * `askrelay serve` sees deadlines pass while it was down without waiting for them. Timers keep
 * their lengths.
 */
export function clockAhead(ms: number): Clock {
  return { ...systemClock, now: () => Date.now() + ms };
}
