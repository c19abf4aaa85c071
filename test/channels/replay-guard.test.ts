import { describe, expect, it } from 'vitest';
import { SeenSignatures } from '../../src/channels/replay-guard.js';

describe('SeenSignatures', () => {
  it('takes a signature once within the window and refuses it after', () => {
    const seen = new SeenSignatures(300);
    expect(seen.firstTime('v0=a', 1000, 1000)).toBe(true);
    expect(seen.firstTime('v0=a', 1000, 1100)).toBe(false);
    expect(seen.firstTime('v0=b', 1000, 1100)).toBe(true);
  });

  it('forgets signatures whose timestamps left the window, so its memory stays bounded', () => {
    const seen = new SeenSignatures(300);
    for (let t = 0; t < 10_000; t++) expect(seen.firstTime(`v0=${t}`, t, t)).toBe(true);
    // Only the last five minutes' worth is kept.
    expect(seen.size).toBe(301);
    // A live one is never dropped early, even behind a timestamp from the future.
    const guard = new SeenSignatures(300);
    guard.firstTime('future', 1250, 1000);
    guard.firstTime('live', 1000, 1000);
    expect(guard.firstTime('live', 1000, 1299)).toBe(false);
  });
});
