import { waitedFor } from '../cards/answer.js';
import type { Card } from '../cards/model.js';
import { ApiError, UnreachableError, type RelayClient } from './client.js';

// Blocks until a card is no longer pending, on the relay's long-poll route. A relay that
// restarts or a connection that drops is retried with backoff until the card's deadline
// passes: the relay keeps the card, so the wait picks up where it left off.

/** Each long poll asks for at most this long; fetch and proxies cut longer requests. */
export const MAX_POLL_SECONDS = 60;
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 2000;
/** Allowance for the relay's clock and restart before the client gives up after the deadline. */
const GRACE_MS = 2000;

export interface WaitOptions {
  /** Past the deadline too, until a late answer comes (`askrelay ask --accept-late`): no deadline to give up at. */
  late?: boolean;
  /** Told once per outage, and again when the relay is back. */
  onTrouble?: (message: string) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function retryable(err: unknown): boolean {
  return err instanceof UnreachableError || (err instanceof ApiError && err.status >= 500);
}

export async function waitForCard(client: RelayClient, card: Card, options: WaitOptions = {}): Promise<Card> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? pause;
  const deadline = options.late ? Infinity : Date.parse(card.expiresAt);
  let backoff = FIRST_BACKOFF_MS;
  let troubled = false;
  for (;;) {
    const left = deadline - now();
    const seconds = Math.min(MAX_POLL_SECONDS, Math.max(1, Math.ceil(left / 1000) + 1));
    try {
      const result = await client.wait(card.id, seconds, { late: options.late });
      if (troubled) options.onTrouble?.('the relay is back; still waiting.');
      troubled = false;
      backoff = FIRST_BACKOFF_MS;
      if (result && waitedFor(result, options.late ?? false)) return result;
    } catch (err) {
      if (!retryable(err)) throw err;
      const message =
        err instanceof UnreachableError ? `lost the relay at ${client.target.url} (${err.reason}).` : `the relay is failing: ${(err as Error).message.replace(/\.$/, '')}.`;
      if (now() > deadline + GRACE_MS) {
        throw new Error(`${message} The card ${card.id} expired at ${card.expiresAt} while the relay was away; its outcome is unknown.`);
      }
      if (!troubled) options.onTrouble?.(`${message} ${options.late ? 'Retrying until it is back.' : `Retrying until the card expires at ${card.expiresAt}.`}`);
      troubled = true;
      await sleep(Math.min(backoff, Math.max(0, deadline + GRACE_MS - now())) || 1);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
