import { createHash } from 'node:crypto';
import { normalizeQuestions, normalizeTitle } from '../cards/draft.js';
import type { Card, CardDraft } from '../cards/model.js';
import { RelayError } from '../errors.js';
import { randomHex } from '../random-id.js';

// Pure: a new pending card from what its asker decided, at `now`, waiting `defaultWaitMs`
// unless the draft says otherwise. The relay core routes it and stores it (relay.ts).

const MAX_WAIT_MS = 7 * 24 * 3600 * 1000;

/** A card asked from a tool call keeps one id, so a re-sent call re-attaches to it. */
export function cardIdFor(sessionId: string | null | undefined, toolCallId?: string): string {
  if (!toolCallId) return `c_${randomHex(8)}`;
  const digest = createHash('sha256').update(`${sessionId ?? ''}\0${toolCallId}`).digest('hex');
  return `c_${digest.slice(0, 16)}`;
}

export function newCard(draft: CardDraft, now: number, defaultWaitMs: number): Card {
  const layout = draft.layout ?? 'steps';
  const questions = normalizeQuestions(draft.questions, layout, { keepOther: draft.keepOtherOptions === true });
  const waitMs = draft.waitSeconds !== undefined ? Math.round(draft.waitSeconds * 1000) : defaultWaitMs;
  if (!(waitMs > 0) || waitMs > MAX_WAIT_MS) {
    throw new RelayError('invalid_card', 'waitSeconds must be more than 0 and at most 7 days (604800).');
  }
  const title = normalizeTitle(draft.title);
  return {
    id: cardIdFor(draft.sessionId, draft.toolCallId),
    sessionId: draft.sessionId ?? null,
    provider: draft.provider ?? 'api',
    ...(draft.engine ? { engine: draft.engine } : {}),
    tool: draft.tool ?? 'cards',
    origin: draft.origin ?? 'relay',
    kind: draft.kind ?? 'question',
    layout,
    ...(title ? { title } : {}),
    questions,
    selectSeveral: draft.selectSeveral ?? false,
    relayMode: draft.relayMode ?? 'autopilot',
    ...(draft.askedBy ? { askedBy: draft.askedBy } : {}),
    ...(draft.labels && Object.keys(draft.labels).length ? { labels: draft.labels } : {}),
    ...(draft.answerRules ? { answerRules: draft.answerRules } : {}),
    status: 'pending',
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + waitMs).toISOString(),
  };
}
