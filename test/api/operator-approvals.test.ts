import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { mcpClients, startEchoRelay, type ToolResult } from '../support/mcp-tools.js';
import type { TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// An approval card whose Approve uses the operator's power (the relay tool's start_session,
// raised by a real MCP SDK client) is the operator's to answer, or a person's its route names:
// any other person is 403 operator_only, as on POST /api/sessions, and the card stays
// pending. Two nodes: the requests spread over both (ASKRELAY_TEST_NODES=2).

let echo: Awaited<ReturnType<typeof startEchoRelay>>;
let relay: TestRelay;
const clients = mcpClients('operator-approvals-test');
const tokens: Record<string, string> = {};

beforeAll(async () => {
  echo = await startEchoRelay();
  relay = echo.relay;
  for (const name of ['ada', 'bob']) {
    const res = await relay.api('/api/users', { method: 'POST', json: { name } });
    tokens[name] = ((await res.json()) as { token: string }).token;
  }
});
afterEach(async () => {
  await clients.closeAll();
  await relay.api('/api/routes', { method: 'PUT', json: { routes: [] } });
});
afterAll(() => echo?.stop());

const as = (name: string, path: string, json?: unknown) =>
  relay.api(path, { method: 'POST', headers: { authorization: `Bearer ${tokens[name]}` }, ...(json !== undefined ? { json } : {}) });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

/** A start_session call from an MCP client of the operator's token, and the approval card it raised. */
async function startSessionCall(prompt: string): Promise<{ result: Promise<ToolResult>; card: Card }> {
  const { client } = await clients.connect(relay.url, relay.token);
  const result = (client as Client).callTool({ name: 'start_session', arguments: { provider: 'claude', engine: 'messages', prompt } }) as Promise<ToolResult>;
  const card = await waitUntil(
    async () => (await relay.relay.list({ status: 'pending' })).find((c) => c.tool === 'start_session' && c.questions[0].text.endsWith(`> ${prompt}`)),
    'the approval card',
  );
  return { result, card };
}

const approve = { answers: { approve: { selected: ['Approve'] } } };

describe('approval cards that grant the operator power', () => {
  it("a person may not answer, reply to or skip start_session's card (403 operator_only, audited); the operator's Approve starts it", async () => {
    const before = (await relay.sessions.list()).length;
    const { result, card } = await startSessionCall('from a person?');
    const message = `Card ${card.id} approves start_session, which only the operator may do; only the operator (or a person its route names) can answer it.`;
    for (const res of [
      await as('bob', `/api/cards/${card.id}/answer`, approve),
      await as('bob', `/api/cards/${card.id}/reply`, { text: 'Approve' }),
      await as('bob', `/api/cards/${card.id}/answer`, { answers: { approve: { selected: ['Deny'] } } }),
      await as('bob', `/api/cards/${card.id}/skip`),
    ]) {
      expect(res.status).toBe(403);
      expect(await errorOf(res)).toEqual({ code: 'operator_only', message });
    }
    expect((await relay.relay.get(card.id)).status).toBe('pending');
    expect((await relay.sessions.list()).length).toBe(before);
    const entries = ((await (await relay.api('/api/audit?limit=10000')).json()) as { entries: AuditEntry[] }).entries;
    expect(entries.filter((e) => e.cardId === card.id && e.event === 'card.refused' && e.actor.id === 'bob').length).toBe(4);

    // A person still answers every other card, approvals included.
    const other = await relay.relay.create({ kind: 'approval', tool: 'ExitPlanMode', questions: [{ id: 'ok', text: 'Go on?', options: ['Approve', 'Deny'] }] });
    expect((await as('bob', `/api/cards/${other.id}/answer`, { answers: { ok: { selected: ['Approve'] } } })).status).toBe(200);

    const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: approve });
    expect(res.status).toBe(200);
    expect((await result).content[0].text).toMatch(/^The human approved\. Started session s_\w+/);
    expect((await relay.sessions.list()).length).toBe(before + 1);
  });

  it('a person its route names may answer it; another person still may not', async () => {
    const put = await relay.api('/api/routes', { method: 'PUT', json: { routes: [{ name: 'starts', match: { tool: 'start_session' }, to: ['ada'] }] } });
    expect(put.status).toBe(200);
    const { result, card } = await startSessionCall('from ada');
    expect(card.routedTo).toEqual(['ada']);
    const refused = await as('bob', `/api/cards/${card.id}/answer`, approve);
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe('operator_only');
    const res = await as('ada', `/api/cards/${card.id}/reply`, { text: 'Approve' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'ada', surface: 'api' });
    expect((await result).content[0].text).toMatch(/^The human approved\. Started session s_\w+/);
  });

  it('a restricted route: the person it names answers, the others do not even see the card', async () => {
    await relay.api('/api/routes', { method: 'PUT', json: { routes: [{ name: 'starts', match: { tool: 'start_session' }, to: ['ada'], restrict: true }] } });
    const { result, card } = await startSessionCall('restricted to ada');
    expect((await as('bob', `/api/cards/${card.id}/answer`, approve)).status).toBe(404);
    expect((await as('ada', `/api/cards/${card.id}/answer`, approve)).status).toBe(200);
    expect((await result).isError).toBeFalsy();
  });
});
