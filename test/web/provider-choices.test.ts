import { describe, expect, it } from 'vitest';
import { engineOf, nameOf, providerChoices, providerOf, variantHint } from '../../src/server/web/provider-choices.js';

// The page's provider choices without a browser: GET /api/providers' body (docs/api.md) →
// what the new-session form offers, and the names the page shows.

const engine = (id: string, extra: Record<string, unknown> = {}) => ({ id, name: `${id} engine`, default: false, waitSeconds: 28800, ...extra });
const BODY = {
  providers: [
    { id: 'claude', name: 'Claude', engines: [engine('code', { default: true }), engine('messages')], variables: ['ANTHROPIC_BASE_URL'] },
    {
      id: 'copilot',
      name: 'GitHub Copilot',
      // The default listed second: the form still shows it first.
      engines: [engine('extension', { waitSeconds: 7200, askUserVariants: ['classic', 'form'] }), engine('sdk', { default: true })],
      variables: [],
    },
    { id: 'grok', name: 'Grok', engines: [engine('chat', { default: true })], variables: [] },
  ],
};

describe('providerChoices', () => {
  it('keeps the relay\'s order of providers, each engine\'s name and variants, the default engine first', () => {
    expect(providerChoices(BODY)).toEqual([
      { id: 'claude', name: 'Claude', engines: [{ id: 'code', name: 'code engine', variants: [] }, { id: 'messages', name: 'messages engine', variants: [] }] },
      {
        id: 'copilot',
        name: 'GitHub Copilot',
        engines: [{ id: 'sdk', name: 'sdk engine', variants: [] }, { id: 'extension', name: 'extension engine', variants: ['classic', 'form'] }],
      },
      { id: 'grok', name: 'Grok', engines: [{ id: 'chat', name: 'chat engine', variants: [] }] },
    ]);
  });

  it('takes a provider without a name or an engine without a default as it comes', () => {
    expect(providerChoices({ providers: [{ id: 'x', engines: [{ id: 'a' }, { id: 'b' }] }] })).toEqual([
      { id: 'x', name: 'x', engines: [{ id: 'a', name: 'a', variants: [] }, { id: 'b', name: 'b', variants: [] }] },
    ]);
  });

  it('refuses a body that is not a list of providers with engines, in one sentence', () => {
    const sentence = 'The relay’s list of providers could not be read.';
    for (const body of [null, {}, { providers: {} }, { providers: [{ id: 'x', engines: [] }] }, { providers: [{ engines: [engine('a')] }] }, { providers: [{ id: 'x', engines: [{ name: 'no id' }] }] }]) {
      expect(() => providerChoices(body)).toThrow(sentence);
    }
  });
});

describe('looking choices up', () => {
  const choices = providerChoices(BODY);

  it('finds a provider and an engine under it', () => {
    expect(providerOf(choices, 'grok')?.name).toBe('Grok');
    expect(engineOf(choices, 'copilot', 'extension')?.variants).toEqual(['classic', 'form']);
    expect(engineOf(choices, 'claude', 'extension')).toBeUndefined();
    expect(providerOf(null, 'claude')).toBeUndefined();
  });

  it('names a provider as the relay does, by its id before the list arrived, "Agent" for none', () => {
    expect(nameOf(choices, 'copilot')).toBe('GitHub Copilot');
    expect(nameOf(null, 'copilot')).toBe('copilot');
    expect(nameOf(choices, 'unknown')).toBe('unknown');
    expect(nameOf(choices, undefined)).toBe('Agent');
  });

  it('says what each ask_user variant means, nothing for one it does not know', () => {
    expect(variantHint('classic')).toBe('One question with choices');
    expect(variantHint('form')).toBe('Fields from a schema');
    expect(variantHint('elicitation')).toBe('');
  });
});
