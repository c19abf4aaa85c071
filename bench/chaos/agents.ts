import type { Card } from '../../src/cards/model.js';
import { SseClient } from '../client.js';
import type { Ask } from './history.js';
import { GIVE_UP_AFTER_MS, askCard, closingOf, pause, type Workload } from './workload.js';

// The agents that ask over HTTP: one waits on each card with long polls, asked again after
// every failure as a real client does; the other keeps an event stream open and learns of
// its cards closing from it, reconnecting when the stream ends and then reading its cards
// again (a stream does not replay what it missed). Each stops once the run stops asking
// and its last card is settled, or when it has waited past the card's deadline, the lease
// and a margin: a waiter left with nothing is a violation.

const POLL_SECONDS = 10;

export async function pollAgent(w: Workload, name: string): Promise<void> {
  const random = w.random.fork();
  const client = w.client(name);
  for (let n = 1; w.asking() && !w.stopped.aborted; n++) {
    const asked = await askCard(w, random, client, `${name}-${n}`, 'poll');
    if (!asked) break;
    const { card, ask } = asked;
    const giveUpAt = Date.parse(card.expiresAt) + w.options.leaseMs + GIVE_UP_AFTER_MS;
    while (!ask.got && !w.stopped.aborted && Date.now() < giveUpAt) {
      w.recorder.count('polls');
      const reply = await client.send('GET', `/api/cards/${card.id}/wait?timeout=${POLL_SECONDS}`, { waits: true });
      if (reply?.status === 200) {
        const closing = closingOf(JSON.parse(reply.text) as Card);
        if (closing) ask.got = { ...closing, at: Date.now() };
      } else if (reply?.status !== 204) {
        if (reply && reply.status < 500) throw new Error(`GET /api/cards/${card.id}/wait: HTTP ${reply.status} ${reply.text}`);
        await pause(250, w.stopped);
      }
    }
    await pause(random.between([200, 1_500]), w.stopped);
  }
}

/** Cards a stream agent keeps asked at once. */
const IN_FLIGHT = 2;

export async function streamAgent(w: Workload, name: string): Promise<void> {
  const random = w.random.fork();
  const client = w.client(name);
  const waiting = new Map<string, { ask: Ask; giveUpAt: number }>();
  const settle = (card: Card) => {
    const entry = waiting.get(card.id);
    const closing = closingOf(card);
    if (!entry || !closing) return;
    entry.ask.got = { ...closing, at: Date.now() };
    waiting.delete(card.id);
  };
  const busy = () => !w.stopped.aborted && (w.asking() || waiting.size > 0);

  const listen = async () => {
    while (busy()) {
      const sse = new SseClient();
      const ended = new Promise<string>((resolve) => sse.onEnd(resolve));
      sse.on((e) => {
        if (e.event.startsWith('card.')) settle(JSON.parse(e.data) as Card);
      });
      w.recorder.count('streams.opened');
      try {
        await sse.open(w.url, '/api/events', w.token);
      } catch (err) {
        sse.close();
        // SseClient says "SSE: HTTP 503" for a refusal, the socket's error otherwise.
        const status = Number(/^SSE: HTTP (\d+)/.exec((err as Error).message)?.[1] ?? 0);
        const route = 'GET /api/events';
        w.recorder.error(name, `${route}: ${(err as Error).message}`, status ? { cause: 'http', route, status } : { cause: 'no-reply', route });
        await pause(250, w.stopped);
        continue;
      }
      // Whatever closed while no stream was open is read now.
      for (const id of [...waiting.keys()]) {
        const reply = await client.send('GET', `/api/cards/${id}`);
        if (reply?.status === 200) settle(JSON.parse(reply.text) as Card);
      }
      const reason = await Promise.race([ended, untilIdle(() => !busy(), w.stopped)]);
      sse.close();
      if (reason) w.recorder.error(name, `GET /api/events: the stream ended (${reason})`, { cause: 'stream', route: 'GET /api/events' });
    }
  };

  const ask = async () => {
    const prune = () => waiting.forEach((entry, id) => Date.now() > entry.giveUpAt && waiting.delete(id));
    for (let n = 1; w.asking() && !w.stopped.aborted; n++) {
      for (prune(); waiting.size >= IN_FLIGHT && !w.stopped.aborted; prune()) await pause(100, w.stopped);
      const asked = await askCard(w, random, client, `${name}-${n}`, 'stream');
      if (!asked) break;
      waiting.set(asked.card.id, { ask: asked.ask, giveUpAt: Date.parse(asked.card.expiresAt) + w.options.leaseMs + GIVE_UP_AFTER_MS });
      await pause(random.between([200, 1_500]), w.stopped);
    }
    // Drain: the waiters left give up at their own time.
    for (prune(); waiting.size && !w.stopped.aborted; prune()) await pause(200, w.stopped);
  };

  await Promise.all([listen(), ask()]);
}

/** Resolves (undefined) once `done()` holds, checked every 200 ms. */
async function untilIdle(done: () => boolean, signal: AbortSignal): Promise<undefined> {
  while (!done() && !signal.aborted) await pause(200, signal);
  return undefined;
}
