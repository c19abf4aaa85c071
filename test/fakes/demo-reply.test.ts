import { describe, expect, it } from 'vitest';
import { choiceIn, demoReply } from './demo-reply.js';

// The demo's scripted agents name only the choice, whichever provider's words brought it.

describe('the demo agents’ reply', () => {
  it('reads the choice out of each provider’s tool result', () => {
    expect(demoReply('Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.')).toBe('Going with SQLite.');
    expect(demoReply('The user answered: "Which database?"="Something with "quotes"". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say.')).toBe('Going with Something with "quotes".');
    expect(demoReply('User selected: SQLite')).toBe('Going with SQLite.');
    expect(demoReply('User responded: DuckDB, embedded')).toBe('Going with DuckDB, embedded.');
    expect(demoReply('The user responded: whatever is simplest')).toBe('Going with whatever is simplest.');
  });

  it('says so when nobody answered', () => {
    expect(choiceIn('The user did not answer the questions.')).toBeUndefined();
    expect(demoReply('The user did not answer the questions.')).toBe('Nobody answered, so I will pick one myself.');
  });
});
