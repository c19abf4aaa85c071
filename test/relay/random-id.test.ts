import { describe, expect, it } from 'vitest';
import { randomHex } from '../../src/random-id.js';
import { cardIdFor } from '../../src/relay/relay.js';

describe('randomHex (pooled random ids)', () => {
  it('gives hex of the asked length, never the same twice across many refills of the pool', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = randomHex(8);
      expect(id).toMatch(/^[0-9a-f]{16}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
    expect(randomHex(32)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('spreads its bytes: every hex digit shows up in each position', () => {
    const ids = Array.from({ length: 2000 }, () => randomHex(8));
    for (let position = 0; position < 16; position++) expect(new Set(ids.map((id) => id[position])).size).toBe(16);
  });

  it('makes card ids without a tool call id; a tool call keeps one id', () => {
    expect(cardIdFor(null)).toMatch(/^c_[0-9a-f]{16}$/);
    expect(cardIdFor(null)).not.toBe(cardIdFor(null));
    expect(cardIdFor('s_1', 'call_1')).toBe(cardIdFor('s_1', 'call_1'));
  });
});
