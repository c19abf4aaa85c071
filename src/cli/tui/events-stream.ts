import type { Card } from '../../cards/model.js';
import type { RelayTarget } from '../client.js';

// Follows GET /api/events with the bearer token on a fetch stream (no cookie, no
// EventSource) and hands on card events. When the stream ends or fails it reconnects with
// a growing pause; the relay has no replay ids, so `onOpen` is where the caller reloads.
// A connection that goes silent (no headers, no event and no heartbeat for `stallMs`: a
// half-open socket, a proxy holding the stream) is dropped and made again rather than
// trusted for ever.

export interface StreamHandlers {
  onOpen(): void | Promise<void>;
  onCard(card: Card): void;
  onLost(reason: string): void;
}

const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 2000;
/** Three of the relay's 15 s heartbeats missed. */
export const STALL_MS = 45_000;

class Silent extends Error {}

export function followEvents(target: RelayTarget, handlers: StreamHandlers, { stallMs = STALL_MS } = {}): { stop(): void } {
  let stopped = false;
  let controller: AbortController | undefined;
  let backoff = FIRST_BACKOFF_MS;

  const once = async () => {
    const current = (controller = new AbortController());
    let watchdog: NodeJS.Timeout | undefined;
    // Re-armed by every sign of life; when it fires the fetch or the read fails with Silent.
    const alive = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => current.abort(new Silent(`no word from the relay for ${stallMs >= 1000 ? `${Math.round(stallMs / 1000)} s` : `${stallMs} ms`}`)), stallMs);
    };
    alive();
    try {
      await follow(current, alive);
    } catch (err) {
      throw current.signal.reason instanceof Silent ? current.signal.reason : err;
    } finally {
      clearTimeout(watchdog);
    }
  };

  const follow = async (current: AbortController, alive: () => void) => {
    const response = await fetch(new URL('api/events', target.url), {
      headers: { authorization: `Bearer ${target.token}`, accept: 'text/event-stream' },
      signal: current.signal,
    });
    if (!response.ok || !response.body) throw new Error(`the relay answered HTTP ${response.status} on /api/events`);
    alive();
    backoff = FIRST_BACKOFF_MS;
    await handlers.onOpen();
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      alive();
      buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = 'message';
        const data: string[] = [];
        for (const line of frame.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if ((name === 'card.created' || name === 'card.updated') && data.length) {
          try {
            handlers.onCard(JSON.parse(data.join('\n')) as Card);
          } catch {
            // a frame we cannot read: the next reload shows the truth
          }
        }
      }
    }
    throw new Error('the relay closed the event stream');
  };

  void (async () => {
    while (!stopped) {
      try {
        await once();
      } catch (err) {
        if (stopped) return;
        const e = err as Error & { cause?: Error };
        handlers.onLost(e.cause?.message || e.message);
      }
      if (stopped) return;
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  })();

  return {
    stop() {
      stopped = true;
      controller?.abort();
    },
  };
}
