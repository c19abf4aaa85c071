import type { Clock } from '../relay/clock.js';
import { CLOSED, type Live, type SessionBook } from './session-book.js';
import type { SessionOwners } from './session-owners.js';

// A session's turns: one runs from the prompt or the user's message until its runner's
// start()/send() settles (the session is idle then, or failed), and the watchdog flags one
// that runs with no activity for too long (never one that waits on a card).

export interface TurnDeps {
  book: SessionBook;
  clock: Clock;
  owners?: SessionOwners;
  /** Told when a turn ended with the session idle (late answers wait for it: late-answers.ts). */
  afterTurn?: (id: string) => void;
}

/** Marks the session running and starts the turn (in the session's queue: book.serial()). */
export async function runTurn({ book, clock, owners, afterTurn }: TurnDeps, id: string, turn: () => Promise<void>): Promise<void> {
  const live = book.live.get(id);
  if (live) live.lastActivity = clock.now();
  await book.setStatus(id, 'running');
  turn().then(
    () => book.background(id, 'its status', async () => {
      if (!(await book.isLive(id))) return;
      await book.setStatus(id, 'idle');
      afterTurn?.(id);
    }),
    (err: unknown) =>
      book.background(id, 'its status', async () => {
        if (!(await book.isLive(id))) return;
        const failed = book.live.get(id);
        book.live.delete(id);
        await book.update(id, { status: 'failed', error: (err as Error).message ?? String(err) });
        // A card still open (Claude Code died while it waited on one) would take an answer
        // nobody reads: it is cancelled, as when the session is stopped.
        failed?.controller.abort();
        await book.cancelPending(id);
        await owners?.release(id);
        // The provider's own process (the Copilot runtime) ends with the session: nothing
        // else would stop it, since close() stops only the live runners.
        await failed?.runner.stop().catch(() => {});
      }),
  );
}

/**
 * A launched session's first turn (in the session's queue): not when the session was
 * stopped while it was being launched (stop() found no runner to stop then).
 */
export async function firstTurn(deps: TurnDeps, id: string, live: Live, turn: () => Promise<void>): Promise<void> {
  const { book } = deps;
  if (!CLOSED.includes((await book.record(id)).status)) return runTurn(deps, id, turn);
  await book.dropLaunched(id, live);
}

/** Marks stuck every live session running with no activity for `after` ms; resolves once they are. */
export async function markStuck({ book, clock }: TurnDeps, after: number, warn: (line: string) => void): Promise<void> {
  const now = clock.now();
  const checks = [...book.live].map(([id, live]) =>
    book.serial(id, async () => {
      if ((await book.status(id)) === 'running' && now - live.lastActivity >= after) await book.setStatus(id, 'stuck');
    }).catch((err: unknown) => warn(`askrelay: session ${id}: could not check it for a stall: ${(err as Error)?.message ?? String(err)}`)),
  );
  await Promise.all(checks);
}
