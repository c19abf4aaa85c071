import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asyncChannels, type AsyncChannelStore, type OutboxJob } from '../../src/store/channel-store.js';
import { PostgresChannelStore } from '../../src/store/postgres/postgres-channel-store.js';
import { bothStores, type StoreHarness } from '../support/store-harness.js';

// The chat channels' store (durable outbox, card messages, bookmarks), run against the
// embedded SQLite file and a real PostgreSQL database (fresh per test, dropped afterwards).
// What the callers rely on (src/channels/outbox.ts, service.ts, inbox.ts): one FIFO per
// channel whose head waits even when not due, a job queued once however often it is asked
// for, a turn's jobs written all at once, and a post or close recorded with its job's removal.

const STORES = bothStores<AsyncChannelStore>({ sqlite: (s) => asyncChannels(s.channels), postgres: (pool) => new PostgresChannelStore(pool) });

// Real epoch milliseconds: they need 64-bit columns (and come back as numbers).
const NOW = Date.parse('2026-11-30T12:00:00.000Z');
const queued = (cardId: string, action: OutboxJob['action'], dueAt = NOW, extra: Partial<OutboxJob> = {}): OutboxJob => ({
  channel: 'telegram',
  cardId,
  action,
  dueAt,
  attempts: 0,
  lastError: null,
  ...extra,
});
const order = (jobs: OutboxJob[]) => jobs.map((j) => `${j.cardId}:${j.action}`);

