import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Relay } from '../../src/relay/relay.js';
import type { Session } from '../../src/sessions/model.js';
import { lastUserText, startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import type { FakeClock } from './fake-clock.js';
import { startTestRelay, type TestRelay } from './running-relay.js';
import { waitUntil } from './wait-until.js';

/** What /mcp and /mcp/openclaw list: the dialect's ask_user, then the relay tool. */
export const MCP_TOOLS = ['ask_user', 'list_questions', 'answer_question', 'start_session', 'watch_session'];

/** A tool result as the SDK client hands it over. */
export type ToolResult = { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

/**
 * Real MCP SDK clients of one test file over Streamable HTTP, each connected (initialized) to
 * `path` of a relay with `token` (none: no Authorization header). closeAll() goes in afterEach.
 */
export function mcpClients(name: string) {
  const open: Client[] = [];
  return {
    async connect(url: string | URL, token: string | undefined, { path = '/mcp', fetch }: { path?: string; fetch?: typeof globalThis.fetch } = {}) {
      const client = new Client({ name, version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(path, url), {
        requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
        ...(fetch ? { fetch } : {}),
      });
      await client.connect(transport);
      open.push(client);
      return { client, transport };
    },
    closeAll: () => Promise.all(open.splice(0).map((c) => c.close().catch(() => {}))),
  };
}

/**
 * A relay with sessions to be agents of: their Claude model (the messages engine, on a fake
 * that answers "ok: <prompt>") just says something, so they go idle and keep valid agent tokens.
 */
/**
 * The MCP timings the MCP tests move their fake clocks by, given to the relay explicitly
 * (they equal the defaults; a test must not depend on that).
 */
export const MCP_TIMING_ENV = { ASKRELAY_MCP_PROGRESS: '30s', ASKRELAY_MCP_GRACE: '60s' };

export async function startEchoRelay(extra: Parameters<typeof startTestRelay>[3] = {}) {
  const fake: AnthropicServer = await startAnthropicServer({ model: (request) => ({ text: `ok: ${lastUserText(request)}` }) });
  const relay = await startTestRelay({ ...MCP_TIMING_ENV, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' }, undefined, '0', extra);
  /** A new session, once it is idle. */
  const idleSession = async (agentsMayAnswer = false): Promise<Session> => {
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'hello', agentsMayAnswer } });
    expect(res.status).toBe(201);
    const started = (await res.json()) as Session;
    await waitUntil(async () => (await relay.sessions.get(started.id)).status === 'idle', 'the session to go idle');
    return started;
  };
  return {
    relay,
    idleSession,
    /** A new idle session's agent token: a principal of its own (the operator's token is the MCP agent "mcp"). */
    agentToken: async () => relay.sessions.agentToken((await idleSession()).id),
    async stop() {
      await relay.stop();
      await fake.close();
    },
  };
}

/** Until `n` timers of exactly `ms` are armed on `clock` (calls waiting with a progress beat, graces running). */
export const armed = (clock: FakeClock, ms: number, n: number, what: string) => waitUntil(() => clock.armed(ms) === n, what);

/**
 * The cards a provider asks through /mcp, in turn: each call polls `relay` (every 20 ms, at most
 * `tries` times) for a pending card of `provider` that no earlier call returned.
 */
export function cardsAskedBy(provider: Card['provider'], tries: number): (relay: Relay) => Promise<Card> {
  const seen = new Set<string>();
  return async (relay) => {
    for (let i = 0; i < tries; i++) {
      const card = (await relay.list({ status: 'pending' })).find((c) => c.provider === provider && !seen.has(c.id));
      if (card) {
        seen.add(card.id);
        return card;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('no card was asked');
  };
}
