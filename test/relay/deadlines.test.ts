import { expect, it } from 'vitest';
import { Deadlines } from '../../src/relay/deadlines.js';
import { FakeClock } from '../support/fake-clock.js';

it('fires every live deadline once, in order, and none that was removed or replaced', () => {
  const clock = new FakeClock(0);
  const fired: [string, number][] = [];
  const deadlines = new Deadlines(clock, (ids) => ids.forEach((id) => fired.push([id, clock.now()])));
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const expected = new Map<string, number>();
  for (let i = 0; i < 500; i++) {
    const id = `c${Math.floor(random() * 300)}`;
    if (random() < 0.2) {
      deadlines.remove(id);
      expected.delete(id);
    } else {
      const at = 1 + Math.floor(random() * 10_000);
      deadlines.add(id, at);
      expected.set(id, at);
    }
  }
  expect(clock.timerCount).toBe(1);
  clock.advance(10_000);
  expect(fired.map(([id]) => id).sort()).toEqual([...expected.keys()].sort());
  for (const [id, at] of fired) expect(at).toBe(expected.get(id));
  expect(fired.map(([, at]) => at)).toEqual([...fired.map(([, at]) => at)].sort((a, b) => a - b));
  expect(deadlines.size).toBe(0);
  expect(clock.timerCount).toBe(0);
});