for (const [name, open] of Object.entries(STORES)) {
  describe(`channel store: ${name}`, () => {
    let h: StoreHarness<AsyncChannelStore>;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it('queues jobs once, in order, per channel; the oldest is next whether due or not', async () => {
      await h.store.enqueue('telegram', 'c_1', 'post', NOW + 60_000);
      await h.store.enqueue('telegram', 'c_2', 'post', NOW);
      await h.store.enqueue('slack', 'c_9', 'post', NOW);
      await h.store.enqueue('telegram', 'c_1', 'close', NOW);
      // Asked for again (a restart re-queues): it keeps its place and its due time.
      await h.store.enqueue('telegram', 'c_1', 'post', NOW - 5000);
      expect(await h.store.jobs('telegram')).toEqual([queued('c_1', 'post', NOW + 60_000), queued('c_2', 'post'), queued('c_1', 'close')]);
      // Not due yet, still first: a job holds the ones behind it.
      expect(await h.store.next('telegram')).toEqual(queued('c_1', 'post', NOW + 60_000));
      expect(await h.store.next('slack')).toEqual({ ...queued('c_9', 'post'), channel: 'slack' });
      expect(await h.store.next('discord')).toBeUndefined();
      expect(await h.store.jobs('discord')).toEqual([]);
    });

    it("queues a turn's jobs at once, in the order given, after what is queued: all or none", async () => {
      await h.store.enqueue('telegram', 'c_0', 'post', NOW);
      await h.store.enqueueAll([
        { channel: 'telegram', cardId: 'c_3', action: 'post', dueAt: NOW + 3 },
        { channel: 'slack', cardId: 'c_4', action: 'post', dueAt: NOW },
        { channel: 'telegram', cardId: 'c_1', action: 'post', dueAt: NOW },
        { channel: 'telegram', cardId: 'c_0', action: 'post', dueAt: NOW + 9 }, // queued already
        { channel: 'telegram', cardId: 'c_3', action: 'post', dueAt: NOW + 9 }, // twice in the batch: the first counts
        { channel: 'telegram', cardId: 'c_2', action: 'close', dueAt: NOW },
      ]);
      await h.store.enqueueAll([]);
      expect(await h.store.jobs('telegram')).toEqual([queued('c_0', 'post'), queued('c_3', 'post', NOW + 3), queued('c_1', 'post'), queued('c_2', 'close')]);
      expect(order(await h.store.jobs('slack'))).toEqual(['c_4:post']);
      // A batch the database refuses (a due time that is no number) queues nothing of it.
      await expect(
        h.store.enqueueAll([
          { channel: 'telegram', cardId: 'c_5', action: 'post', dueAt: NOW },
          { channel: 'telegram', cardId: 'c_6', action: 'post', dueAt: Number.NaN },
        ]),
      ).rejects.toThrow();
      await h.store.enqueue('telegram', 'c_7', 'post', NOW);
      expect(order(await h.store.jobs('telegram'))).toEqual(['c_0:post', 'c_3:post', 'c_1:post', 'c_2:close', 'c_7:post']);
    });

    it('a failed job is tried again later and keeps its place; done removes it', async () => {
      await h.store.enqueue('telegram', 'c_1', 'post', NOW);
      await h.store.enqueue('telegram', 'c_2', 'post', NOW);
      await h.store.retry(queued('c_1', 'post'), NOW + 1000, 'rate limited');
      expect(await h.store.next('telegram')).toEqual(queued('c_1', 'post', NOW + 1000, { attempts: 1, lastError: 'rate limited' }));
      await h.store.retry(queued('c_1', 'post'), NOW + 3000, `unavailable ${'x'.repeat(600)}`);
      const retried = (await h.store.next('telegram'))!;
      expect(retried).toMatchObject({ cardId: 'c_1', dueAt: NOW + 3000, attempts: 2 });
      expect(retried.lastError).toBe(`unavailable ${'x'.repeat(600)}`.slice(0, 500));
      // Jobs nobody queued: nothing happens, nothing appears.
      await h.store.retry(queued('c_8', 'post'), NOW, 'gone');
      await h.store.done(queued('c_8', 'close'));
      await h.store.done(queued('c_1', 'close'));
      expect(order(await h.store.jobs('telegram'))).toEqual(['c_1:post', 'c_2:post']);
      await h.store.done(queued('c_1', 'post'));
      expect(await h.store.next('telegram')).toEqual(queued('c_2', 'post'));
      await h.store.done({ channel: 'telegram', cardId: 'c_2', action: 'post' });
      expect(await h.store.next('telegram')).toBeUndefined();
    });

    it('a posted card is linked to its message and its post job leaves with it', async () => {
      await h.store.enqueue('telegram', 'c_1', 'post', NOW);
      await h.store.enqueue('telegram', 'c_1', 'close', NOW);
      await h.store.enqueue('slack', 'c_1', 'post', NOW);
      await h.store.posted('telegram', 'c_1', { chat: '-100', message: '-100:7' });
      expect(order(await h.store.jobs('telegram'))).toEqual(['c_1:close']);
      expect(order(await h.store.jobs('slack'))).toEqual(['c_1:post']);
      expect(await h.store.messageOf('telegram', 'c_1')).toEqual({ chat: '-100', message: '-100:7', closed: false });
      expect(await h.store.messageOf('slack', 'c_1')).toBeUndefined();
      expect(await h.store.cardOfMessage('telegram', '-100:7')).toBe('c_1');
      expect(await h.store.cardOfMessage('slack', '-100:7')).toBeUndefined();
      expect(await h.store.cardOfMessage('telegram', '-100:8')).toBeUndefined();
      expect(await h.store.openCards('telegram')).toEqual(['c_1']);
      // Posted twice (a drainer that lost its result): the first message stays the card's.
      await h.store.posted('telegram', 'c_1', { chat: '-100', message: '-100:9' });
      expect(await h.store.messageOf('telegram', 'c_1')).toEqual({ chat: '-100', message: '-100:7', closed: false });
      expect(await h.store.cardOfMessage('telegram', '-100:9')).toBe('c_1');
      // A message already known keeps the card it was made for.
      await h.store.posted('telegram', 'c_2', { chat: '-100', message: '-100:7' });
      expect(await h.store.cardOfMessage('telegram', '-100:7')).toBe('c_1');
      expect(await h.store.messageOf('telegram', 'c_2')).toBeUndefined();
    });

    it('closing marks the card message and drops the close job; prompts are never the card message', async () => {
      for (const [card, message] of [['c_1', 'm1'], ['c_2', 'm2'], ['c_3', 'm3']]) await h.store.posted('telegram', card!, { chat: 'chat', message: message! });
      await h.store.link('telegram', { chat: 'chat', message: 'p1' }, 'c_1');
      await h.store.link('telegram', { chat: 'chat', message: 'p4' }, 'c_4');
      await h.store.link('telegram', { chat: 'chat', message: 'm2' }, 'c_9'); // known already: ignored
      expect(await h.store.cardOfMessage('telegram', 'p1')).toBe('c_1');
      expect(await h.store.cardOfMessage('telegram', 'm2')).toBe('c_2');
      expect(await h.store.messageOf('telegram', 'c_1')).toEqual({ chat: 'chat', message: 'm1', closed: false });
      expect(await h.store.messageOf('telegram', 'c_4')).toBeUndefined();
      await h.store.enqueue('telegram', 'c_1', 'close', NOW);
      await h.store.enqueue('telegram', 'c_2', 'close', NOW);
      await h.store.enqueue('telegram', 'c_1', 'post', NOW);
      await h.store.closed('telegram', 'c_1');
      expect(await h.store.messageOf('telegram', 'c_1')).toEqual({ chat: 'chat', message: 'm1', closed: true });
      expect(order(await h.store.jobs('telegram'))).toEqual(['c_2:close', 'c_1:post']);
      expect((await h.store.openCards('telegram')).sort()).toEqual(['c_2', 'c_3']);
      expect(await h.store.openCards('slack')).toEqual([]);
      // A close refused for good, of a card without a message: the job leaves all the same.
      await h.store.enqueue('telegram', 'c_5', 'close', NOW);
      await h.store.closed('telegram', 'c_5');
      expect(order(await h.store.jobs('telegram'))).toEqual(['c_2:close', 'c_1:post']);
      expect(await h.store.messageOf('telegram', 'c_5')).toBeUndefined();
    });

    it("keeps each channel's bookmarks, overwriting on remember", async () => {
      expect(await h.store.recall('telegram', 'offset')).toBeUndefined();
      await h.store.remember('telegram', 'offset', '41');
      await h.store.remember('telegram', 'offset', '42');
      await h.store.remember('mattermost', 'cursor', '{"cursor":1700000000000,"atCursor":["p1"]}');
      expect(await h.store.recall('telegram', 'offset')).toBe('42');
      expect(await h.store.recall('telegram', 'cursor')).toBeUndefined();
      expect(await h.store.recall('mattermost', 'offset')).toBeUndefined();
      expect(await h.store.recall('mattermost', 'cursor')).toBe('{"cursor":1700000000000,"atCursor":["p1"]}');
    });

    it('another handle (a restart, another node) sees all of it and queues after what is there', async () => {
      await h.store.enqueue('telegram', 'c_1', 'post', NOW);
      await h.store.enqueue('telegram', 'c_2', 'post', NOW);
      await h.store.posted('telegram', 'c_0', { chat: 'chat', message: 'm0' });
      await h.store.remember('telegram', 'offset', '7');
      const other = await h.other();
      expect(order(await other.jobs('telegram'))).toEqual(['c_1:post', 'c_2:post']);
      expect(await other.messageOf('telegram', 'c_0')).toEqual({ chat: 'chat', message: 'm0', closed: false });
      expect(await other.recall('telegram', 'offset')).toBe('7');
      await other.enqueue('telegram', 'c_3', 'post', NOW);
      await other.done(queued('c_1', 'post'));
      expect(order(await h.store.jobs('telegram'))).toEqual(['c_2:post', 'c_3:post']);
    });

    it("several handles queueing, posting and remembering at once: each job once, each writer's order kept, no error", async () => {
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 3 }, () => h.other())))];
      await Promise.all(
        handles.map(async (store, w) => {
          for (let k = 0; k < 8; k++) {
            await store.enqueue('telegram', `w${w}_${k}`, 'post', NOW);
            // The same card event reaching every node: queued once.
            await store.enqueueAll([{ channel: 'telegram', cardId: `shared_${k}`, action: 'close', dueAt: NOW }]);
          }
        }),
      );
      const jobs = order(await h.store.jobs('telegram'));
      expect(jobs).toHaveLength(4 * 8 + 8);
      expect(new Set(jobs).size).toBe(jobs.length);
      for (let w = 0; w < 4; w++) {
        expect(jobs.filter((j) => j.startsWith(`w${w}_`))).toEqual(Array.from({ length: 8 }, (_, k) => `w${w}_${k}:post`));
      }
      expect(jobs.filter((j) => j.startsWith('shared_'))).toEqual(Array.from({ length: 8 }, (_, k) => `shared_${k}:close`));
      // Two drainers recording one post; every node moving the bookmark at once.
      await Promise.all(handles.map((store) => store.posted('telegram', 'w0_0', { chat: 'chat', message: 'm1' })));
      await Promise.all(handles.flatMap((store, w) => [1, 2, 3].map((n) => store.remember('telegram', 'offset', `${w}.${n}`))));
      expect(await h.store.messageOf('telegram', 'w0_0')).toEqual({ chat: 'chat', message: 'm1', closed: false });
      expect(order(await h.store.jobs('telegram'))).not.toContain('w0_0:post');
      expect(await h.store.recall('telegram', 'offset')).toMatch(/^[0-3]\.[1-3]$/);
    });

    // SQLite counts the outbox's order in the process (it is the one writer of its file), so
    // two handles opened before either queues hand out the same numbers; nodes on PostgreSQL
    // take them from one sequence.
    it.skipIf(name === 'sqlite')('nodes queueing in turn share one order', async () => {
      const a = h.store;
      const b = await h.other();
      await a.enqueue('telegram', 'c_1', 'post', NOW);
      await a.enqueue('telegram', 'c_2', 'post', NOW);
      await a.enqueue('telegram', 'c_3', 'post', NOW);
      await b.enqueue('telegram', 'c_4', 'post', NOW);
      await a.enqueue('telegram', 'c_5', 'post', NOW);
      await b.enqueueAll([
        { channel: 'telegram', cardId: 'c_6', action: 'post', dueAt: NOW },
        { channel: 'telegram', cardId: 'c_7', action: 'post', dueAt: NOW },
      ]);
      expect(order(await b.jobs('telegram'))).toEqual(['c_1:post', 'c_2:post', 'c_3:post', 'c_4:post', 'c_5:post', 'c_6:post', 'c_7:post']);
      expect((await a.next('telegram'))!.cardId).toBe('c_1');
    });
  });
}
