import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Channel, MessageRef } from '../../src/channels/channel.js';
import { MAX_BACKOFF_MS, Outbox, SEND_TIMEOUT_MS, STOP_GRACE_MS } from '../../src/channels/outbox.js';
import { slackChannel } from '../../src/channels/slack/index.js';
import { Relay } from '../../src/relay/relay.js';
import { asyncChannels } from '../../src/store/channel-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack-api.js';
import { startChannelHarness, stopHarnessAndFake, type ChannelHarness } from '../support/channel-harness.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitUntil } from '../support/wait-until.js';

// The chat outbox's own timings, on a real relay core and SQLite file with a fake clock:
// a platform call that never answers is abandoned after SEND_TIMEOUT_MS and tried again;
// stop() gives a call in flight STOP_GRACE_MS to finish, then returns without it; and an
// outage backs off by doubling up to MAX_BACKOFF_MS, never beyond. The platform here is a
// channel whose every post the test answers by hand (a reply held until released), and for
// the back-off the real Slack channel against the local Slack while it is down.

const single = { questions: [{ header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] };
const BACKOFF = 1000;

/** A post the platform has received and not yet answered. */
interface HeldPost {
  card: Card;
  /** The chat a route named for it; undefined: the channel's configured chat. */
  chat?: string;
  answer(ref: MessageRef): void;
}

/** A chat platform whose every post waits until the test answers it. */
function heldChannel(): Channel & { posts: HeldPost[] } {
  const posts: HeldPost[] = [];
  return {
    id: 'slack',
    posts,
    post: (card, chat) => new Promise<MessageRef>((answer) => posts.push({ card, chat, answer })),
    close: async () => {},
    start: () => {},
    stop: () => {},
  };
}

/** One turn of the event loop: what a fired fake timer set off (store writes, promise chains) has run by then. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the outbox with a platform that holds its replies', () => {
  let dir: string;
  let clock: FakeClock;
  let store: SqliteStore;
  let relay: Relay;
  let logs: string[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'askrelay-outbox-'));
    clock = new FakeClock(Date.parse('2026-11-30T12:00:00.000Z'));
    store = new SqliteStore(join(dir, 'askrelay.sqlite'));
    relay = new Relay({ store: asyncCards(store), clock, waits: { default: 3_600_000 } });
    await relay.start();
    logs = [];
  });
  afterEach(() => {
    relay.stop();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An outbox for `channel`, started the way a relay starts it: recover() queues a post for each pending card. */
  async function startOutbox(channel: Channel, chatOf?: (card: Card) => string | null | undefined): Promise<Outbox> {
    const outbox = new Outbox({ channel, relay, store: asyncChannels(store.channels), clock, backoffMs: BACKOFF, log: (line) => logs.push(line), ...(chatOf ? { chatOf } : {}) });
    await outbox.recover(await relay.list({ status: 'pending' }));
    return outbox;
  }

  const jobs = () => store.channels.jobs('slack');

  it('posts each card in the chat its route names, in the configured chat by default, and not at all where it is not routed', async () => {
    const channel = heldChannel();
    const ops = await relay.create({ ...single, labels: { team: 'ops' } });
    const plain = await relay.create(single);
    const elsewhere = await relay.create({ ...single, labels: { team: 'web' } });
    const chatOf = (card: Card) => (card.labels?.team === 'ops' ? 'C-OPS' : card.labels?.team === 'web' ? undefined : null);
    const outbox = await startOutbox(channel, chatOf);
    (await waitUntil(() => channel.posts[0], 'the first post')).answer({ chat: 'C-OPS', message: '1' });
    (await waitUntil(() => channel.posts[1], 'the second post')).answer({ chat: 'C1', message: '2' });
    await outbox.idle();
    expect(channel.posts.map((p) => [p.card.id, p.chat])).toEqual([[ops.id, 'C-OPS'], [plain.id, undefined]]);
    expect(await outbox.jobsFor(elsewhere)).toEqual([]);
    await outbox.stop();
  });

  it('a post that gets no answer is abandoned after 30 s and tried again after the back-off; the late answer is ignored', async () => {
    const channel = heldChannel();
    const card = await relay.create(single);
    const outbox = await startOutbox(channel);
    const first = await waitUntil(() => channel.posts[0], 'the first post to reach the platform');
    expect(first.card.id).toBe(card.id);

    clock.advance(SEND_TIMEOUT_MS - 1);
    await turn();
    expect(jobs()).toMatchObject([{ cardId: card.id, action: 'post', attempts: 0, lastError: null }]);
    clock.advance(1);
    await outbox.idle();
    // Counted as an outage: the first back-off, the reason recorded and logged once.
    expect(jobs()).toEqual([{ channel: 'slack', cardId: card.id, action: 'post', dueAt: clock.now() + BACKOFF, attempts: 1, lastError: 'no response in 30 s' }]);
    expect(logs).toEqual([`slack: cannot deliver the post of card ${card.id} (no response in 30 s); trying again in 1 s`]);
    expect(channel.posts).toHaveLength(1);

    clock.advance(BACKOFF);
    const second = await waitUntil(() => channel.posts[1], 'the post to be tried again');
    // The abandoned call answers late, before the second: nothing is made of it.
    first.answer({ chat: 'C1', message: 'late' });
    second.answer({ chat: 'C1', message: 'second' });
    await outbox.idle();
    expect(store.channels.messageOf('slack', card.id)).toEqual({ chat: 'C1', message: 'second', closed: false });
    expect(jobs()).toEqual([]);
    await outbox.stop();
  });

  it('stop() lets a post in flight finish within the grace and record its message', async () => {
    const channel = heldChannel();
    const card = await relay.create(single);
    const outbox = await startOutbox(channel);
    const post = await waitUntil(() => channel.posts[0], 'the post to reach the platform');

    const stopped = outbox.stop();
    clock.advance(STOP_GRACE_MS - 1);
    post.answer({ chat: 'C1', message: 'in-time' });
    await stopped;
    expect(store.channels.messageOf('slack', card.id)).toEqual({ chat: 'C1', message: 'in-time', closed: false });
    expect(jobs()).toEqual([]);
  });

  it('stop() returns once the grace runs out; the post stays queued for the next start, and its late answer writes nothing', async () => {
    const channel = heldChannel();
    const card = await relay.create(single);
    const outbox = await startOutbox(channel);
    const post = await waitUntil(() => channel.posts[0], 'the post to reach the platform');

    let returned = false;
    const stopped = outbox.stop().then(() => (returned = true));
    clock.advance(STOP_GRACE_MS - 1);
    await turn();
    expect(returned).toBe(false);
    clock.advance(1);
    await stopped;
    // Not tried, not failed: the job is as it was, for the next start.
    expect(jobs()).toMatchObject([{ cardId: card.id, action: 'post', attempts: 0, lastError: null }]);

    post.answer({ chat: 'C1', message: 'after-stop' });
    await turn();
    expect(store.channels.messageOf('slack', card.id)).toBeUndefined();
    expect(jobs()).toHaveLength(1);

    // The next start posts the card again (the platform may then show it twice: the price of a stop mid-post).
    const next = heldChannel();
    const again = await startOutbox(next);
    const repost = await waitUntil(() => next.posts[0], 'the post to be sent again after the start');
    expect(repost.card.id).toBe(card.id);
    repost.answer({ chat: 'C1', message: 'next-start' });
    await again.idle();
    expect(store.channels.messageOf('slack', card.id)).toEqual({ chat: 'C1', message: 'next-start', closed: false });
    await again.stop();
  });
});

