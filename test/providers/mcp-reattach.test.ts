import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../support/fake-clock.js';
import { MCP_TIMING_ENV, mcpClients, type ToolResult } from '../support/mcp-tools.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// A waiting MCP call outlives its connection, its MCP session and the relay process: the
// client re-sends the call (new session, new request id) and gets the card the human already
// sees, not a second one. Real MCP SDK clients over Streamable HTTP, real relays on one data
// folder, answers through the HTTP API. Each relay's clock moves only when the test says, so
// the re-attach grace runs out exactly when the test has the re-sent call in place.

const PROGRESS_MS = 30_000;
const GRACE_MS = 60_000;

const dirs: string[] = [];
const relays: TestRelay[] = [];
const clients = mcpClients('reattach-test');

afterEach(async () => {
  await clients.closeAll();
});
afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop().catch(() => {})));
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

const clocks = new Map<TestRelay, FakeClock>();
const clockOf = (relay: TestRelay) => clocks.get(relay)!;

async function relayOn(dir?: string): Promise<TestRelay> {
  const data = dir ?? mkdtempSync(join(tmpdir(), 'askrelay-reattach-'));
  if (!dir) dirs.push(data);
  const clock = new FakeClock(Date.now());
  const relay = await startTestRelay({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' }, data, '0', { clock });
  clocks.set(relay, clock);
  relays.push(relay);
  return relay;
}

const connect = (relay: TestRelay, path = '/mcp') => clients.connect(relay.url, relay.token, { path });

/** A call that asks for progress: its beat is armed once it waits on its card. */
const call = (client: Client, args: unknown) =>
  client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }, undefined, { timeout: 60_000, onprogress: () => {} }) as Promise<ToolResult>;

const pending = async (relay: TestRelay, provider = 'cursor') => (await relay.relay.list({ status: 'pending' })).filter((c) => c.provider === provider);

const until = <T>(what: () => T | undefined | Promise<T | undefined>, label: string): Promise<T> => waitUntil(what, label);

/** Until `n` calls wait on their cards (each has its progress beat armed). */
const waitingCalls = (relay: TestRelay, n: number) => waitUntil(() => clockOf(relay).armed(PROGRESS_MS) === n, `${n} calls waiting on their cards`);
/** Until `n` cards have a grace running (their clients went away, or a restart cut their calls off). */
const graces = (relay: TestRelay, n: number) => waitUntil(() => clockOf(relay).armed(GRACE_MS) === n, `${n} graces to start`);
const statusOf = (relay: TestRelay, id: string, want: string) =>
  waitUntil(async () => ((await relay.relay.get(id)).status === want ? true : undefined), `card ${id} to be ${want}`);

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
const OPENCLAW_DB = { id: 'db', header: 'Database', question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] };

/** A call that asked `DB` and whose client then went away: its card, once the relay noticed (its grace runs). */
async function askedThenGone(relay: TestRelay) {
  const first = await connect(relay);
  const lost = call(first.client, { questions: [DB] }).catch(() => 'gone');
  const card = await onlyPending(relay);
  await first.transport.close();
  await lost;
  await graces(relay, 1);
  return card;
}

describe('a waiting MCP call re-attaches to its card', () => {
  it('re-sent on a new MCP session after the client went away: the same card, answered once', async () => {
    const relay = await relayOn();
    const first = await connect(relay);
    const lost = call(first.client, { questions: [DB] }).catch(() => 'gone');
    const card = await onlyPending(relay);
    // Another client's call that goes away and is not re-sent: its card is cancelled when the
    // grace runs out, which shows when that has happened.
    const other = await connect(relay, '/mcp/openclaw');
    const otherLost = call(other.client, { questions: [OPENCLAW_DB] }).catch(() => 'gone');
    const sentinel = await onlyPending(relay, 'openclaw');
    await first.transport.close();
    expect(await lost).toBe('gone');
    await graces(relay, 1);
    await other.transport.close();
    expect(await otherLost).toBe('gone');
    await graces(relay, 2);

    const second = await connect(relay);
    const again = call(second.client, { questions: [DB_REORDERED] });
    await waitingCalls(relay, 1);
    clockOf(relay).advance(GRACE_MS);
    await statusOf(relay, sentinel.id, 'cancelled');
    // Past the grace the re-attached call keeps the card alive.
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
    const card = await askedThenGone(relay);
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

  it('cancelled after the grace, then answered late: the call re-sent later gets the late answer as its result, delivered to MCP', async () => {
    const relay = await relayOn();
    const card = await askedThenGone(relay);
    clockOf(relay).advance(GRACE_MS);
    await statusOf(relay, card.id, 'cancelled');
    const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } }, late: true } });
    expect(res.status).toBe(200);
    // Long after the grace: nobody took it, so it shows as not delivered, until the client comes back.
    clockOf(relay).advance(GRACE_MS);
    await waitUntil(async () => (await relay.relay.get(card.id)).delivery?.state === 'undelivered', 'undelivered');

    const second = await connect(relay);
    const result = await call(second.client, { questions: [DB] });
    expect(result.content[0].text).toBe('Which database? → SQLite');
    expect(result.structuredContent?.cardId).toBe(card.id);
    await waitUntil(async () => (await relay.relay.get(card.id)).delivery?.state === 'delivered', 'delivered');
    expect((await relay.relay.get(card.id)).delivery).toMatchObject({ to: 'mcp' });
    expect((await relay.relay.get(card.id)).status).toBe('cancelled');
  });

  it('survives a relay restart: the re-sent call finds the card on the new process; one nobody re-sends is cancelled after the grace', async () => {
    const first = await relayOn();
    const before = await connect(first);
    const lost = call(before.client, { questions: [DB] }).catch(() => 'gone');
    const card = await onlyPending(first);
    const openclaw = await connect(first, '/mcp/openclaw');
    const orphanLost = call(openclaw.client, { questions: [OPENCLAW_DB] }).catch(() => 'gone');
    const orphan = await onlyPending(first, 'openclaw');
    await first.stop();
    // The SDK client does not notice a call cut off without an answer; it gives up on it by itself.
    await before.client.close();
    await openclaw.client.close();
    expect(await lost).toBe('gone');
    expect(await orphanLost).toBe('gone');

    const second = await relayOn(first.dataDir);
    expect(second.recovered.pending).toBe(2);
    // The restart gives both cut-off calls the grace to come back.
    await graces(second, 2);
    const after = await connect(second);
    const again = call(after.client, { questions: [DB] });
    await waitingCalls(second, 1);
    clockOf(second).advance(GRACE_MS - 1);
    expect(clockOf(second).armed(GRACE_MS)).toBe(2); // not run out yet
    expect((await second.relay.get(orphan.id)).status).toBe('pending');
    clockOf(second).advance(1);
    await statusOf(second, orphan.id, 'cancelled');
    // Past the grace, the re-sent call keeps its card alive.
    expect((await pending(second)).map((c) => c.id)).toEqual([card.id]);
    await answer(second, card.id, { q1: { selected: ['SQLite'] } });
    expect((await again).content[0].text).toBe('Which database? → SQLite');
  });
});
