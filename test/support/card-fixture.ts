import { normalizeQuestions } from '../../src/cards/draft.js';
import type { Card, QuestionInput } from '../../src/cards/model.js';

/** A pending card as the relay would store it, for golden tests of what a surface shows. */
export function cardOf(questions: QuestionInput[], extra: Partial<Card> = {}): Card {
  return {
    id: 'c_0123456789abcdef',
    sessionId: null,
    provider: 'api',
    tool: 'cards',
    origin: 'relay',
    kind: 'question',
    layout: 'steps',
    questions: normalizeQuestions(questions, extra.layout ?? 'steps'),
    selectSeveral: false,
    relayMode: 'autopilot',
    status: 'pending',
    createdAt: '2026-11-30T12:00:00.000Z',
    expiresAt: '2026-11-30T20:00:00.000Z',
    ...extra,
  };
}
