import type { Card } from '../../cards/model.js';
import type { RelayTarget } from '../client.js';

// Follows GET /api/events with the bearer token on a fetch stream (no cookie, no
// EventSource) and hands on card events. When the stream ends or fails it reconnects with
// a growing pause; the relay has no replay ids, so `onOpen` is where the caller reloads.

export interface StreamHandlers {
  onOpen(): void | Promise<void>;
  onCard(card: Card): void;
  onLost(reason: string): void;
}

const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 2000;

export function followEvents(target: RelayTarget, handlers: StreamHandlers): { stop(): void } {
  let stopped = false;
  let controller: AbortController | undefined;
  let backoff = FIRST_BACKOFF_MS;

  const once = async () => {
    controller = new AbortController();
    const response = await fetch(new URL('api/events', target.url), {
      headers: { authorization: `Bearer ${target.token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    if (!response.ok || !response.body) throw new Error(`the relay answered HTTP ${response.status} on /api/events`);
    backoff = FIRST_BACKOFF_MS;
    await handlers.onOpen();
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
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
