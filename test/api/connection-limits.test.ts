import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { serveConfig } from '../../src/config.js';
import { HUMAN_OPERATOR } from '../../src/relay/access.js';
import { ConnectionLimit } from '../../src/server/connection-limit.js';
import type { Session } from '../../src/sessions/model.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// ASKRELAY_MAX_CONNECTIONS over a real relay: each principal (the human, each session's
// agent) may hold that many long-lived connections (event streams, /wait long polls) at
// once; the next is 429 too_many_connections, and one principal at its cap takes nothing
// from another or from /api/health.

let fake: AnthropicServer;
let relay: TestRelay;
const open: AbortController[] = [];

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  relay = await startTestRelay({ ASKRELAY_MAX_CONNECTIONS: '3', ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy' });
});
afterEach(() => open.splice(0).forEach((c) => c.abort()));
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

/** A new session's agent token: a principal that holds nothing yet. */
async function freshAgent(): Promise<string> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt: 'hello' } });
  expect(res.status).toBe(201);
  return relay.sessions.agentToken(((await res.json()) as Session).id);
}

/** GET with a token; the response stays open (an event stream, a long poll) until aborted. */
async function get(token: string, path: string): Promise<Response> {
  const controller = new AbortController();
  open.push(controller);
  const res = await fetch(new URL(path, relay.url), { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  return res;
}
const stream = (token: string) => get(token, '/api/events');

/**
 * Three event streams of `token`, held. The relay gives a slot back when it sees a stream
 * close, a moment after the client aborted it: a stream an earlier test closed may still
 * count, so this tries again until all three are taken.
 */
async function holdAll(token: string): Promise<void> {
  await waitUntil(async () => {
    const before = open.length;
    const mine: Response[] = [];
    for (let i = 0; i < 3; i++) mine.push(await stream(token));
    if (mine.every((r) => r.status === 200)) return true;
    open.splice(before).forEach((c) => c.abort());
    return false;
  }, 'three streams');
}

async function expectRefused(res: Response) {
  expect(res.status).toBe(429);
  expect(await res.json()).toEqual({
    error: {
      code: 'too_many_connections',
      message: 'You already hold 3 long-lived connections (event streams, waits, MCP streams), the most one caller may (ASKRELAY_MAX_CONNECTIONS); close one first.',
    },
  });
}

describe('long-lived connections per principal', () => {
  it('takes three event streams, refuses the fourth with 429, and /api/health still answers', async () => {
    await holdAll(relay.token);
    await expectRefused(await stream(relay.token));
    const health = await fetch(new URL('/api/health', relay.url));
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
  });

  it('gives the slots back when streams close: after closing them all, new ones are taken', async () => {
    const agent = await freshAgent();
    for (let i = 0; i < 3; i++) expect((await stream(agent)).status).toBe(200);
    await expectRefused(await stream(agent));
    open.splice(0).forEach((c) => c.abort());
    await holdAll(agent);
    await expectRefused(await stream(agent));
  });

  it('an agent at its cap takes nothing from the human', async () => {
    const agent = await freshAgent();
    for (let i = 0; i < 3; i++) expect((await stream(agent)).status).toBe(200);
    await expectRefused(await stream(agent));
    // The human's own three are all there.
    await holdAll(relay.token);
    await expectRefused(await stream(relay.token));
    // And the agent is still at its cap.
    await expectRefused(await stream(agent));
    expect((await fetch(new URL('/api/health', relay.url))).status).toBe(200);
  });

  it('counts /wait long polls with the streams, and frees them when they end', async () => {
    const agent = await freshAgent();
    const res = await fetch(new URL('/api/cards', relay.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
      body: JSON.stringify({ questions: [{ text: 'Mine?' }] }),
    });
    expect(res.status).toBe(201);
    const card = (await res.json()) as Card;
    for (let i = 0; i < 2; i++) expect((await stream(agent)).status).toBe(200);
    // Two waits at once for the one slot left: whichever comes second is refused at once,
    // the other holds it until its timeout (204).
    const waits = await Promise.all([0, 1].map(() => get(agent, `/api/cards/${card.id}/wait?timeout=0.3`)));
    expect(waits.map((r) => r.status).sort()).toEqual([204, 429]);
    await expectRefused(waits.find((r) => r.status === 429)!);
    // The wait that ended gave its slot back.
    await waitUntil(async () => (await get(agent, `/api/cards/${card.id}/wait?timeout=0.05`)).status === 204, 'a wait after the first ended');
    // Four waits and no streams: three hold, one is refused.
    open.splice(0).forEach((c) => c.abort());
    const other = await freshAgent();
    const created = await fetch(new URL('/api/cards', relay.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${other}`, 'content-type': 'application/json' },
      body: JSON.stringify({ questions: [{ text: 'Mine too?' }] }),
    });
    const second = (await created.json()) as Card;
    const four = await Promise.all([0, 1, 2, 3].map(() => get(other, `/api/cards/${second.id}/wait?timeout=0.3`)));
    expect(four.map((r) => r.status).sort()).toEqual([204, 204, 204, 429]);
  });
});

describe('ASKRELAY_MAX_CONNECTIONS', () => {
  it('defaults to 1000 and refuses anything but a whole number of at least 1, naming the variable', () => {
    expect(serveConfig({}, {}).maxConnections).toBe(1000);
    expect(serveConfig({}, { ASKRELAY_MAX_CONNECTIONS: '25' }).maxConnections).toBe(25);
    for (const bad of ['0', '-3', '2.5', 'many', '']) {
      expect(() => serveConfig({}, { ASKRELAY_MAX_CONNECTIONS: bad })).toThrow(`ASKRELAY_MAX_CONNECTIONS: "${bad}" is not a whole number of at least 1.`);
    }
  });

  it('counts per principal and gives a slot back once, however often its release is called', () => {
    const limit = new ConnectionLimit(2);
    const human = HUMAN_OPERATOR('web');
    const agent = { kind: 'agent' as const, id: 's_1', sessionId: 's_1', surface: 'api' };
    const first = limit.acquire(human)!;
    limit.acquire(human);
    expect(limit.acquire(human)).toBeUndefined();
    // The same human on another surface is the same principal.
    expect(limit.acquire(HUMAN_OPERATOR('cli'))).toBeUndefined();
    expect(limit.acquire(agent)).toBeDefined();
    first();
    first();
    expect(limit.count(human)).toBe(1);
  });
});
