import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { PostgresLeases } from '../../src/store/postgres/leases.js';
import { PostgresSessionStore } from '../../src/store/postgres/postgres-session-store.js';
import { lastToolResult, lastUserText, startAnthropicServer, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { dbQuestion } from '../providers/claude-fixtures.js';
import { freshDatabase, testPool, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Agent sessions on two nodes sharing one database: a session's runner is on one node (its
// lease); a message or stop sent to the other node reaches it; when its node stops, the
// other node takes the session over once the lease ran out, and resumes it from the store
// (messages engine) or fails it, naming the node (an engine whose state was on that disk).

// Short, so a stopped node's session moves within the test; long enough that a busy machine still renews in time.
const LEASE = '1500ms';

function model(request: MessagesRequest): ScriptedReply {
  const result = lastToolResult(request);
  if (result) return { text: `ack ${String(result.content)}` };
  const prompt = lastUserText(request);
  if (prompt === 'ask') return { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [dbQuestion()] } } };
  return { text: `reply to ${prompt}` };
}

let fake: AnthropicServer;
let db: FreshDatabase;
let a: TestRelay;
let b: TestRelay;

const start = (id: string) =>
  startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h', ASKRELAY_NODE_ID: id, ASKRELAY_LEASE: LEASE }, undefined, '0', { databaseUrl: db.url });

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  db = await freshDatabase();
  [a, b] = await Promise.all([start('node-a'), start('node-b')]);
});
afterEach(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db.drop();
});

const session = async (on: TestRelay, id: string) => (await (await on.api(`/api/sessions/${id}`)).json()) as Session;
const until = (on: TestRelay, id: string, ok: (s: Session) => boolean, what: string) =>
  waitUntil(async () => {
    const s = await session(on, id);
    return ok(s) ? s : undefined;
  }, what);
async function begin(on: TestRelay, prompt: string): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const holdsSessions = async (on: TestRelay, node: string) => {
  const body = (await (await on.api('/api/nodes')).json()) as { nodes: { id: string; holds: { sessions: number } }[] };
  return body.nodes.find((n) => n.id === node)?.holds.sessions;
};

describe('sessions across nodes', () => {
  it('a message and a stop sent to the other node reach the node running the session', async () => {
    const s = await begin(a, 'hello');
    await until(b, s.id, (x) => x.status === 'idle' && x.transcript!.at(-1)?.text === 'reply to hello', 'first turn');
    expect(a.sessions.liveIds()).toEqual([s.id]);
    const sent = await b.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: 'second' } });
    expect(sent.status).toBe(200);
    await until(b, s.id, (x) => x.status === 'idle' && x.transcript!.at(-1)?.text === 'reply to second', 'second turn, run on A');
    // Still on A: B never ran it.
    expect(b.sessions.liveIds()).toEqual([]);
    const stopped = await b.api(`/api/sessions/${s.id}`, { method: 'DELETE' });
    expect(stopped.status).toBe(200);
    expect(((await stopped.json()) as Session).status).toBe('stopped');
    expect(a.sessions.liveIds()).toEqual([]);
    const late = await b.api(`/api/sessions/${s.id}/messages`, { method: 'POST', json: { text: 'third' } });
    expect(late.status).toBe(410);
  });

  it('the session waiting on a card moves to the other node when its node stops; the answer there reaches the model', async () => {
    const s = await begin(a, 'ask');
    const card = await waitUntil(
      async () => ((await (await b.api(`/api/cards?sessionId=${s.id}&status=pending`)).json()) as { cards: Card[] }).cards[0],
      'the session card',
    );
    await a.stop();
    // B takes the lease once it ran out, and resumes the session from the store.
    await waitUntil(() => b.sessions.liveIds().includes(s.id) || undefined, 'B adopts the session');
    // The node list says so from B's next heartbeat on.
    await waitUntil(async () => (await holdsSessions(b, 'node-b')) === 1, 'node-b to hold one session');
    const answered = await b.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
    expect(answered.status).toBe(200);
    const done = await until(b, s.id, (x) => x.status === 'idle' && x.transcript!.at(-1)?.role === 'assistant', 'the turn to finish on B');
    expect(done.transcript!.at(-1)!.text).toBe(
      'ack Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.',
    );
  });

  it('a session whose engine kept its state on a node that died fails, naming that node', async () => {
    const pool = testPool(db.url);
    try {
      const now = new Date().toISOString();
      const orphan: Session = { id: 's_fromgone0000001', provider: 'claude', engine: 'code', model: 'claude-sonnet-5', status: 'waiting', relayMode: 'autopilot', agentsMayAnswer: false, createdAt: now, updatedAt: now };
      // The moment a node stores the failure, neither node may still count the session as its own
      // (the lease round would renew a lease for a session nobody runs).
      const heldAtFailure: string[][] = [];
      const unsubscribe = [a, b].map((node) =>
        node.relay.events.subscribe((name, data) => {
          const s = data as Session;
          if (name === 'session.updated' && s.id === orphan.id && s.status === 'failed') heldAtFailure.push([...a.sessions.liveIds(), ...b.sessions.liveIds()]);
        }),
      );
      await new PostgresSessionStore(pool).insert(orphan);
      // Its node held the lease and stopped renewing it a moment ago.
      await new PostgresLeases(pool).acquire(`session:${orphan.id}`, 'node-gone', 1);
      const failed = await until(b, orphan.id, (x) => x.status === 'failed', 'the orphan to fail');
      expect(failed.error).toMatch(/^The session ran on node node-gone, which stopped; its code engine keeps its state on that node's disk, so node node-[ab] cannot resume it\. Start it again\.$/);
      expect(a.sessions.liveIds().concat(b.sessions.liveIds())).not.toContain(orphan.id);
      await waitUntil(() => heldAtFailure.length > 0, 'the failure event');
      for (const held of heldAtFailure) expect(held).not.toContain(orphan.id);
      unsubscribe.forEach((stop) => stop());
    } finally {
      await pool.end();
    }
  });
});
