import { afterEach, beforeEach, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { freshDatabase, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Behind a load balancer a client's next request may reach another node. A change answered
// by node A (an answer, a refusal) must already be in the audit log node B reads, as it is
// on one node: A answers once its entries are written, not a turn later. (Found by the
// two-node run of the permission matrix.)

let db: FreshDatabase;
let a: TestRelay;
let b: TestRelay;

beforeEach(async () => {
  db = await freshDatabase();
  const start = (id: string) => startTestRelay({ ASKRELAY_NODE_ID: id, ASKRELAY_LEASE: '1500ms' }, undefined, '0', { databaseUrl: db.url });
  [a, b] = await Promise.all([start('node-a'), start('node-b')]);
});
afterEach(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db.drop();
});

const entriesOn = async (node: TestRelay, cardId: string) =>
  ((await (await node.api('/api/audit?limit=10000')).json()) as { entries: AuditEntry[] }).entries.filter((e) => e.cardId === cardId).map((e) => e.event);

it('what a request on A wrote to the audit log is there for the next request on B', async () => {
  for (let i = 0; i < 10; i++) {
    const created = await a.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'q1', text: `Ship ${i}?`, options: [{ label: 'Yes' }, { label: 'No' }] }] } });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await entriesOn(b, id)).toEqual(['card.created']);
    expect((await a.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } })).status).toBe(200);
    expect(await entriesOn(b, id)).toEqual(['card.created', 'card.answered']);
  }
});
