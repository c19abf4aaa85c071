import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { FakeClock } from '../support/fake-clock.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// MCP streams against ASKRELAY_MAX_CONNECTIONS and ASKRELAY_MCP_IDLE, over raw Streamable
// HTTP (so that each stream is opened exactly when the test says): a session's GET stream
// and every tools/call answered as a stream hold one of the caller's connections; an idle
// session is closed and its stream with it. The idle relay's clock moves only when the test
// says, so a session goes idle exactly then.

const IDLE_MS = 3_600_000;
let relay: TestRelay;
let idleRelay: TestRelay;
let idleClock: FakeClock;
const open: AbortController[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_MAX_CONNECTIONS: '3', ASKRELAY_WAIT: '1h' });
  idleClock = new FakeClock(Date.now());
  idleRelay = await startTestRelay({ ASKRELAY_MCP_IDLE: '1h', ASKRELAY_WAIT: '7d' }, undefined, '0', { clock: idleClock });
});
afterEach(() => open.splice(0).forEach((c) => c.abort()));
afterAll(async () => {
  await relay?.stop();
  await idleRelay?.stop();
});

const ACCEPT = 'application/json, text/event-stream';

function mcp(on: TestRelay, init: { method: string; session?: string; body?: unknown; token?: string }): Promise<Response> {
  const controller = new AbortController();
  open.push(controller);
  return fetch(new URL('/mcp', on.url), {
    method: init.method,
    headers: {
      authorization: `Bearer ${init.token ?? on.token}`,
      accept: init.method === 'GET' ? 'text/event-stream' : ACCEPT,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.session ? { 'mcp-session-id': init.session } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    signal: controller.signal,
  });
}

/** A new MCP session (initialize, then initialized): its id. */
async function session(on: TestRelay = relay): Promise<string> {
  const res = await mcp(on, {
    method: 'POST',
    body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '1' } } },
  });
  expect(res.status).toBe(200);
  const id = res.headers.get('mcp-session-id')!;
  await res.text();
  const ready = await mcp(on, { method: 'POST', session: id, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
  expect(ready.status).toBe(202);
  return id;
}

const askUser = (id: number, question: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'ask_user', arguments: { questions: [{ question, options: [{ label: 'Yes' }, { label: 'No' }] }] } },
});

async function expectRefused(res: Response) {
  expect(res.status).toBe(429);
  expect(await res.json()).toEqual({
    jsonrpc: '2.0',
    error: {
      code: -32000,
      message: 'You already hold 3 long-lived connections (event streams, waits, MCP streams), the most one caller may (ASKRELAY_MAX_CONNECTIONS); close one first.',
      data: { code: 'too_many_connections' },
    },
    id: null,
  });
}

/** Resolves when the response's body ends (the test's timeout says when it never does). */
async function ended(res: Response): Promise<void> {
  const reader = res.body!.getReader();
  for (;;) if ((await reader.read()).done) return;
}

const pendingCard = (on: TestRelay, text: string) =>
  waitUntil(async () => (await on.relay.list({ status: 'pending' })).find((c: Card) => c.questions[0].text === text), `the card "${text}"`);

describe('MCP streams count as long-lived connections', () => {
  it('GET streams and waiting tools/calls hold the MCP client’s slots; the next is 429; the human is unaffected', async () => {
    const [a, b, c, d] = [await session(), await session(), await session(), await session()];
    expect((await mcp(relay, { method: 'GET', session: a })).status).toBe(200);
    expect((await mcp(relay, { method: 'GET', session: b })).status).toBe(200);
    const call = await mcp(relay, { method: 'POST', session: c, body: askUser(1, 'Deploy?') });
    expect(call.status).toBe(200);
    const card = await pendingCard(relay, 'Deploy?');

    const fourth = await mcp(relay, { method: 'GET', session: d });
    if (fourth.status !== 429) {
      // Which of the three let go of its slot (a CI run once saw a 200 here, never reproduced).
      const still = (res: Response) => Promise.race([res.clone().text().then((t) => `ended: ${t.slice(0, 300)}`), new Promise<string>((r) => setTimeout(() => r('open'), 500))]);
      throw new Error(`the fourth stream got ${fourth.status}, not 429; the call's stream: ${await still(call)}`);
    }
    await expectRefused(fourth);
    await expectRefused(await mcp(relay, { method: 'POST', session: d, body: askUser(2, 'Refused?') }));
    // Requests that end at once are not long-lived: still answered.
    const list = await mcp(relay, { method: 'POST', session: d, body: { jsonrpc: '2.0', id: 3, method: 'tools/list' } });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('ask_user');
    // The human (the relay token on the API) is another principal than the MCP client it makes.
    const human = new AbortController();
    open.push(human);
    const events = await fetch(new URL('/api/events', relay.url), { headers: { authorization: `Bearer ${relay.token}` }, signal: human.signal });
    expect(events.status).toBe(200);
    expect((await fetch(new URL('/api/health', relay.url))).status).toBe(200);

    // An answered call ends its stream and gives its slot back.
    expect((await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } })).status).toBe(200);
    expect(await call.text()).toContain('Yes');
    await waitUntil(async () => (await mcp(relay, { method: 'GET', session: d })).status === 200, 'a GET stream once the call ended');
  });

  it('a closed GET stream gives its slot back', async () => {
    const ids = [await session(), await session(), await session(), await session()];
    const held: AbortController[] = [];
    for (const id of ids.slice(0, 3)) {
      await waitUntil(async () => (await mcp(relay, { method: 'GET', session: id })).status === 200, 'a GET stream');
      held.push(open.at(-1)!);
    }
    await expectRefused(await mcp(relay, { method: 'GET', session: ids[3] }));
    held[0].abort();
    await waitUntil(async () => (await mcp(relay, { method: 'GET', session: ids[3] })).status === 200, 'the freed slot');
  });
});

describe('ASKRELAY_MCP_IDLE', () => {
  it('closes a session idle past it, ending its GET stream', async () => {
    const id = await session(idleRelay);
    const stream = await mcp(idleRelay, { method: 'GET', session: id });
    expect(stream.status).toBe(200);
    // The stream ends when the relay closes the idle session.
    const closed = ended(stream);
    idleClock.advance(2 * IDLE_MS);
    await closed;
    const after = await mcp(idleRelay, { method: 'POST', session: id, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(after.status).toBe(404);
  });

  it('keeps a session whose call is still waiting, however long', async () => {
    const id = await session(idleRelay);
    const call = await mcp(idleRelay, { method: 'POST', session: id, body: askUser(1, 'Still there?') });
    expect(call.status).toBe(200);
    const card = await pendingCard(idleRelay, 'Still there?');
    // A session opened after the call's last request, with nothing running: closed by the same
    // sweep that would close the call's session, which shows when that sweep has run.
    const idle = await mcp(idleRelay, { method: 'GET', session: await session(idleRelay) });
    expect(idle.status).toBe(200);
    const idleClosed = ended(idle);
    // Three idle periods pass with the call open.
    idleClock.advance(3 * IDLE_MS);
    await idleClosed;
    const list = await mcp(idleRelay, { method: 'POST', session: id, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } });
    expect(list.status).toBe(200);
    await idleRelay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['No'] } } } });
    expect(await call.text()).toContain('No');
  });
});
