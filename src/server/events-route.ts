import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';
import type { Card } from '../cards/model.js';
import type { Principal } from '../relay/access.js';
import { humanSees } from '../routing/match.js';
import { publicName, type RelayEventName, type RelayEvents } from '../relay/events.js';
import type { AuthEnv } from './auth.js';
import type { NodeLoad } from '../cluster/node-load.js';

const HEARTBEAT_MS = 15_000;
// A client that stops reading is cut off rather than buffered without end; it reconnects
// and reloads what it shows.
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

// Each event is serialized once, however many clients listen.
const serialized = new WeakMap<object, string>();
function frame(name: string, data: unknown): string {
  const key = data as object;
  let json = serialized.get(key);
  if (json === undefined) serialized.set(key, (json = JSON.stringify(data)));
  return `event: ${name}\ndata: ${json}\n\n`;
}

// Server-Sent Events: every committed change, as it happens. Written straight to Node's
// response, inside the emit, so an event leaves before the request that caused it is
// even answered. Events carry no replay ids: a client that reconnects reloads its lists.
// An agent token gets only the events of cards and sessions it may see (`shows`, which reads
// the session store): each event is framed as it was when emitted, and the checks run one
// after another, so the agent's events leave in the order they happened.
export function eventsRoute(events: RelayEvents, shows: (who: Principal, name: RelayEventName, data: unknown) => Promise<boolean>, load?: NodeLoad) {
  return (c: Context<{ Bindings: HttpBindings } & AuthEnv>) => {
    const res = c.env.outgoing;
    const who = c.get('principal');
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const send = (text: string) => {
      // Ended (reset, revoked) and not yet closed: nothing more goes out.
      if (res.writableEnded) return;
      if (res.writableLength > MAX_BUFFERED_BYTES) res.destroy();
      else res.write(text);
    };
    send('retry: 2000\n: connected\n\n');
    let checked: Promise<void> = Promise.resolve();
    const unsubscribe = events.subscribe((name, data) => {
      if (who.kind === 'human') {
        // A restricted card (docs/routing.md) shows only to those it is routed to.
        if (name !== 'session.updated' && !humanSees(who, data as Card)) return;
        return send(frame(publicName(name), data));
      }
      const text = frame(publicName(name), data);
      checked = checked.then(async () => {
        if (res.destroyed) return;
        try {
          if (await shows(who, name, data)) send(text);
        } catch {
          // An event that could not be checked is not skipped silently: the client reconnects and reloads.
          res.destroy();
        }
      });
    });
    const heartbeat = setInterval(() => send(': ping\n\n'), HEARTBEAT_MS);
    if (load) load.streams += 1;
    // Events may have been missed (the node was cut off from the others): the client reconnects and reloads.
    const stopReset = events.onReset(() => res.end());
    // Its credential was revoked: the client's reconnect is refused.
    c.get('revoked')?.addEventListener('abort', () => res.end(), { once: true });
    res.on('close', () => {
      stopReset();
      if (load) load.streams -= 1;
      clearInterval(heartbeat);
      unsubscribe();
    });
    return RESPONSE_ALREADY_SENT;
  };
}
