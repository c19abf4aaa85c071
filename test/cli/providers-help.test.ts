import { expect, it } from 'vitest';
import { providersHelp } from '../../src/cli/session-format.js';

// How "askrelay session start --help" shows GET /api/providers (pure; test/cli/session.test.ts
// runs the command against a relay).

it('lists each provider with the variables the relay reads, then its engines aligned, the default marked', () => {
  const text = providersHelp([
    { id: 'claude', name: 'Claude', variables: ['ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'], engines: [
      { id: 'code', name: 'Claude Code', default: true, waitSeconds: 28800 },
      { id: 'messages', name: 'the relay’s own Messages API loop', default: false, waitSeconds: 28800 },
    ] },
    { id: 'local', name: 'Local', variables: [], engines: [{ id: 'x', name: 'one engine', default: true, waitSeconds: 1 }] },
  ]);
  expect(text).toBe(
    [
      '  claude (Claude; the relay reads ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY)',
      '    --engine code      Claude Code (default)',
      '    --engine messages  the relay’s own Messages API loop',
      '  local (Local)',
      '    --engine x         one engine (default)',
    ].join('\n'),
  );
});
