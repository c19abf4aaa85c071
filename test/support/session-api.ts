import { expect } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import type { TestRelay } from './running-relay.js';
import { waitUntil } from './wait-until.js';

/**
 * A relay's sessions and their cards, read through its HTTP API the way the session tests wait
 * on them. Each helper reads the relay `current()` names at the time of the call (the file's own
 * `relay`, set in its beforeAll) unless another is given as `on`. The waits time out after
 * `waitMs`; those on a session throw at once when it fails.
 */
export function sessionApi(current: () => TestRelay, { waitMs = 30_000 } = {}) {
  const session = async (id: string, on = current()) => (await (await on.api(`/api/sessions/${id}`)).json()) as Session;
  const cardsOf = async (sessionId: string, on = current()) =>
    ((await (await on.api(`/api/cards?sessionId=${sessionId}`)).json()) as { cards: Card[] }).cards;
  /** The session once it is idle and `ready` holds for it. */
  const idleWhen = (id: string, ready: (s: Session) => boolean, what: string, on = current()) =>
    waitUntil(async () => {
      const s = await session(id, on);
      if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
      return s.status === 'idle' && ready(s) ? s : undefined;
    }, what, waitMs);
  return {
    session,
    cardsOf,
    /** The session's first pending card, once there is one. */
    pendingCard: (sessionId: string, on = current()) =>
      waitUntil(
        async () => ((await (await on.api(`/api/cards?sessionId=${sessionId}&status=pending`)).json()) as { cards: Card[] }).cards[0],
        `a card of ${sessionId}`,
        waitMs,
      ),
    /** The session once it idles with `text` as its last transcript entry. */
    idleWith: (id: string, text: string, on = current()) => idleWhen(id, (s) => s.transcript!.at(-1)?.text === text, `${id} to idle on "${text}"`, on),
    /**
     * The session once its status is `status`. A session marks itself waiting in the background
     * right after its card is made; on PostgreSQL (two-node mode) a read can fall in between.
     */
    status: (id: string, status: Session['status'], on = current()) =>
      waitUntil(async () => ((await session(id, on)).status === status ? status : undefined), `${id} ${status}`),
    /** The session once its turn ended with a reply of the model. */
    done: (id: string, on = current()) => idleWhen(id, (s) => s.transcript!.at(-1)?.role === 'assistant', `${id} done`, on),
  };
}

/** GET /api/sessions/:id on `on`, expecting 200. */
export async function fetchSession(on: TestRelay, id: string): Promise<Session> {
  const res = await on.api(`/api/sessions/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Session;
}

/**
 * Starts a session on `on` (engine messages against the scripted model server its environment
 * points at) and returns it once it idles after its one reply: its agent token works then.
 */
export async function idleSession(on: TestRelay, start: { prompt: string; agentsMayAnswer?: boolean }): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', ...start } });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as Session;
  return waitUntil(async () => {
    const s = (await (await on.api(`/api/sessions/${id}`)).json()) as Session;
    return s.status === 'idle' ? s : undefined;
  }, `session ${id} idle`);
}
