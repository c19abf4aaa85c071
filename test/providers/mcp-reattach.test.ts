import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// A waiting MCP call outlives its connection, its MCP session and the relay process: the
// client re-sends the call (new session, new request id) and gets the card the human already
// sees, not a second one. Real MCP SDK clients over Streamable HTTP, real relays on one data
// folder, answers through the HTTP API.

process.env.ASKRELAY_MCP_PROGRESS = '100ms';
process.env.ASKRELAY_MCP_GRACE = '1s';

const dirs: string[] = [];
const relays: TestRelay[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
});
afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop().catch(() => {})));
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

async function relayOn(dir?: string): Promise<TestRelay> {
  const data = dir ?? mkdtempSync(join(tmpdir(), 'askrelay-reattach-'));
  if (!dir) dirs.push(data);
  const relay = await startTestRelay({ ASKRELAY_WAIT: '90m' }, data);
  relays.push(relay);
  return relay;
}

async function connect(relay: TestRelay, path = '/mcp') {
  const client = new Client({ name: 'reattach-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(path, relay.url), {
    requestInit: { headers: { authorization: `Bearer ${relay.token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

type Result = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
const call = (client: Client, args: unknown) =>
  client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }, undefined, { timeout: 60_000 }) as Promise<Result>;

const pending = async (relay: TestRelay, provider = 'cursor') => (await relay.relay.list({ status: 'pending' })).filter((c) => c.provider === provider);

async function until<T>(what: () => T | undefined | Promise<T | undefined>, label: string, withinMs = 5000): Promise<T> {
  for (let waited = 0; waited < withinMs; waited += 20) {
    const value = await what();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${label}`);
}

const onlyPending = (relay: TestRelay, provider = 'cursor') =>
  until(async () => {
    const cards = await pending(relay, provider);
    return cards.length === 1 ? cards[0] : undefined;
  }, 'one pending card');

async function answer(relay: TestRelay, id: string, answers: unknown) {
  const res = await relay.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
}

const DB = { question: 'Which database?', header: 'Database', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] };
// The same arguments with their keys in another order: still the same call.
const DB_REORDERED = { options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }], header: 'Database', question: 'Which database?' };

describe('a waiting MCP call re-attaches to its card', () => {
  it('re-sent on a new MCP session after the client went away: the same card, answered once', async () => {
    const relay = await relayOn();
    const first = await connect(relay);
    const lost = call(first.client, { questions: [DB] }).catch(() => 'gone');
    const card = await onlyPending(relay);
    await first.transport.close();
    expect(await lost).toBe('gone');

    const second = await connect(relay);
    const again = call(second.client, { questions: [DB_REORDERED] });
    await new Promise((r) => setTimeout(r, 1500)); // past the 1 s grace: the re-attached call keeps the card alive
    expect((await pending(relay)).map((c) => c.id)).toEqual([card.id]);
    await answer(relay, card.id, { q1: { selected: ['SQLite'] } });
    const result = await again;
    expect(result.content[0].text).toBe('Which database? → SQLite');
    expect(result.structuredContent?.cardId).toBe(card.id);
  });

  it('an identical question from another client that is still waiting gets a card of its own', async () => {
    const relay = await relayOn();
    const a = await connect(relay);
    const b = await connect(relay);
    const fromA = call(a.client, { questions: [DB] });
    const cardA = await onlyPending(relay);
    const fromB = call(b.client, { questions: [DB] });
    const both = await until(async () => {
      const cards = await pending(relay);
      return cards.length === 2 ? cards : undefined;
    }, 'a second card');
    const cardB = both.find((c) => c.id !== cardA.id)!;
    await answer(relay, cardA.id, { q1: { selected: ['PostgreSQL'] } });
    await answer(relay, cardB.id, { q1: { selected: ['SQLite'] } });
    expect((await fromA).content[0].text).toBe('Which database? → PostgreSQL');
    expect((await fromB).content[0].text).toBe('Which database? → SQLite');
  });

  it('answered while the client was away: the re-sent call gets the answer at once; asking again later is a new card', async () => {
    const relay = await relayOn();
    const first = await connect(relay);
    const lost = call(first.client, { questions: [DB] }).catch(() => 'gone');
    const card = await onlyPending(relay);
    await first.transport.close();
    await lost;
    await new Promise((r) => setTimeout(r, 300)); // the relay notices the closed connection
    await answer(relay, card.id, { q1: { selected: ['PostgreSQL'] } });

    const second = await connect(relay);
    const result = await call(second.client, { questions: [DB] });
    expect(result.content[0].text).toBe('Which database? → PostgreSQL');
    expect(result.structuredContent?.cardId).toBe(card.id);

    // The answer was handed over; the same question asked afterwards is a new question.
    const later = call(second.client, { questions: [DB] });
    const fresh = await onlyPending(relay);
    expect(fresh.id).not.toBe(card.id);
    await answer(relay, fresh.id, { q1: { selected: ['SQLite'] } });
    expect((await later).content[0].text).toBe('Which database? → SQLite');
  });

  it('survives a relay restart: the re-sent call finds the card on the new process', async () => {
    const first = await relayOn();
    const before = await connect(first);
    const lost = call(before.client, { questions: [DB] }).catch(() => 'gone');
    const card = await onlyPending(first);
    await first.stop();
    // The SDK client does not notice a call cut off without an answer; it gives up on it by itself.
    await before.client.close();
    expect(await lost).toBe('gone');

    const second = await relayOn(first.dataDir);
    expect(second.recovered.pending).toBe(1);
    const after = await connect(second);
    const again = call(after.client, { questions: [DB] });
    await new Promise((r) => setTimeout(r, 1500)); // past the grace the restart gave the orphaned card
    expect((await pending(second)).map((c) => c.id)).toEqual([card.id]);
    await answer(second, card.id, { q1: { selected: ['SQLite'] } });
    expect((await again).content[0].text).toBe('Which database? → SQLite');
  });

  it('after a restart, a card whose call nobody re-sends is cancelled once the grace is over', async () => {
    const first = await relayOn();
    const openclaw = await connect(first, '/mcp/openclaw');
    const lost = call(openclaw.client, { questions: [{ id: 'db', question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] }] }).catch(() => 'gone');
    const card = await onlyPending(first, 'openclaw');
    await first.stop();
    await openclaw.client.close();
    await lost;

    const second = await relayOn(first.dataDir);
    expect((await second.relay.get(card.id)).status).toBe('pending'); // the client has the grace to come back
    const closed = await until(async () => {
      const now = await second.relay.get(card.id);
      return now.status === 'pending' ? undefined : now;
    }, 'the orphan to be cancelled');
    expect(closed.status).toBe('cancelled');
  });
});
