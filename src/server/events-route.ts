import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RelayEvents } from '../relay/events.js';

const HEARTBEAT_MS = 15_000;

// Server-Sent Events: every committed change, as it happens. A client that reconnects
// reloads the lists it shows, so events carry no replay ids.
export function eventsRoute(events: RelayEvents) {
  return (c: Context) =>
    streamSSE(c, async (stream) => {
      const queue: string[] = [];
      let wake: (() => void) | undefined;
      const unsubscribe = events.subscribe((name, data) => {
        queue.push(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
        wake?.();
      });
      const heartbeat = setInterval(() => {
        queue.push(': ping\n\n');
        wake?.();
      }, HEARTBEAT_MS);
      let open = true;
      stream.onAbort(() => {
        open = false;
        wake?.();
      });
      try {
        await stream.write('retry: 2000\n: connected\n\n');
        while (open) {
          if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          if (queue.length) await stream.write(queue.splice(0).join(''));
        }
      } finally {
        clearInterval(heartbeat);
        unsubscribe();
      }
    });
}
