import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { mcpClients, startEchoRelay, type ToolResult } from '../support/mcp-tools.js';
import { waitUntil } from '../support/wait-until.js';

// A card an agent asks over /mcp with its session's token carries the session's labels, under
// its own, and is routed by them (docs/routing.md), like the cards the session's own runner asks.

let echo: Awaited<ReturnType<typeof startEchoRelay>>;
const clients = mcpClients('routing-mcp-test');

beforeAll(async () => {
  echo = await startEchoRelay();
  expect((await echo.relay.api('/api/users', { method: 'POST', json: { name: 'ada' } })).status).toBe(201);
  const routes = [{ name: 'payments', match: { labels: { team: 'payments' } }, to: ['ada'] }];
  expect((await echo.relay.api('/api/routes', { method: 'PUT', json: { routes } })).status).toBe(200);
});
afterEach(() => clients.closeAll());
afterAll(() => echo?.stop());

it('an agent asking over /mcp with its session token: the card inherits the session\'s labels and follows its route', async () => {
  const res = await echo.relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'hello', labels: { team: 'payments', env: 'prod' } } });
  const session = (await res.json()) as Session;
  await waitUntil(async () => (await echo.relay.sessions.get(session.id)).status === 'idle', 'the session to go idle');
  const { client } = await clients.connect(echo.relay.url, echo.relay.sessions.agentToken(session.id));
  const call = client.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Ship on Friday?', options: [{ label: 'Yes' }, { label: 'No' }] }] } }) as Promise<ToolResult>;
  const card = await waitUntil(async () => (await echo.relay.relay.list({ status: 'pending' })).find((c: Card) => c.sessionId === session.id), 'the card');
  expect(card.labels).toEqual({ team: 'payments', env: 'prod' });
  expect(card).toMatchObject({ route: 'payments', routedTo: ['ada'] });
  await echo.relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { [card.questions[0].id]: { selected: ['Yes'] } } } });
  expect(JSON.stringify((await call).content)).toContain('Yes');
});
