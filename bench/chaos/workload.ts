import type { Card } from '../../src/cards/model.js';
import type { Ask, Closing, Recorder } from './history.js';
import type { ChaosOptions } from './options.js';
import type { Random } from './random.js';
import type { RelayClient } from './relay-client.js';

// What the agents and people of a run share: how they reach the relay, when to stop asking,
// and the card they all ask (one question, three colours).

export interface Workload {
  options: ChaosOptions;
  recorder: Recorder;
  random: Random;
  client(name: string): RelayClient;
  /** The balancer's URL and the token, for clients that are not plain requests (MCP, streams). */
  url: string;
  token: string;
  /** False once the run stops asking new cards (it drains then). */
  asking(): boolean;
  /** Aborted when everything must stop at once (the drain ran out, or Ctrl+C). */
  stopped: AbortSignal;
}

export const COLOURS = ['Red', 'Green', 'Blue'];

/** A waiter past its card's deadline plus the lease plus this has waited too long, and says so. */
export const GIVE_UP_AFTER_MS = 30_000;

export const cardText = (tag: string) => `${tag}: which colour?`;

export function closingOf(card: Pick<Card, 'status' | 'answer'>): Closing | undefined {
  if (card.status === 'pending') return undefined;
  return card.status === 'answered' ? { outcome: 'answered', labels: card.answer?.q1?.selected ?? [] } : { outcome: card.status };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * Asks one card (POST /api/cards, waitSeconds from the run's range), trying again while the
 * relay does not answer 201; the card is recorded as asked once it is acknowledged.
 */
export async function askCard(w: Workload, random: Random, client: RelayClient, tag: string, via: Ask['via']): Promise<{ card: Card; ask: Ask } | undefined> {
  const waitSeconds = Math.round(random.between(w.options.cardWaitMs) / 1000);
  for (let attempt = 0; w.asking() && !w.stopped.aborted; attempt++) {
    const reply = await client.send('POST', '/api/cards', { json: { title: tag, questions: [{ id: 'q1', text: cardText(tag), options: COLOURS }], waitSeconds } });
    if (reply?.status === 201) {
      const card = JSON.parse(reply.text) as Card;
      w.recorder.count('cards.asked');
      return { card, ask: w.recorder.ask({ tag, via, cardId: card.id, at: Date.now() }) };
    }
    if (reply && reply.status < 500) throw new Error(`POST /api/cards: HTTP ${reply.status} ${reply.text}`);
    await pause(Math.min(200 * 2 ** attempt, 2_000), w.stopped);
  }
  return undefined;
}
