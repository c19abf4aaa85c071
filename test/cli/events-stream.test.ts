import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { followEvents } from '../../src/cli/tui/events-stream.js';
import { cardOf } from '../support/card-fixture.js';
import { waitUntil } from '../support/wait-until.js';

// The terminal UI's event stream against a real HTTP server on loopback that behaves as a
// broken relay or proxy would: it never answers, or answers and then goes silent.

type Behaviour = (req: IncomingMessage, res: ServerResponse, n: number) => void;

let server: Server | undefined;
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

async function relayThat(behaviour: Behaviour): Promise<{ url: string; connections: () => number }> {
  let n = 0;
  server = createServer((req, res) => {
    n += 1;
    behaviour(req, res, n);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, connections: () => n };
}

function follow(url: string, stallMs: number) {
  const seen = { opened: 0, lost: [] as string[], cards: [] as string[] };
  const stream = followEvents(
    { url, token: 't', tokenSource: 'ASKRELAY_TOKEN' },
    {
      onOpen: () => void (seen.opened += 1),
      onCard: (card) => seen.cards.push(card.id),
      onLost: (reason) => seen.lost.push(reason),
    },
    { stallMs },
  );
  stop = () => stream.stop();
  return seen;
}

const open = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': connected\n\n');

describe('the terminal UI event stream', () => {
  it('a relay that takes the connection and never answers is dropped and tried again', async () => {
    const relay = await relayThat(() => {});
    const seen = follow(relay.url, 150);
    await waitUntil(() => relay.connections() >= 2, 'a second try');
    expect(seen.lost[0]).toBe('no word from the relay for 150 ms');
    expect(seen.opened).toBe(0);
  });

  it('a stream that opens and then goes silent is dropped; the next one is opened and reloaded', async () => {
    const relay = await relayThat((_req, res) => open(res));
    const seen = follow(relay.url, 150);
    await waitUntil(() => seen.opened >= 2, 'the stream opened a second time');
    expect(seen.lost[0]).toBe('no word from the relay for 150 ms');
  });

  it('heartbeats keep a quiet stream: one connection carries every event', async () => {
    const card = cardOf([{ text: 'Still there?', options: [] }]);
    const relay = await relayThat((_req, res) => {
      open(res);
      let beats = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        beats += 1;
        // Ten heartbeats 100 ms apart span well over the 600 ms a silent stream is given.
        if (beats <= 10) res.write(': ping\n\n');
        else {
          clearInterval(timer);
          res.write(`event: card.created\ndata: ${JSON.stringify(card)}\n\n`);
        }
      }, 100);
    });
    const seen = follow(relay.url, 600);
    await waitUntil(() => seen.cards.length > 0, 'the event after the heartbeats');
    expect(seen.cards).toEqual([card.id]);
    expect(seen.lost).toEqual([]);
    expect(relay.connections()).toBe(1);
  });
});
