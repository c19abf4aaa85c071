import { asyncUsers } from '../../src/store/user-store.js';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Card, CardDraft } from '../../src/cards/model.js';
import type { ChannelFactory } from '../../src/channels/channel.js';
import type { ChannelId } from '../../src/channels/config.js';
import type { ChannelsConfig } from '../../src/channels/config.js';
import { Channels } from '../../src/channels/service.js';
import type { OpsEvent, OpsFields } from '../../src/ops/ops.js';
import { sessionFacts } from '../../src/relay/access.js';
import { CardAccess } from '../../src/relay/card-access.js';
import { Relay } from '../../src/relay/relay.js';
import { asyncChannels } from '../../src/store/channel-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { asyncCards } from '../../src/store/store.js';
import { FakeClock } from './fake-clock.js';

// One chat channel wired to a real relay core on a real SQLite file, with a fake clock
// (rate limits and back-offs are moved through by hand, never slept through) and the
// channel's webhook routes on a real HTTP server on a loopback port.

export interface ChannelHarness {
  clock: FakeClock;
  relay: Relay;
  access: CardAccess;
  store: SqliteStore;
  channels: Channels;
  /** Where the channel's webhooks listen: `${url}/channels/<id>/…`. */
  url: string;
  dataDir: string;
  /** Asks a card the way `POST /api/cards` does. */
  ask(draft: CardDraft): Promise<Card>;
  /** Moves the fake clock and lets the outbox deliver what became due. */
  advance(ms: number): Promise<void>;
  /** Waits until the outbox has nothing due. */
  idle(): Promise<void>;
  logs: string[];
  /** What the channels told the operator's events (src/ops/ops.ts): chat.failed, chat.refused. */
  opsEvents: { event: OpsEvent; fields: OpsFields }[];
  /** Stops everything; with keepData the SQLite file stays for a restart (restart()). */
  stop(keepData?: boolean): Promise<void>;
  /** A new relay and channel on the same data, as after a restart (the clock keeps its time). */
  restart(): Promise<ChannelHarness>;
}

export interface HarnessOptions {
  id: ChannelId;
  make: ChannelFactory;
  config: Omit<ChannelsConfig, 'backoffMs'> & { backoffMs?: number };
  clock?: FakeClock;
  dataDir?: string;
}

export async function startChannelHarness(options: HarnessOptions): Promise<ChannelHarness> {
  const clock = options.clock ?? new FakeClock(Date.parse('2026-11-30T12:00:00.000Z'));
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'askrelay-channel-'));
  const store = new SqliteStore(join(dataDir, 'askrelay.sqlite'));
  const relay = new Relay({ store: asyncCards(store), clock, waits: { default: 3_600_000 } });
  const access = new CardAccess(relay, sessionFacts(asyncSessions(store.sessions)), store.audit);
  const logs: string[] = [];
  const opsEvents: ChannelHarness['opsEvents'] = [];
  let url = '';
  const channels = new Channels({
    config: { backoffMs: 1000, ...options.config },
    channels: { [options.id]: options.make },
    access,
    audit: store.audit,
    store: asyncChannels(store.channels),
    clock,
    context: { publicUrl: () => options.config.publicUrl ?? url, secret: 'harness-secret' },
    log: (line) => logs.push(line),
    ops: { emit: (event, fields = {}) => void opsEvents.push({ event, fields }) },
    people: asyncUsers(store.users),
  });
  channels.listen();
  await relay.start();
  const app = new Hono().route('/channels', channels.routes());
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  await channels.start();

  const harness: ChannelHarness = {
    clock,
    relay,
    access,
    store,
    channels,
    url,
    dataDir,
    logs,
    opsEvents,
    ask: (draft) => relay.create(draft),
    async advance(ms) {
      clock.advance(ms);
      // What the fired timers started may be asynchronous (a deadline's expiry reads and closes
      // the card through the store): a turn lets it finish and its events be noted first.
      await new Promise((resolve) => setImmediate(resolve));
      await channels.idle();
    },
    idle: () => channels.idle(),
    async stop(keepData = false) {
      await channels.stop();
      relay.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      store.close();
      if (!keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async restart() {
      await harness.stop(true);
      return startChannelHarness({ ...options, clock, dataDir });
    },
  };
  return harness;
}

/**
 * A channel test file's afterEach: stops the harness the test ended with (after a restart, the
 * new one), then the platform's fake.
 */
export async function stopHarnessAndFake(h: ChannelHarness, fake: { close(): Promise<void> }): Promise<void> {
  await h.stop();
  await fake.close();
}
