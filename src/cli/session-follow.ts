import type { Session, SessionStatus } from '../sessions/model.js';
import { ApiError, UnreachableError } from './client.js';
import type { SessionClient } from './session-client.js';
import { cardText, entryText, sessionHeader, statusText } from './session-format.js';

// Following a session: printing its transcript and the cards it waits on while it works,
// until its turn is over. "askrelay session start|show|send --follow" use it.

/** A turn is over in these; following stops there. */
export const SETTLED: readonly SessionStatus[] = ['idle', 'stopped', 'failed'];

const POLL_MS = 300;
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 2000;
/** How long the relay may be unreachable before following gives up (the session goes on there). */
const AWAY_LIMIT_MS = 60_000;

export interface FollowOptions {
  /** Transcript entries already shown: only later ones are printed. */
  from?: number;
  /** Called with each piece of output (lines without their final newline). */
  print?: (text: string) => void;
  /** Told once when the relay goes away, and again when it is back. */
  onTrouble?: (message: string) => void;
  pollMs?: number;
}

/**
 * Prints the session's transcript as it grows (and each card it waits on) until its
 * turn is over, then returns the session as it stands. A relay that goes away is
 * retried for a minute.
 */
export async function followSession(client: SessionClient, first: Session, options: FollowOptions = {}): Promise<Session> {
  const print = options.print ?? ((text: string) => console.log(text));
  const pollMs = options.pollMs ?? POLL_MS;
  let printed = options.from ?? 0;
  let lastStatus: SessionStatus | undefined;
  const shownCards = new Set<string>();
  let session = first;
  let awaySince: number | undefined;
  let backoff = FIRST_BACKOFF_MS;

  for (;;) {
    const transcript = session.transcript ?? [];
    for (; printed < transcript.length; printed++) print(entryText(transcript[printed]));
    if (session.status === 'waiting') {
      try {
        for (const card of await client.pendingCards(session.id)) {
          if (shownCards.has(card.id)) continue;
          shownCards.add(card.id);
          print(cardText(card));
        }
      } catch {
        // shown on the next round
      }
    } else if (session.status !== lastStatus && session.status !== 'running' && session.status !== 'starting') {
      print(statusText(session));
    }
    lastStatus = session.status;
    if (SETTLED.includes(session.status)) return session;

    await pause(awaySince === undefined ? pollMs : backoff);
    try {
      session = await client.get(session.id);
      if (awaySince !== undefined) options.onTrouble?.('the relay is back; still following.');
      awaySince = undefined;
      backoff = FIRST_BACKOFF_MS;
    } catch (err) {
      if (!(err instanceof UnreachableError || (err instanceof ApiError && err.status >= 500))) throw err;
      const now = Date.now();
      if (awaySince === undefined) {
        awaySince = now;
        options.onTrouble?.(`lost the relay at ${client.target.url} (${err instanceof UnreachableError ? err.reason : err.message}); retrying.`);
      } else if (now - awaySince > AWAY_LIMIT_MS) {
        throw new Error(`the relay at ${client.target.url} has been away for a minute; stopped following (the session ${session.id} goes on in the relay).`);
      }
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

/** Follows the session for a subcommand's --follow: the header, the transcript, then the exit status. */
export async function followAndReport(client: SessionClient, session: Session, json: boolean, from: number): Promise<number> {
  if (!json) console.log(sessionHeader(session));
  const settled = await followSession(client, session, {
    from,
    print: json ? () => {} : (text) => console.log(text),
    onTrouble: (message) => console.error(`askrelay session: ${message}`),
  });
  if (json) console.log(JSON.stringify(await client.get(settled.id), null, 2));
  if (settled.status === 'failed') {
    console.error(`askrelay session: ${settled.id} failed${settled.error ? `: ${settled.error}` : '.'}`);
    return 1;
  }
  return 0;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