describe('the outbox through an outage of the real Slack channel', () => {
  let fake: FakeSlack;
  let h: ChannelHarness;
  beforeEach(async () => {
    fake = await startFakeSlack();
    h = await startChannelHarness({
      id: 'slack',
      make: slackChannel,
      config: { backoffMs: BACKOFF, slack: { token: fake.token, channel: fake.channelName, answerers: ['U0ADA'], signingSecret: 'secret', apiUrl: fake.url } },
    });
  });
  afterEach(() => stopHarnessAndFake(h, fake));

  it('backs off by doubling from 1 s up to 5 minutes, then stays at 5 minutes; the post goes out once Slack is back', async () => {
    await fake.setDown(true);
    const card = await h.ask(single);
    await h.idle();
    const posts = () => fake.requests.filter((r) => r.api === 'chat.postMessage').length;
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 13; attempt++) {
      expect(posts()).toBe(attempt);
      const [job] = h.store.channels.jobs('slack');
      expect(job).toMatchObject({ cardId: card.id, attempts: attempt, lastError: 'chat.postMessage: HTTP 503' });
      waits.push(job.dueAt - h.clock.now());
      await h.advance(job.dueAt - h.clock.now());
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300, 300].map((s) => s * 1000));
    expect(Math.max(...waits)).toBe(MAX_BACKOFF_MS);
    // One log line as it starts failing, then one per doubling of the failures (the 1st, 2nd, 4th and 8th).
    expect(h.logs).toEqual(
      ['1 s', '2 s', '8 s', '128 s'].map((wait) => `slack: cannot deliver the post of card ${card.id} (chat.postMessage: HTTP 503); trying again in ${wait}`),
    );

    await fake.setDown(false);
    await h.advance(MAX_BACKOFF_MS);
    expect(fake.messages).toHaveLength(1);
    expect(h.store.channels.jobs('slack')).toEqual([]);
    expect((await h.relay.get(card.id)).status).toBe('pending');
  });
});
