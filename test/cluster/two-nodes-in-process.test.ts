import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostgresNodes } from '../../src/store/postgres/nodes.js';
import { PostgresAuditStore } from '../../src/store/postgres/postgres-audit-store.js';
import { PostgresCardStore } from '../../src/store/postgres/postgres-card-store.js';
import { cardOf } from '../support/card-fixture.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { readSse, type SseEvent } from '../support/sse.js';
import { waitUntil } from '../support/wait-until.js';

// Two relay nodes in this process on one PostgreSQL database: one relay. (The same rules with
// nodes as separate processes, killed, behind a load balancer: nodes-*.test.ts.)

let db: FreshDatabase;
let a: TestRelay;
let b: TestRelay;

const question = (text: string, waitSeconds?: number) => ({ questions: [{ id: 'q1', text, options: [{ label: 'Yes' }, { label: 'No' }] }], ...(waitSeconds ? { waitSeconds } : {}) });

beforeEach(async () => {
  db = await freshDatabase();
  const start = (id: string) => startTestRelay({ ASKRELAY_NODE_ID: id, ASKRELAY_LEASE: '1500ms' }, undefined, '0', { databaseUrl: db.url });
  [a, b] = await Promise.all([start('node-a'), start('node-b')]);
});
afterEach(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db.drop();
});

/** Collects a node's SSE events until `stop()`. */
async function stream(node: TestRelay) {
  const controller = new AbortController();
  const res = await node.api('/api/events', { signal: controller.signal });
  const events: SseEvent[] = [];
  void (async () => {
    try {
      for await (const event of readSse(res)) events.push(event);
    } catch {
      // aborted
    }
  })();
  return { events, stop: () => controller.abort() };
}

describe('two nodes on one database', () => {
  it('say which store and node they are, and list each other', async () => {
    expect(await (await fetch(new URL('/api/health', a.url))).json()).toEqual({ ok: true, version: '0.1.0', store: 'postgres', node: 'node-a' });
    const nodes = await waitUntil(async () => {
      const body = (await (await b.api('/api/nodes')).json()) as { nodes: { id: string; leases: string[] }[] };
      return body.nodes.length === 2 && body.nodes;
    }, 'both nodes listed');
    expect(nodes.map((n) => n.id)).toEqual(['node-a', 'node-b']);
    // The push queue has one owner; without chat channels configured no node holds them.
    const owners = (name: string) => nodes.filter((n) => n.leases.includes(name)).length;
    expect(owners('push')).toBe(1);
    expect(owners('channels')).toBe(0);
  });

  it('a card made on A reaches B\'s stream in order, and an answer on B releases a long poll on A', async () => {
    const watch = await stream(b);
    const created = (await (await a.api('/api/cards', { method: 'POST', json: question('Ship it?') })).json()) as { id: string };
    const poll = a.api(`/api/cards/${created.id}/wait?timeout=20`);
    await waitUntil(() => watch.events.some((e) => e.event === 'card.created' && JSON.parse(e.data).id === created.id), 'card.created on B');
    const answered = await b.api(`/api/cards/${created.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } });
    expect(answered.status).toBe(200);
    const released = await poll;
    expect(released.status).toBe(200);
    expect(((await released.json()) as { status: string }).status).toBe('answered');
    // The answer, then (from A, whose long poll took it) its delivery, each a card.updated.
    const delivered = (e: { event: string; data: string }) => e.event === 'card.updated' && JSON.parse(e.data).delivery?.state === 'delivered';
    await waitUntil(() => watch.events.some(delivered), 'the delivery on B');
    const mine = watch.events
      .filter((e) => e.event.startsWith('card.') && JSON.parse(e.data).id === created.id)
      .map((e) => `${e.event}:${JSON.parse(e.data).status}:${JSON.parse(e.data).delivery?.state ?? '-'}`);
    expect(mine).toEqual(['card.created:pending:-', 'card.updated:answered:sent', 'card.updated:answered:delivered']);
    watch.stop();
  });

  it('twenty different answers through both nodes at once: one 200, nineteen 409 with the winner', async () => {
    const options = Array.from({ length: 20 }, (_, i) => ({ label: `Option ${i}` }));
    const card = (await (await a.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'q1', text: 'Which?', options }] } })).json()) as { id: string };
    const results = await Promise.all(
      options.map((o, i) => (i % 2 ? a : b).api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: [o.label] } } } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const winner = ((await results[statuses.indexOf(200)].json()) as { answer: unknown }).answer;
    for (const res of results.filter((r) => r.status === 409)) expect(((await res.json()) as { card: { answer: unknown } }).card.answer).toEqual(winner);
  });

  it('a card made on a node that stopped expires on time on the other, once', async () => {
    const watch = await stream(b);
    const card = (await (await a.api('/api/cards', { method: 'POST', json: question('Soon gone?', 1) })).json()) as { id: string };
    await waitUntil(() => watch.events.some((e) => e.event === 'card.created'), 'card.created on B');
    await a.stop();
    const expired = await waitUntil(() => watch.events.find((e) => e.event === 'card.updated' && JSON.parse(e.data).id === card.id), 'expiry on B');
    expect(JSON.parse(expired.data).status).toBe('expired');
    expect(((await (await b.api(`/api/cards/${card.id}`)).json()) as { status: string }).status).toBe('expired');
    const audit = (await (await b.api('/api/audit')).json()) as { entries: { event: string; cardId?: string }[] };
    expect(audit.entries.filter((e) => e.cardId === card.id).map((e) => e.event)).toEqual(['card.created', 'card.expired']);
    watch.stop();
  });

  it('a card a node committed but died before announcing is read back when that node leaves the list, and expires on time', async () => {
    const watch = await stream(a);
    const pool = testPool(db.url);
    try {
      // A third node: alive for a moment, it commits a card and dies before its NOTIFY.
      await new PostgresNodes(pool).heartbeat('node-gone', undefined, {});
      const now = Date.now();
      const card = cardOf([{ id: 'q1', text: 'Heard of me?', options: [{ label: 'Yes' }] }], {
        id: 'c_unannounced0001',
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + 3000).toISOString(),
      });
      await new PostgresCardStore(pool, await PostgresAuditStore.create(pool)).insertCard(card);
      // node-gone stops heartbeating; once it drops out of the list, A reads the card back.
      const created = await waitUntil(() => watch.events.find((e) => e.event === 'card.created' && JSON.parse(e.data).id === card.id), 'A to learn of the card');
      expect(JSON.parse(created.data).status).toBe('pending');
      const expired = await waitUntil(() => watch.events.find((e) => e.event === 'card.updated' && JSON.parse(e.data).id === card.id), 'the card to expire');
      expect(JSON.parse(expired.data).status).toBe('expired');
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(card.expiresAt));
    } finally {
      watch.stop();
      await pool.end();
    }
  });
});
