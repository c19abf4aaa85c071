import { describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { canSee, type KnownFacts, type Principal } from '../../src/relay/access.js';

// The access rules' table for a restricted card (docs/routing.md): the operator, the people
// and chats it is routed to, and its own session's agent see it; every other person and
// agent gets no such card, whatever the session lets agents do.

const card = (over: Partial<Card> = {}): Card => ({
  id: 'c_1', sessionId: 's_own', provider: 'claude', tool: 'AskUserQuestion', origin: 'native', kind: 'question', layout: 'steps',
  questions: [{ id: 'q1', text: 'Go?', options: [], multiSelect: false, freeText: true }],
  selectSeveral: false, relayMode: 'autopilot', status: 'pending', createdAt: '2026-12-02T10:00:00.000Z', expiresAt: '2026-12-02T18:00:00.000Z', ...over,
});
// The session lets agents answer, and every agent watches it: only the restriction stands in the way.
const open: KnownFacts = { agentsMayAnswer: () => true, watches: () => true };
const human = (id: string, surface = 'api'): Principal => ({ kind: 'human', id, surface });
const agent = (sessionId: string | null): Principal => ({ kind: 'agent', id: sessionId ?? 'mcp', sessionId, surface: 'mcp' });

describe('who sees a restricted card', () => {
  const restricted = card({ route: 'payments', routedTo: ['ada', 'slack'], restricted: true });
  it.each([
    ['the operator', human('operator'), true],
    ['a person it is routed to', human('ada'), true],
    ['a person it is not routed to', human('bob'), false],
    ['someone in the chat channel it is routed to', human('slack:U1', 'slack'), true],
    ['someone in another chat channel', human('telegram:42', 'telegram'), false],
    ['its own session\'s agent', agent('s_own'), true],
    ['another session\'s agent', agent('s_other'), false],
    ['an MCP client', agent(null), false],
  ])('%s: %s', (_, who, sees) => {
    expect(canSee(who, restricted, open)).toBe(sees);
  });

  it('without the restriction, a route only says who is notified: every one of them sees it, as before routes', () => {
    const routed = card({ route: 'payments', routedTo: ['ada'] });
    for (const who of [human('bob'), human('telegram:42', 'telegram'), agent('s_other'), agent(null)]) expect(canSee(who, routed, open)).toBe(true);
  });
});
