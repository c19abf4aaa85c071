import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { freshDatabase, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitUntil } from '../support/wait-until.js';

// PostgreSQL going away under a running relay and coming back. Node A reaches the database
// through a proxy the test cuts (every connection dropped, new ones refused, as in a restart);
// node B reaches it directly and keeps working. While the database is away from A, A answers
// 503 store_unavailable; once it is back, A serves again, and an answer B took meanwhile
// reaches A's long poll (A listens again and re-reads what it missed).

let db: FreshDatabase;
let proxy: TcpProxy;
let a: TestRelay;
let b: TestRelay;

beforeEach(async () => {
  db = await freshDatabase();
  const direct = new URL(db.url);
  proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const env = (id: string) => ({ ASKRELAY_NODE_ID: id, ASKRELAY_LEASE: '1500ms' });
  a = await startTestRelay(env('node-a'), undefined, '0', { databaseUrl: viaProxy.toString() });
  b = await startTestRelay(env('node-b'), undefined, '0', { databaseUrl: db.url });
});
afterEach(async () => {
  await proxy.up().catch(() => {});
  await Promise.all([a?.stop(), b?.stop()]);
  await proxy.close();
  await db.drop();
});

const ask = { questions: [{ id: 'q1', text: 'Still there?', options: [{ label: 'Yes' }, { label: 'No' }] }] };
const yes = { answers: { q1: { selected: ['Yes'] } } };

it('requests fail with a clear 503 while the database is away, and everything resumes with no answer lost', async () => {
  const first = (await (await a.api('/api/cards', { method: 'POST', json: ask })).json()) as Card;
  const second = (await (await a.api('/api/cards', { method: 'POST', json: ask })).json()) as Card;
  const poll = a.api(`/api/cards/${first.id}/wait?timeout=30`);
  // An event stream open on A: it may miss what B does while A is cut off, so it is ended once A is back.
  const stream = await a.api('/api/events');
  let streamEnded = false;
  void stream.text().then(() => (streamEnded = true), () => (streamEnded = true));
  await waitUntil(() => a.relay.waitedOn === 1, 'the long poll to wait');
  await a.push.idle();
  await proxy.down();

  const health = await fetch(new URL('/api/health', a.url));
  expect(health.status).toBe(503);
  expect(await health.json()).toMatchObject({ ok: false, store: 'postgres', node: 'node-a', error: { code: 'store_unavailable' } });
  for (const res of [await a.api('/api/cards'), await a.api(`/api/cards/${second.id}/answer`, { method: 'POST', json: yes })]) {
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: { code: 'store_unavailable', message: 'The database does not answer; try again in a moment (the relay resumes once it is back).' } });
  }
  // Meanwhile the other node answers the card A's long poll waits on.
  expect((await b.api(`/api/cards/${first.id}/answer`, { method: 'POST', json: yes })).status).toBe(200);

  await proxy.up();
  await waitUntil(async () => (await fetch(new URL('/api/health', a.url))).status === 200, 'A healthy again');
  await waitUntil(() => streamEnded, 'the event stream to be ended for a reload');
  const released = await poll;
  expect(released.status).toBe(200);
  expect(((await released.json()) as Card).status).toBe('answered');
  // The answer refused while the database was away is taken now, once.
  const retried = await a.api(`/api/cards/${second.id}/answer`, { method: 'POST', json: yes });
  expect(retried.status).toBe(200);
  const cards = ((await (await b.api('/api/cards?status=answered')).json()) as { cards: Card[] }).cards;
  expect(cards.map((c) => c.id).sort()).toEqual([first.id, second.id].sort());
  const verify = (await (await b.api('/api/audit/verify')).json()) as { ok: boolean };
  expect(verify.ok).toBe(true);
});

it('a long poll that begins while the database is away keeps waiting, and gets the answer given meanwhile on another node', async () => {
  const card = (await (await a.api('/api/cards', { method: 'POST', json: ask })).json()) as Card;
  await a.push.idle();
  // Counts A's reads of the card: the poll's permission read, tried again while the database is away.
  const read = a.relay.get.bind(a.relay);
  let reads = 0;
  a.relay.get = (id: string) => (reads++, read(id));
  await proxy.down();
  const poll = a.api(`/api/cards/${card.id}/wait?timeout=30`);
  let settled: Response | undefined;
  void poll.then((res) => (settled = res));
  await waitUntil(() => {
    if (settled) throw new Error(`the poll ended at once with ${settled.status}`);
    return reads >= 2;
  }, 'the poll to read the card again');
  expect((await b.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: yes })).status).toBe(200);
  await proxy.up();
  const released = await poll;
  expect(released.status).toBe(200);
  expect(((await released.json()) as Card).status).toBe('answered');
});
